"""Issue 43: self-healing end to end.  A turn whose delivery is lost is analysed by the scheduled recovery sweep (the
deployed ``recover_turns`` in the Functions emulator, called by the scheduler stand-in ``scripts/scheduler.py``)
with nobody acting, within the claim lease plus one sweep interval.

Two ways a delivery is lost, each measured from the turn's writing to its analysis:

* **the trigger stopped**: the Functions emulator's background functions are switched off (the Emulator Hub's
  ``PUT /functions/disableBackgroundTriggers``), the turn is written and its event dropped, and they are switched on
  again (``enableBackgroundTriggers``, which reloads the functions: their next call starts a cold worker, as after
  an outage); no delivery ever claims the turn, so the sweep finds it once it is ``unclaimed_after`` old;
* **an instance killed mid-analysis**: the turn carries the claim such an instance leaves (``processing``, its lease
  running); the trigger's own delivery finds it claimed and leaves it, and the sweep takes it over when the lease
  runs out.

Deployed, the sweep runs every 5 minutes, a turn counts as lost 2 minutes after its writing and a claim's lease is 3
minutes: the promise is analysis within 3 + 5 = 8 minutes.  Measured here in seconds, with the same code: the stand-in
fires the sweep every ``SWEEP_SECONDS`` (``run --schedule``), the Functions emulator's worker takes a turn as lost after
``FJ_UNCLAIMED_AFTER_SECONDS`` (``make test`` and ``make bench`` start the emulators with 5 s)
and the killed instance's claim has a lease of ``LEASE_SECONDS``.  ``tests/test_self_healing.py`` holds the promise
with these helpers; ``run()`` records the figures.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from factor_journal_tools.emulator_hub import DISABLE, put, triggers_stopped

ROOT = Path(__file__).resolve().parents[1]
SWEEP_SECONDS = 5  # the stand-in's compressed sweep interval (deployed: 300)
LEASE_SECONDS = 10  # the killed instance's claim (deployed: FJ_CLAIM_LEASE_SECONDS, 180)
EMULATOR_UNCLAIMED_AFTER = (
    5  # FJ_UNCLAIMED_AFTER_SECONDS of the emulators' worker under make test / bench (deployed: 120)
)
PATIENCE = 300  # how long a test or the bench waits for a heal before it calls it lost (a cold worker on a loaded
# 2-core machine takes a minute and more: the time a heal takes is measured, never asserted)
DEPLOYED = {"sweep_minutes": 5, "unclaimed_after_minutes": 2, "claim_lease_minutes": 3}
TEXT = "Our data is all over the place, 5 different systems"


class ScheduledSweep:
    """The scheduler stand-in (``scripts/scheduler.py run``) firing only the deployed ``recover_turns``, every
    ``seconds``, in a process of its own; ``ran_at`` says when each call that ran the sweep returned."""

    def __init__(self, seconds: int = SWEEP_SECONDS) -> None:
        self.seconds = seconds
        self.ran_at: list[datetime] = []
        self.log: list[str] = []
        self._ran = threading.Condition()
        self._process: subprocess.Popen[str] | None = None

    def __enter__(self) -> ScheduledSweep:
        schedule = f"recover_turns=* * * * * */{self.seconds}"
        command = [sys.executable, str(ROOT / "scripts" / "scheduler.py"), "run", "--only", "recover_turns"]
        self._process = subprocess.Popen(
            [*command, "--schedule", schedule], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True
        )
        threading.Thread(target=self._read, daemon=True).start()
        return self

    def _read(self) -> None:
        assert self._process is not None and self._process.stderr is not None
        for line in self._process.stderr:
            with self._ran:
                self.log.append(line.rstrip())
                if "recover_turns ran" in line:
                    self.ran_at.append(datetime.now(UTC))
                self._ran.notify_all()

    def wait_for_calls(self, count: int, timeout: float) -> None:
        """Until the stand-in has run the sweep ``count`` times (the first call starts its worker)."""
        with self._ran:
            if not self._ran.wait_for(lambda: len(self.ran_at) >= count, timeout):
                raise AssertionError(
                    f"the stand-in ran the sweep {len(self.ran_at)} times in {timeout:.0f}s: {self.log}"
                )

    def missed(self, healed: Healed) -> int:
        """How many sweeps ran (and returned) after the turn could be found and before it was analysed: 0 when the
        first sweep that could find it analysed it; 1 when a sweep already running as it became findable had
        read before it was."""
        with self._ran:
            return sum(healed.findable_at < moment < healed.outcome["processed_at"] for moment in self.ran_at)

    def __exit__(self, *exc: object) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.wait(timeout=30)


@dataclass(frozen=True)
class Healed:
    """A lost delivery and its analysis: when the turn was written, from when the sweep could find it, and when the
    analysis committed (the turn's ``processed_at``)."""

    outcome: dict[str, Any]
    written_at: datetime
    findable_at: datetime

    @property
    def seconds(self) -> float:
        """From the turn's writing to its analysis."""
        return (self.outcome["processed_at"] - self.written_at).total_seconds()

    @property
    def after_findable(self) -> float:
        """From when the sweep could first find the turn to its analysis: at most one sweep interval and a call."""
        return (self.outcome["processed_at"] - self.findable_at).total_seconds()


def _settled(store: Any, user: str, session: str, turn: str, timeout: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        outcome = ((store.turn_data(user, session, turn) or {}).get("extraction")) or {}
        if outcome.get("status") not in (None, "processing", "failed"):
            return outcome
        time.sleep(0.5)
    raise AssertionError(
        f"turn {session}/{turn} was not analysed in {timeout:.0f}s: {store.turn_data(user, session, turn)}"
    )


def lost_while_stopped(store: Any, user: str, session: str, unclaimed_after: float) -> Healed:
    """A turn written while the functions were stopped (its event dropped), healed with nobody acting."""
    with triggers_stopped():
        turn = store.add_turn(user, session, "user", TEXT)
        written_at = store.turn_data(user, session, turn)["created_at"]
        time.sleep(1.0)  # the event reaches the Functions emulator in milliseconds; it is dropped while they are off
        put(DISABLE)  # returns once the events it had queued are done (dropped)
        assert "extraction" not in store.turn_data(user, session, turn)  # nothing claimed it: the delivery is lost
    back = datetime.now(UTC)
    findable_at = max(written_at + timedelta(seconds=unclaimed_after), back)
    outcome = _settled(store, user, session, turn, unclaimed_after + PATIENCE)
    return Healed(outcome, written_at, findable_at)


def killed_mid_analysis(store: Any, user: str, session: str, lease: float = LEASE_SECONDS) -> Healed:
    """A turn carrying the claim an instance killed mid-analysis leaves (its lease running), healed with nobody
    acting: the trigger's delivery finds it claimed and leaves it; the sweep takes it over when the lease runs out."""
    now = datetime.now(UTC)
    lease_until = now + timedelta(seconds=lease)
    claim = {
        "status": "processing",
        "attempts": 1,
        "claim_id": "an-instance-that-was-killed",
        "claimed_at": now,
        "lease_until": lease_until,
        "retry_at": lease_until,  # what a claim writes: the sweep takes the turn over when the lease runs out
    }
    reference = store.turns(user, session).document()
    reference.set({"role": "user", "text": TEXT, "created_at": now, "extraction": claim})
    outcome = _settled(store, user, session, reference.id, lease + PATIENCE)
    return Healed(outcome, now, lease_until)


def run() -> dict[str, Any]:
    from google.cloud import firestore

    from bench.common import PROJECT_ID
    from factor_journal.catalog import load_catalog
    from factor_journal.models import UserProfile
    from factor_journal.store import FactorJournalStore

    unclaimed_after = float(os.environ.get("FJ_UNCLAIMED_AFTER_SECONDS") or 120)
    store = FactorJournalStore(firestore.Client(project=PROJECT_ID), load_catalog())  # where the trigger listens
    figures: dict[str, Any] = {}
    with ScheduledSweep() as sweep:
        sweep.wait_for_calls(1, 120)
        for name, lose in (
            ("trigger_stopped", lambda u, s: lost_while_stopped(store, u, s, unclaimed_after)),
            ("killed_mid_analysis", lambda u, s: killed_mid_analysis(store, u, s)),
        ):
            user = f"bench-heal-{name}-{datetime.now(UTC):%H%M%S%f}"
            store.register_user(UserProfile(user_id=user))
            healed = lose(user, store.start_session(user))
            figures[name] = {
                "status": healed.outcome["status"],
                "attempts": healed.outcome.get("attempts"),
                "healed_after_s": round(healed.seconds, 1),
                "after_findable_s": round(healed.after_findable, 1),
                "sweeps_missed": sweep.missed(healed),
            }
    bound = LEASE_SECONDS + SWEEP_SECONDS
    return {
        **figures,
        "compressed": {
            "sweep_s": SWEEP_SECONDS,
            "unclaimed_after_s": unclaimed_after,
            "claim_lease_s": LEASE_SECONDS,
            "bound_s": bound,
        },
        "deployed": {**DEPLOYED, "bound_minutes": DEPLOYED["claim_lease_minutes"] + DEPLOYED["sweep_minutes"]},
        "note": (
            "healed_after_s: from the turn's writing to its analysis (bound_s: the claim lease and one sweep, plus "
            "what the sweep's call takes: a cold worker after the functions came back); after_findable_s: from when "
            "the sweep could find it; sweeps_missed: sweeps that ran in between (0: the first one healed it)"
        ),
    }
