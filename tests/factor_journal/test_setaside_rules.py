"""What is set aside and how (``factor_journal.setaside``), without Firestore: per kind of document, the reader
that finds it damaged; a journal read that folds without a damaged entry and lists it once; records that keep what
the document held and are the same record for the same damage."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from factor_journal.conversation import InvalidTurnError, parse_turn
from factor_journal.documents import SessionDocument
from factor_journal.models import JournalEntry
from factor_journal.planner import DamagedFactorError, DamagedSummaryError, stored_factor, stored_summary
from factor_journal.rollup import PersonRow
from factor_journal.setaside import (
    MARK,
    DocumentKind,
    describe,
    distinct,
    listed_after,
    read_journal,
    set_aside,
)

NOW = datetime(2026, 3, 14, 9, 30, tzinfo=UTC)
SEED = {"new_value": 20}  # the journal entry a rules test seeded: it made every later turn fail


def entry(entry_id: str, value: float = 20.0) -> dict:
    return JournalEntry(
        entry_id=entry_id,
        user_id="u1",
        factor_id="data_quality",
        kind="inferred",
        source="llm",
        previous_value=None,
        new_value=value,
        confidence=0.7,
        applied=True,
        effective=True,
        value_after=value,
        confidence_after=0.7,
        status_after="unconfirmed",
        change_rationale="said so",
        observed_at=NOW,
        recorded_at=NOW,
    ).to_document()


def test_the_seeded_entry_is_described_by_count_model_and_first_problems():
    with pytest.raises(ValidationError) as error:
        JournalEntry.model_validate(SEED)
    text = describe(error.value)
    assert text.startswith(f"{error.value.error_count()} invalid field(s) of JournalEntry: ")
    assert "entry_id (Field required)" in text and text.endswith(f"and {error.value.error_count() - 4} more")


def test_a_journal_is_read_without_its_damaged_entries_and_each_is_found_once():
    documents = [
        ("users/u1/factors/data_quality/journal/a", entry("a")),
        ("users/u1/factors/data_quality/journal/seeded", SEED),
        ("users/u1/factors/data_quality/journal/marked", {**SEED, MARK: {"at": NOW, "error": "…"}}),
        ("users/u1/factors/data_quality/journal/mended", {**entry("mended", 30), MARK: {"at": NOW, "error": "…"}}),
    ]
    read = read_journal("u1", documents, NOW)
    assert [e.entry_id for e in read.entries] == ["a", "mended"]  # a mended entry reads again, mark or not
    [found] = read.found  # the marked one was set aside before: passed over, not listed again
    assert (found.kind, found.path, found.stored, found.found_at) == (
        DocumentKind.journal_entry,
        "users/u1/factors/data_quality/journal/seeded",
        SEED,
        NOW,
    )
    assert read.passed_over == 1
    assert found.marked_in_place and found.mark() == {"at": NOW, "error": found.error}


@pytest.mark.parametrize(
    ("kind", "read", "damaged", "sound"),
    [
        (DocumentKind.journal_entry, JournalEntry.model_validate, SEED, entry("a")),
        (DocumentKind.factor, stored_factor, {"factor_id": "data_quality", "current_value": 20}, None),
        (DocumentKind.summary, stored_summary, {"overall": {}}, None),
        (DocumentKind.session, lambda d: SessionDocument.of("s1", d), {"usage": "lots"}, {"analysed_turns": 2}),
        (DocumentKind.turn, lambda d: parse_turn("t1", d), {"role": "user", "text": 42}, None),
        (DocumentKind.rollup_row, PersonRow.model_validate, {"completeness": "most"}, {"user_id": "u1"}),
    ],
)
def test_each_kind_of_document_is_found_damaged_by_its_reader(kind, read, damaged, sound):
    """The decision to set a document aside is its own reader's refusal (a missing field, a wrong type); a
    document that reads is never set aside."""
    with pytest.raises((ValidationError, DamagedFactorError, DamagedSummaryError, InvalidTurnError)):
        read(damaged)
    if sound is not None:
        read(sound)
    record = set_aside("u1", kind, f"users/u1/{kind}", damaged, "does not read", NOW)
    assert record.stored == damaged and record.marked_in_place == (kind in ("journal_entry", "turn"))


def test_a_record_is_the_same_for_the_same_damage_and_another_for_other_damage():
    first = set_aside("u1", DocumentKind.journal_entry, "users/u1/f/j/e", SEED, "x", NOW)
    again = set_aside("u1", DocumentKind.journal_entry, "users/u1/f/j/e", {**SEED, MARK: {"at": NOW}}, "x", NOW)
    assert again.stored == SEED and again.record_id == first.record_id  # the mark is not part of what it held
    assert set_aside("u1", DocumentKind.journal_entry, "users/u1/f/j/e", {"new_value": 21}, "x", NOW).record_id != (
        first.record_id
    )
    assert set_aside("u1", DocumentKind.journal_entry, "users/u1/f/j/other", SEED, "x", NOW).record_id != (
        first.record_id
    )


def test_a_row_that_is_not_even_a_map_is_kept_whole():
    row = set_aside("u1", DocumentKind.rollup_row, "organisations/o/people/u1", "oops", "x", NOW)
    assert row.stored == {"value": "oops"} and row.path == "organisations/o/people/u1"
    assert not row.marked_in_place  # rewritten from the profile and summary, its copy in the record


def test_a_document_found_twice_in_one_change_is_listed_once():
    one = set_aside("u1", DocumentKind.factor, "users/u1/factors/a", {"x": 1}, "x", NOW)
    two = set_aside("u1", DocumentKind.factor, "users/u1/factors/b", {"x": 1}, "x", NOW)
    assert distinct([one, two, one]) == [one, two]
    assert listed_after(["users/u1/factors/b"], [one, two]) == ["users/u1/factors/b", "users/u1/factors/a"]
