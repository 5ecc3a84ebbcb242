"""What is embedded for a journal entry, and how the semantic second chance chooses factors (pure)."""

from __future__ import annotations

from datetime import UTC, datetime

from factor_journal.embedding import entry_said, said_text, spoken_lines, text_digest
from factor_journal.folding import COMBINED_MARK
from factor_journal.models import EntryKind, InferenceStatus, JournalEntry, Source
from factor_journal.questions import choose_factors, question_topic

NOW = datetime(2026, 3, 14, 9, 30, tzinfo=UTC)
EXCERPT = "Assistant: Hello\nUser: hi\nAssistant: Who keeps the vans running?\nUser: Nobody, the vans just break."


def entry(**fields: object) -> JournalEntry:
    base = dict(
        entry_id="e1",
        user_id="u1",
        factor_id="maintenance_practice",
        kind=EntryKind.inferred,
        source=Source.llm,
        previous_value=None,
        new_value=20.0,
        change_rationale="reads as low",
        conversation_excerpt=EXCERPT,
        confidence=0.7,
        observed_at=NOW,
        recorded_at=NOW,
        applied=True,
        effective=True,
        value_after=20.0,
        confidence_after=0.7,
        status_after=InferenceStatus.unconfirmed,
    )
    return JournalEntry.model_validate(base | fields)


def test_the_embedded_text_is_the_question_asked_the_answer_and_the_rationale():
    assert spoken_lines(EXCERPT) == ("Who keeps the vans running?", "Nobody, the vans just break.")
    assert (
        said_text(EXCERPT, "reads as low") == "Who keeps the vans running?\nNobody, the vans just break.\nreads as low"
    )
    quoting = 'User said "Nobody, the vans just break." (answering ...): reads as low'
    assert said_text(EXCERPT, quoting) == "Who keeps the vans running?\nNobody, the vans just break."
    assert said_text("", "We hired a data engineer") == "We hired a data engineer"
    assert said_text("", "") == ""


def test_an_entry_keeps_its_text_when_a_refold_combines_its_rationale():
    plain = entry()
    combined = entry(change_rationale="reads as low" + COMBINED_MARK + "2 earlier readings)")
    assert entry_said(plain) == entry_said(combined)
    assert entry_said(entry(reading_rationale="reads as low", change_rationale="other")) == entry_said(plain)
    assert text_digest(entry_said(plain) or "") == text_digest(entry_said(combined) or "")


def test_entries_without_words_get_no_text():
    assert entry_said(entry(kind=EntryKind.confirmed, source=Source.user, conversation_excerpt="")) is None
    assert entry_said(entry(kind=EntryKind.derived, source=Source.system, conversation_excerpt="")) is None
    assert entry_said(entry(kind=EntryKind.retracted, source=Source.system, conversation_excerpt="")) is None
    said = entry_said(
        entry(
            kind=EntryKind.corrected,
            source=Source.user,
            conversation_excerpt="",
            change_rationale="We hired two analysts",
        )
    )
    assert said == "We hired two analysts"


def test_the_topic_of_a_question_about_ones_own_words_drops_the_frame():
    assert question_topic("What did I say about the delivery vans?") == "the delivery vans"
    assert question_topic("What did I tell you about the spreadsheets?") == "the spreadsheets"
    assert question_topic("Did I mention anything about our mechanic?") == "our mechanic"
    assert question_topic("Why are the figures late?") == "Why are the figures late"


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
