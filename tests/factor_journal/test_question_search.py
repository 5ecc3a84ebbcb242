"""Which factors a question found by meaning is about (``questions.search``, pure): the journal's hits weighed with
the catalog's likelihood, and what was said about a factor in the catalog's own words."""

from __future__ import annotations

from factor_journal.questions.search import choose_factors, speaks_of


def test_the_journal_and_the_catalog_are_weighed_together_and_weak_hits_are_not_evidence():
    hits = [("budget", 0.30), ("sponsor", 0.25), ("budget", 0.22), ("staff", 0.12)]
    likely_sponsor = {"sponsor": 0.8, "budget": 0.1}
    assert choose_factors(hits, likely_sponsor, own_words=False) == ["sponsor"]  # 0.65 against 0.35: no tie
    leaning = {"sponsor": 0.3, "budget": 0.1}
    assert choose_factors(hits, leaning, own_words=False) == ["sponsor", "budget"]  # 0.40 and 0.35: a near tie
    assert choose_factors(hits, leaning, own_words=False, limit=1) == ["sponsor"]
    assert choose_factors(hits, likely_sponsor, own_words=True) == ["budget", "sponsor"]  # about the words only
    assert choose_factors(hits, {}, own_words=False) == ["budget", "sponsor"]  # no catalog view: nearest first
    assert choose_factors(hits, {"staff": 0.2, "budget": 0.2}, own_words=False) == ["budget"]  # others too far
    # a clearly closer entry is not outweighed by a merely likely factor
    assert choose_factors([("budget", 0.45), ("sponsor", 0.2)], {"sponsor": 0.2}, own_words=False) == ["budget"]
    assert choose_factors([("budget", 0.15)], {"budget": 1.0}, own_words=False) == []  # below the floor
    below = [("budget", 0.25), ("sponsor", 0.17)]  # a near tie below the floor: the best one reaches it
    assert choose_factors(below, {"sponsor": 0.1}, own_words=False) == ["budget", "sponsor"]
    assert choose_factors([], {"budget": 1.0}, own_words=False) == []


def test_what_was_said_speaks_of_a_factor_in_the_catalogs_own_words(catalog):
    """The second reading that lets an answer recorded under another factor be cited for one with nothing recorded:
    every content word of one of the factor's cue phrases, in any order."""
    said = "All over the place, but management just approved a budget to pull it all into a cloud warehouse."
    assert speaks_of(catalog, "budget_commitment", said)  # "budget approved"
    assert not speaks_of(catalog, "budget_commitment", "We approved the new supplier last week.")
    assert not speaks_of(catalog, "data_security", "The secretary opens it in the case-management software.")


def test_an_answer_that_fed_entries_counts_as_a_hit_on_them_at_its_closest():
    from datetime import UTC, datetime

    from factor_journal.questions.search import with_answers
    from factor_journal.repositories.vectors import AnswerHit, VectorHit

    said = datetime(2026, 3, 9, tzinfo=UTC)
    hits = [VectorHit("e1", "data_quality", 0.5), VectorHit("e2", "staff_capacity", 0.6)]
    answers = [
        AnswerHit("a1", "s", "t1", said, {"e1": "data_quality", "e3": "sensor_data"}, 0.3),  # closer than e1's own
        AnswerHit("a2", "s", "t2", said, {"e2": "staff_capacity"}, 0.9),  # farther than e2's own: e2 stays at 0.6
        AnswerHit("a3", "s", "t3", said, {}, 0.1),  # fed nothing: never a hit on an entry
    ]
    merged = with_answers(hits, answers)
    assert [(h.entry_id, h.factor_id, h.distance) for h in merged] == [
        ("e1", "data_quality", 0.3),
        ("e3", "sensor_data", 0.3),
        ("e2", "staff_capacity", 0.6),
    ]
    assert with_answers(hits, []) == hits
