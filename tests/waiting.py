"""Waiting on the emulators: functions run asynchronously, so tests poll until what they expect is there.

``wait_for`` polls one condition.  ``wait_for_analysis`` waits on what the deployed trigger does with a turn, the
way the product promises it: a delivery can be lost (the Functions emulator answers "socket hang up" and the trigger
never runs; an instance dies mid-analysis), and then the recovery sweep analyses the turn.  So when the turn is not
settled within a first wait, the test runs the product's sweep (``pipeline.recover_due_turns``) once the turn is
one the sweep heals, and waits again: it checks that a written turn gets analysed, not that the emulator delivered
the event.  No assertion is retried: each wait is on the product's own state.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from factor_journal.store import FactorJournalStore

FIRST_WAIT = 60.0  # the trigger's delivery: a cold start takes ~6 s on a quiet machine, up to a minute under load
AFTER_THE_SWEEP = 60.0
STATES = {
    None: "never claimed",
    "processing": "claimed, its holder dead or stalled",
    "failed": "failed, its next attempt not due yet",
}


def wait_for(probe: Callable[[], Any], timeout: float = 45.0, what: str = "the trigger", interval: float = 0.2) -> Any:
    """``probe()``'s first truthy value, polled every ``interval`` seconds; an AssertionError naming ``what``
    after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")


def settled(store: FactorJournalStore, user_id: str, session_id: str, turn_id: str) -> dict[str, Any] | None:
    """The turn's stored analysis outcome once it is settled (analysed, refused, invalid, needing attention…);
    None while it is not written yet, unclaimed, claimed or failed and waiting for its next attempt."""
    outcome = ((store.turn_data(user_id, session_id, turn_id) or {}).get("extraction")) or {}
    return outcome if outcome.get("status") not in (None, "processing", "failed") else None


def wait_for_analysis(
    store: FactorJournalStore,
    user_id: str,
    session_id: str,
    turn_id: str,
    *,
    first_wait: float = FIRST_WAIT,
    after_the_sweep: float = AFTER_THE_SWEEP,
) -> dict[str, Any]:
    """The turn's settled analysis outcome (``settled``), written by the deployed trigger or, when its delivery
    was lost, by the recovery sweep: after ``first_wait`` seconds without one, the product's sweep runs once over
    the trigger's database (``recover``), and the outcome is waited for ``after_the_sweep`` seconds more.  An
    AssertionError with the turn's state if it is still not settled."""
    try:
        return wait_for(lambda: settled(store, user_id, session_id, turn_id), first_wait, "the trigger's analysis")
    except AssertionError:
        pass
    stored = (store.turn_data(user_id, session_id, turn_id) or {}).get("extraction") or {}
    counts = recover(store, stored.get("retry_at"))
    state = STATES.get(stored.get("status"), str(stored.get("status")))
    warnings.warn(
        f"turn {session_id}/{turn_id} of {user_id} was not settled {first_wait:.0f}s after it was written ({state}): "
        f"taken as a lost delivery, the recovery sweep ran ({counts})",
        stacklevel=2,
    )
    try:
        return wait_for(lambda: settled(store, user_id, session_id, turn_id), after_the_sweep, "the sweep's analysis")
    except AssertionError:
        stored = store.turn_data(user_id, session_id, turn_id)
        raise AssertionError(
            f"turn {session_id}/{turn_id} of {user_id} was not analysed by the trigger within {first_wait:.0f}s nor "
            f"by the recovery sweep ({counts}) within {after_the_sweep:.0f}s more; stored: {stored}"
        ) from None


def recover(store: FactorJournalStore, retry_at: datetime | None = None) -> dict[str, int]:
    """Run the product's recovery sweep (``pipeline.recover_due_turns``) once over ``store``'s database, as the
    scheduled ``recover_turns`` does, with the deployed trigger's extractor and rate limits, when the turn waited
    on is one it heals: a turn no delivery claimed counts as lost at once (the test has already waited longer than
    a delivery takes), and the sweep's clock stands just past ``retry_at``, the turn's retry time (a claim whose
    holder died is taken over when its lease runs out, a failed attempt retried when it is due).  Returns how many
    turns ended in each status."""
    from factor_journal import runtime
    from factor_journal.pipeline import TurnProcessor, recover_due_turns
    from factor_journal.settings import settings

    now = datetime.now(UTC)
    offset = max(timedelta(0), retry_at + timedelta(seconds=1) - now) if retry_at is not None else timedelta(0)
    config = settings().model_copy(update={"unclaimed_after_seconds": 0.0})
    processor = TurnProcessor(
        store,
        runtime.make_extractor(),
        config=config,
        clock=lambda: datetime.now(UTC) + offset,
        enforce_rate_limits=True,
    )
    return recover_due_turns(processor)
