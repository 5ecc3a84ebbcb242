import numpy as np

from factor_journal.extraction.lexical import LexicalIndex, terms


def content_words(text):
    """The single words among a text's terms (the rest are word pairs)."""
    return [term for term in terms(text) if "+" not in term]


def test_content_words_drop_stop_words_numbers_and_fold_plurals():
    assert content_words("We've got 5 systems and the system isn't documented.") == [
        "weve",
        "system",
        "system",
        "isnt",
        "documented",
    ]
    assert content_words("") == []


def test_terms_add_neighbouring_word_pairs_unless_both_are_stop_words():
    assert terms("No money set aside.") == ["money", "set", "aside", "no+money", "money+set", "set+aside"]
    assert "of+the" not in terms("Most of the data")


def test_rare_shared_words_make_texts_close():
    index = LexicalIndex(
        [
            "There is no budget set aside for AI this year.",
            "The budget for the new warehouse was signed off by the board.",
            "Our data is spread over five systems and nobody trusts it.",
            "The board meets every month and reviews the systems.",
        ]
    )
    sims = index.similarities("Nothing is set aside; every licence needs the board to sign off.")
    assert sims.shape == (4,)
    assert sims.argmax() in (0, 1)
    assert sims[2] == 0.0  # no counted word in common
    assert np.all((sims >= 0) & (sims <= 1.0 + 1e-6))
    assert index.similarities("Lovely weather today!").sum() == 0.0


def test_a_text_is_most_similar_to_itself():
    texts = ["The planner forecasts in a spreadsheet", "The spreadsheet planner forecasts weekly"]
    index = LexicalIndex(texts)
    assert np.isclose(index.similarities(texts[0])[0], 1.0, atol=1e-5)
