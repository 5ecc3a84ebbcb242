"""What is embedded for a journal entry (pure)."""

from __future__ import annotations

from datetime import UTC, datetime

from factor_journal.embedding import entry_said, said_text, spoken_lines, text_digest
from factor_journal.folding import COMBINED_MARK
from factor_journal.models import EntryKind, InferenceStatus, JournalEntry, Source

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
