"""Turns as work to do: the store's ``ledger`` (claim, settle, failures, rate count, attention, due and unclaimed
turns), over ``People``.  The pipeline's and the recovery sweep's whole view of turns."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

from factor_journal.documents import ExtractionOutcome, ScreenLift
from factor_journal.repositories.people import Claim, People, TurnRef


class TurnLedger:
    """Turns as work to do: who holds a turn, how it ended, what is due again (the pipeline's and the
    recovery sweep's whole view of turns).  Each method is one ``People`` operation, with its promises
    and its cost: the ledger adds no read or write of its own."""

    def __init__(self, people: People) -> None:
        self._people = people

    def claim(
        self,
        ref: TurnRef,
        *,
        lease: timedelta,
        now: datetime | None = None,
        force: bool = False,
        max_attempts: int | None = None,
    ) -> Claim:
        """Claim the turn for analysis (``People.claim_turn``): won by exactly one of racing deliveries; a
        duplicate of a done or claimed turn costs one read and no write."""
        return self._people.claim_turn(ref, lease=lease, now=now, force=force, max_attempts=max_attempts)

    def settle(self, ref: TurnRef, outcome: ExtractionOutcome, damage: str | None = None) -> None:
        """Record a final outcome that involves no factor change; a turn deleted meanwhile stays deleted.  ``damage``:
        the turn document does not read as a turn, and is set aside with it (``factor_journal.setaside``)."""
        self._people.settle_turn(ref, outcome, damage)

    def record_failure(
        self, ref: TurnRef, claim_id: str | None, outcome: ExtractionOutcome
    ) -> ExtractionOutcome | None:
        """Record a failed attempt unless the turn was completed or re-claimed meanwhile (an exhausted one is
        listed as needing attention in the same transaction); the outcome written, or None."""
        return self._people.record_failure(ref, claim_id, outcome)

    def count(self, ref: TurnRef, written_at: datetime, now: datetime) -> tuple[int, int] | None:
        """Count the turn against its person's rate limits in the minute and day it was written: (that minute's,
        that day's) count up to and including it, or None when the turn is gone."""
        return self._people.count_turn(ref, written_at, now)

    def set_attention(self, ref: TurnRef, needs_attention: bool) -> None:
        """List (or unlist) the turn among the person's turns needing attention (profile and roll-up row)."""
        self._people.set_attention(ref, needs_attention)

    def due(self, now: datetime, limit: int = 200) -> list[TurnRef]:
        """Turns whose retry time has come (failed and due again, or claimed under a lease that ran out)."""
        return self._people.due_turns(now, limit=limit)

    def unclaimed(self, until: datetime, limit: int = 200) -> list[TurnRef]:
        """Turns created before ``until`` that no delivery ever claimed, however old, oldest first (a read per
        such turn, none for the others)."""
        return self._people.unclaimed_turns(until, limit=limit)

    def lift_screen(self, ref: TurnRef) -> ScreenLift:
        """Have an answer the screen set aside read again without that screen, at its person's word ("It was about
        us"): recorded on the turn, which its lift request's trigger then analyses (``People.lift_screen``)."""
        return self._people.lift_screen(ref)

    def data(self, ref: TurnRef) -> dict[str, Any] | None:
        """The turn document as stored (one read), or None when there is none."""
        return self._people.turn_data(ref.user_id, ref.session_id, ref.turn_id)

    def of_person(self, user_id: str) -> Iterator[tuple[TurnRef, dict[str, Any]]]:
        """Every turn of every session of the person, oldest first within a session."""
        return self._people.turns_of(user_id)
