"""Whether a delivery may claim a turn, decided from the turn's stored outcome alone (pure; claiming it against
racing deliveries, with a write precondition, is tested on the emulator in test_turn_recovery.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from factor_journal.documents import (
    ExtractionOutcome,
    SessionDocument,
    TurnStatus,
    claim_abandoned,
    claim_refused_by,
    failure_recorded,
    latest_session_id,
)

NOW = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)
LATER, EARLIER = NOW + timedelta(minutes=1), NOW - timedelta(minutes=1)


def stored(status: str, **fields: object) -> ExtractionOutcome:
    return ExtractionOutcome(status=TurnStatus(status), **fields)


@pytest.mark.parametrize(
    ("outcome", "force", "refused"),
    [
        (None, False, False),  # never touched: the first delivery claims it
        (stored("processing", lease_until=LATER), False, True),  # a live claim
        (stored("processing", lease_until=LATER), True, True),  # ... even for a person asking to reprocess
        (stored("processing", lease_until=EARLIER), False, False),  # its holder died: taken over
        (stored("processing", lease_until=NOW), False, False),  # the lease ends at its instant
        (stored("processing"), False, False),  # a claim without a lease holds nothing
        (stored("processed"), False, True),  # a duplicate delivery of a done turn
        (stored("no_update"), True, True),  # done: even reprocessing does not analyse it twice
        (stored("invalid"), True, True),  # never analysable as written
        (stored("context"), True, True),
        (stored("rate_limited"), False, True),  # settled for a delivery ...
        (stored("rate_limited"), True, False),  # ... a person may have it analysed
        (stored("needs_attention"), False, True),  # retries exhausted: the sweep leaves it
        (stored("needs_attention"), True, False),  # a person reprocesses it
        (stored("failed", next_attempt_at=LATER), False, True),  # waiting for its next attempt
        (stored("failed", next_attempt_at=LATER), True, False),  # a person need not wait
        (stored("failed", next_attempt_at=EARLIER), False, False),  # due again
        (stored("failed"), False, False),  # failed with no next attempt set: claimable
    ],
)
def test_a_claim_is_refused_exactly_by_what_the_stored_outcome_says(outcome, force, refused):
    assert claim_refused_by(outcome, NOW, force) is (outcome if refused else None)


def test_an_expired_claim_after_the_last_attempt_is_abandoned_not_claimed_again():
    died = stored("processing", attempts=3, lease_until=EARLIER)
    assert claim_abandoned(died, 3, force=False)
    assert not claim_abandoned(died.model_copy(update={"attempts": 2}), 3, force=False)  # one attempt left
    assert not claim_abandoned(died, 3, force=True)  # a person's reprocess still claims it
    assert not claim_abandoned(died, None, force=False)  # no cap given
    assert not claim_abandoned(stored("failed", attempts=3), 3, force=False)  # a recorded failure, not a death
    assert not claim_abandoned(None, 3, force=False)


@pytest.mark.parametrize(
    ("before", "claim_id", "written"),
    [
        (None, "c1", True),  # no outcome stored yet
        (stored("processing", claim_id="c1", attempts=2), "c1", True),  # our own claim failed
        (stored("processing", claim_id="c2"), "c1", False),  # another delivery claimed it meanwhile
        (stored("processing"), "c1", True),  # a claim without an id is nobody's
        (stored("processed"), "c1", False),  # completed meanwhile: a late failure never undoes it
        (stored("no_update"), None, False),
        (stored("failed", attempts=4), None, True),
    ],
)
def test_a_failure_is_recorded_only_over_a_turn_still_ours_and_not_done(before, claim_id, written):
    failed = stored("failed", attempts=1, next_attempt_at=LATER)
    recorded = failure_recorded(before, claim_id, failed)
    assert (recorded is not None) is written
    if recorded is not None:
        assert recorded.status == TurnStatus.failed
        assert recorded.attempts == max(1, before.attempts if before else 0)  # attempts never go down


def test_the_latest_session_is_the_last_active_else_the_last_started_whatever_the_read_order():
    old = SessionDocument(session_id="a", started_at=EARLIER, last_active=NOW)
    new = SessionDocument(session_id="b", started_at=NOW)  # started later, nothing analysed yet
    talked = SessionDocument(session_id="c", started_at=EARLIER, last_active=LATER)
    assert latest_session_id([old, new, talked]) == "c"
    assert latest_session_id([talked, new, old]) == "c"
    assert latest_session_id([old, new]) == "b"  # a tie on time goes to the larger id
    assert latest_session_id([SessionDocument(session_id="x")]) == "x"  # no times at all still counts
    assert latest_session_id([]) is None


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        (None, None),  # a turn never touched
        ({"status": "not a status"}, None),  # no status the pipeline writes: never touched either
        ({"status": "no_update", "attempts": 1}, TurnStatus.no_update),  # a record that reads, as written
    ],
)
def test_a_turn_record_that_reads_is_taken_as_written(record, expected):
    outcome, damage = ExtractionOutcome.read({"text": "…", "extraction": record})
    assert damage is None
    assert (outcome.status if outcome else None) == expected


@pytest.mark.parametrize(
    ("record", "damaged_field", "attempts_kept"),
    [
        ({"status": "processed", "attempts": "not a number"}, "attempts", 0),
        ({"status": "processed", "attempts": 2, "entry_ids": "e1"}, "entry_ids", 2),  # a list written as a string
        ({"status": "processing", "attempts": 1, "lease_until": "tomorrow"}, "lease_until", 1),
    ],
)
def test_a_damaged_turn_record_needs_attention_and_is_never_trusted_as_settled(record, damaged_field, attempts_kept):
    """A damaged record says the turn was touched but not what became of it: a delivery refuses it (it is listed
    for a person instead), a person's reprocess claims it, and reading it never raises."""
    outcome, damage = ExtractionOutcome.read({"extraction": record})
    assert damage is not None and "no longer reads" in damage and damaged_field in damage  # says what is wrong
    assert outcome == ExtractionOutcome.of({"extraction": record})
    assert outcome.status == TurnStatus.needs_attention and outcome.error_kind == "damaged"
    assert outcome.attempts == attempts_kept and outcome.error == damage
    assert claim_refused_by(outcome, NOW) is outcome
    assert claim_refused_by(outcome, NOW, force=True) is None
