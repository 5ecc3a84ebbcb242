"""The few words of an answer a reading rests on: always the person's own, short (pure)."""

from __future__ import annotations

import pytest

from factor_journal.extraction.quotes import (
    MAX_QUOTE_CHARS,
    MAX_QUOTE_WORDS,
    clause_about,
    narrowed,
    quote_for,
    shorten,
    verbatim,
)
from factor_journal.models import SaidIn


@pytest.mark.parametrize(
    ("quote", "answer", "found"),
    [
        ("numbers never match", "Honestly? The numbers never match between systems.", "numbers never match"),
        ("NUMBERS  never\nmatch", "The numbers never match.", "numbers never match"),  # case and spacing
        ("it’s a mess", "Frankly it's a mess, all of it", "it's a mess"),  # typographic quotes
        ('"a mess."', "It is a mess.", "a mess"),  # edge punctuation
        ("numbers are perfect", "The numbers never match.", None),  # not what was said: never put in their mouth
        ("", "anything", None),
        ("a", "a b c", None),
    ],
)
def test_a_proposed_quote_is_kept_only_as_the_answer_says_it(quote, answer, found):
    assert verbatim(quote, answer) == found


def test_a_quote_is_a_few_words():
    long = " ".join(f"word{i}" for i in range(30))
    assert shorten(long) == " ".join(long.split()[:MAX_QUOTE_WORDS]) + "…"  # cut, and marked as cut
    assert shorten("  short one.  ") == "short one"


UNBROKEN = {
    "path": "ERP/CRM/MES/" * 120,
    "url": "https://example.com/" + "a" * 3000,
    "chinese": "我们的数据质量很差" * 200,
    "long words": " ".join(["Datenqualitätsverbesserungsmaßnahmenkatalog"] * 12),
}


@pytest.mark.parametrize("text", UNBROKEN.values(), ids=UNBROKEN.keys())
def test_a_quote_never_exceeds_its_characters_even_without_spaces(text):
    short = shorten(text)
    assert len(short) <= MAX_QUOTE_CHARS and short.endswith("…")
    assert text.startswith(short.removesuffix("…").split()[0])  # the start of their own words
    assert shorten(short) == short  # shortening again changes nothing
    SaidIn(words=short)  # a person's decision can always carry it


def test_a_cut_by_characters_falls_between_words_when_there_are_some():
    text = "our " + "very " * 40 + "messy data"  # 12 words first: still over 30 characters
    assert shorten(text, max_chars=30) == "our very very very very very…"
    assert shorten("see " + "x" * 300, max_chars=30) == "see " + "x" * 25 + "…"  # "see…" would say nothing
    assert shorten("a" * 30, max_chars=30) == "a" * 30  # exactly the bound: not cut
    assert shorten("aaa bbb ccc", max_chars=8) == "aaa bbb…"  # a last word that just fits stays
    assert shorten("aaa bbbb ccc", max_chars=8) == "aaa…"  # one that does not fit goes whole


def test_a_quote_loses_its_edge_punctuation_and_never_runs_over_its_characters():
    assert shorten('"We have four systems."') == "We have four systems"  # the page puts its own marks round it
    line = 'User said "We have four separate systems" (roughly).'
    assert shorten(line, max_chars=18) == 'User said "We…'  # 18 at most, its "…" included; no mark added to close
    assert shorten(line, max_words=3) == 'User said "We…'  # words are bounded too


@pytest.mark.parametrize("answer", UNBROKEN.values(), ids=UNBROKEN.keys())
def test_the_quote_of_an_answer_without_spaces_is_bounded(answer, catalog):
    quality = catalog.factor("data_quality")
    for proposed in ("", answer, answer[:50]):
        assert 0 < len(quote_for(answer, proposed, quality)) <= MAX_QUOTE_CHARS


def test_without_a_usable_quote_the_clause_most_about_the_factor_is_taken(catalog):
    answer = "The dashboards look lovely, but the data underneath is duplicated and nobody trusts it."
    quality = catalog.factor("data_quality")
    assert "duplicated" in clause_about(answer, quality)
    assert quote_for(answer, "something the model made up", quality) == "nobody trusts it"
    assert quote_for(answer, "nobody trusts it", quality) == "nobody trusts it"
    assert quote_for("", "", quality) == ""


def test_a_long_quote_is_narrowed_to_the_phrase_about_the_factor(catalog):
    answer = "The dashboards look great, but the numbers under them are a mess and we have no data scientists at all."
    clause = "the numbers under them are a mess and we have no data scientists at all."
    assert quote_for(answer, clause, catalog.factor("data_quality")) == "the numbers under them are a mess"
    assert quote_for(answer, clause, catalog.factor("ml_expertise")) == "we have no data scientists at all"
    assert narrowed("numbers never match", catalog.factor("data_quality")) == "numbers never match"  # short enough
