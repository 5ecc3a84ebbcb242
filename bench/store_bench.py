"""Issue 2 figures: document reads/writes and latency per update, incremental summary vs scan baseline.

For one user: with 1, 40 and all factors assessed, and with one journal
holding 0, 100 and 1,000 entries, each measured for the incremental summary
(the product) and for the design's scan-based baseline (rebuild the summary by
reading every factor, and the journal of each unconfirmed one) in the same run.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

from google.cloud import firestore

from bench.common import fresh_database, percentiles, timed
from factor_journal.catalog import load_catalog
from factor_journal.models import AssessmentSummary, FactorState, InferenceStatus, InferredUpdate, UserProfile
from factor_journal.repositories.changes import FactorChanges
from factor_journal.store import FactorJournalStore, entry_id_for

UPDATES_PER_CASE = 25


class ScanBaselineChanges(FactorChanges):
    """The design's baseline: every change re-reads every factor document, and the journal of each
    unconfirmed one, instead of the states the summary carries."""

    def known_states(
        self, transaction: firestore.Transaction, user_id: str, summary: AssessmentSummary | None
    ) -> dict[str, FactorState]:
        states: dict[str, FactorState] = {}
        for snapshot in self.paths.factors(user_id).stream(transaction=transaction):
            state = FactorState.model_validate(snapshot.to_dict())
            if state.inference_status == InferenceStatus.unconfirmed:
                count = sum(1 for _ in self.paths.journal(user_id, state.factor_id).stream(transaction=transaction))
                state = state.model_copy(update={"evidence_count": count})
            states[state.factor_id] = state
        return states


MEASURED_FACTOR = "data_quality"


def _update(factor_id: str, value: float, observed_at: datetime | None = None) -> InferredUpdate:
    return InferredUpdate(
        factor_id=factor_id,
        value=value,
        confidence=0.7,
        rationale="benchmark reading",
        conversation_excerpt="User: benchmark",
        session_id="bench",
        observed_at=observed_at,
    )


def _seed_user(store: FactorJournalStore, assessed: int, journal_entries: int) -> str:
    user = f"bench-{uuid.uuid4().hex[:8]}"
    store.register_user(UserProfile(user_id=user))
    factors = [f.id for f in store.catalog.assessable_factors]
    factors.remove(MEASURED_FACTOR)
    chosen = [MEASURED_FACTOR, *factors][:assessed]
    store.record_inferences(user, [_update(fid, 40) for fid in chosen[:6]])
    for start in range(6, len(chosen), 6):
        store.record_inferences(user, [_update(fid, 40) for fid in chosen[start : start + 6]])
    if journal_entries:
        _bulk_journal(store, user, MEASURED_FACTOR, journal_entries)
    return user


def _bulk_journal(store: FactorJournalStore, user: str, factor_id: str, count: int) -> None:
    """Older journal entries written in bulk (seeding only; the measured updates go through the store)."""
    template = store.history(user, factor_id, page_size=1).entries[0]
    journal = (
        store.client.collection("users").document(user).collection("factors").document(factor_id).collection("journal")
    )
    writer = store.client.bulk_writer()
    start = datetime.now(UTC) - timedelta(days=400)
    for index in range(count - 1):
        entry = template.model_copy(
            update={"entry_id": entry_id_for(f"seed-{index}", factor_id), "observed_at": start + timedelta(hours=index)}
        )
        writer.set(journal.document(entry.entry_id), entry.to_document())
    writer.close()


def _measure(store: FactorJournalStore, user: str) -> dict[str, Any]:
    samples, reads, writes = [], [], []
    for index in range(UPDATES_PER_CASE):
        store.stats.reset()
        elapsed, _ = timed(partial(store.record_inference, user, _update(MEASURED_FACTOR, 20 + index)))
        samples.append(elapsed)
        reads.append(store.stats.reads)
        writes.append(store.stats.writes)
    return {
        "reads_per_update": round(sum(reads) / len(reads), 2),
        "writes_per_update": round(sum(writes) / len(writes), 2),
        **percentiles(samples),
    }


def run() -> dict[str, Any]:
    catalog = load_catalog()
    client: firestore.Client = fresh_database("fj-bench")
    everything = len(catalog.assessable_factors)
    cases = [
        ("assessed_factors", 1, 0),
        ("assessed_factors", 40, 0),
        ("assessed_factors", everything, 0),
        ("journal_entries", 1, 0),
        ("journal_entries", 1, 100),
        ("journal_entries", 1, 1000),
    ]
    results: dict[str, Any] = {"updates_per_case": UPDATES_PER_CASE, "catalog_factors": everything, "cases": []}
    for dimension, assessed, entries in cases:
        row: dict[str, Any] = {"dimension": dimension, "assessed_factors": assessed, "journal_entries": entries}
        for label, by_scan in (("incremental", False), ("scan_baseline", True)):
            store = FactorJournalStore(client, catalog)
            if by_scan:
                store.changes = ScanBaselineChanges(store.client, catalog, store.graph)
            user = _seed_user(store, assessed, entries)
            row[label] = _measure(store, user)
        results["cases"].append(row)
        print(
            f"  store: {dimension:17} factors={assessed:<3} journal={entries:<5} "
            f"incremental {row['incremental']['reads_per_update']:>6} reads p50 {row['incremental']['p50_ms']:>7} ms | "
            f"scan {row['scan_baseline']['reads_per_update']:>7} reads p50 {row['scan_baseline']['p50_ms']:>7} ms"
        )
    return results
