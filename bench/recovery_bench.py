"""What the recovery sweep reads (issue "failures heal themselves"; the sweep runs every few minutes for ever).

A database with many analysed turns, as a running product has, and then:

* a quiet sweep (nothing lost, nothing due): its document reads, which must not grow with the turns on record;
* a sweep after an outage that lost ``LOST`` deliveries, written an hour ago: reads, the time it takes, and what it
  found (every lost turn, none twice);
* the sweep after that: quiet again.

The model is a stand-in that answers at once: what is measured is Firestore reads, not a model.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from bench.common import fresh_database, timed
from factor_journal.catalog import load_catalog
from factor_journal.extraction.base import ExtractionRequest, ExtractionResult
from factor_journal.models import UserProfile
from factor_journal.pipeline import TurnProcessor, recover_due_turns
from factor_journal.settings import Settings
from factor_journal.store import FactorJournalStore

PEOPLE = 20
ANALYSED_PER_PERSON = 15
LOST = 40
CONFIG = Settings(turns_per_minute=1000, turns_per_day=100000)


class InstantModel:
    name = "bench-model"

    def extract(self, request: ExtractionRequest) -> ExtractionResult:
        reading = {"factor_id": "data_quality", "value": 30, "confidence": 0.7, "rationale": "bench reading"}
        return ExtractionResult(raw_updates=[reading], extractor="bench-model")


def run() -> dict[str, Any]:
    store = FactorJournalStore(fresh_database("bench-recovery"), load_catalog())
    processor = TurnProcessor(store, InstantModel(), config=CONFIG)
    written = datetime.now(UTC) - timedelta(hours=2)
    people = []
    for index in range(PEOPLE):
        user = f"bench-rec-{index}-{uuid.uuid4().hex[:6]}"
        store.register_user(UserProfile(user_id=user))
        session = store.start_session(user)
        people.append((user, session))
        for turn in range(ANALYSED_PER_PERSON):
            turn_id = store.add_turn(
                user,
                session,
                "user",
                f"Our data sits in {turn + 2} systems and nobody owns it",
                created_at=written + timedelta(seconds=index * 60 + turn),
            )
            processor.process(user, session, turn_id)

    def sweep() -> tuple[int, float, dict[str, int]]:
        store.stats.reset()
        elapsed_ms, counts = timed(lambda: recover_due_turns(processor))
        return store.stats.reads, elapsed_ms, counts

    quiet_reads, quiet_ms, quiet_counts = sweep()
    lost_at = datetime.now(UTC) - timedelta(hours=1)
    for index in range(LOST):  # written where the trigger listens, but no delivery ever came
        user, session = people[index % PEOPLE]
        store.add_turn(
            user,
            session,
            "user",
            f"Finance reconciles the numbers by hand, {index + 2} days a month",
            created_at=lost_at + timedelta(seconds=index),
        )
    outage_reads, outage_ms, outage_counts = sweep()
    after_reads, _, after_counts = sweep()
    return {
        "analysed_turns_on_record": PEOPLE * ANALYSED_PER_PERSON,
        "quiet_sweep": {"reads": quiet_reads, "ms": round(quiet_ms, 1), "statuses": quiet_counts},
        "after_outage": {
            "lost_turns": LOST,
            "reads": outage_reads,
            "reads_per_recovered_turn": round(outage_reads / max(1, sum(outage_counts.values())), 1),
            "ms": round(outage_ms, 1),
            "statuses": outage_counts,
        },
        "next_sweep": {"reads": after_reads, "statuses": after_counts},
    }
