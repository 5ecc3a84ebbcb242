"""Delivery figures (issues "failures heal themselves" and "the same turns give the same assessment").

* Duplicates: one user turn delivered 1,000 times by 8 concurrent instances (each its own Firestore
  client, as separate function instances would have): model calls (must be 1), errors (must be 0),
  and the time a duplicate delivery takes (p50/p95).
* Contention: 8 instances each analysing one of the same user's 8 turns at once: failures (must be 0),
  p50/p95 turn-to-done, model calls.

The model is a stand-in that answers after ``MODEL_SECONDS`` (a Gemini call takes longer; the point is
that duplicates arrive while the first claimer is still waiting for it).  Before this work the same runs
measured 600 model calls and 8 errors for 600 deliveries, and 7 of 8 concurrent turns failed.
"""

from __future__ import annotations

import threading
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from bench.common import fresh_database, percentiles
from factor_journal.catalog import load_catalog
from factor_journal.extraction.base import ExtractionRequest, ExtractionResult
from factor_journal.models import UserProfile
from factor_journal.pipeline import TurnProcessor
from factor_journal.settings import Settings
from factor_journal.store import FactorJournalStore

INSTANCES = 8
DELIVERIES = 1000
MODEL_SECONDS = 0.3
CONFIG = Settings(turns_per_minute=1000, turns_per_day=100000)


class SlowModel:
    name = "bench-model"

    def __init__(self) -> None:
        self.calls = 0
        self._lock = threading.Lock()

    def extract(self, request: ExtractionRequest) -> ExtractionResult:
        with self._lock:
            self.calls += 1
            index = self.calls
        time.sleep(MODEL_SECONDS)
        factors = ["data_quality", "data_governance", "sensor_data", "ml_expertise", "cloud_adoption", "ai_strategy"]
        reading = {
            "factor_id": factors[index % len(factors)],
            "value": 20 + 7 * (index % 9),
            "confidence": 0.7,
            "rationale": "bench reading",
        }
        return ExtractionResult(raw_updates=[reading], extractor="bench-model")


def _stores(client) -> list[FactorJournalStore]:  # type: ignore[no-untyped-def]
    catalog = load_catalog()
    return [FactorJournalStore(client, catalog) for _ in range(INSTANCES)]


def _duplicates(client) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    stores = _stores(client)
    user = f"bench-dup-{uuid.uuid4().hex[:8]}"
    stores[0].register_user(UserProfile(user_id=user))
    session = stores[0].start_session(user)
    turn = stores[0].add_turn(user, session, "user", "Our data is all over the place", created_at=datetime.now(UTC))
    model = SlowModel()
    processors = [TurnProcessor(store, model, config=CONFIG) for store in stores]
    samples: list[float] = []
    statuses: dict[str, int] = {}
    errors: list[str] = []
    lock = threading.Lock()

    def instance(index: int) -> None:
        for _ in range(DELIVERIES // INSTANCES):
            started = time.perf_counter()
            try:
                status = processors[index].process(user, session, turn).status
            except Exception as error:  # noqa: BLE001 - counted, reported
                with lock:
                    errors.append(f"{type(error).__name__}: {error}"[:200])
                continue
            elapsed = (time.perf_counter() - started) * 1000
            with lock:
                statuses[status] = statuses.get(status, 0) + 1
                if status != "processed":
                    samples.append(elapsed)

    started = time.perf_counter()
    threads = [threading.Thread(target=instance, args=(i,)) for i in range(INSTANCES)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return {
        "deliveries": DELIVERIES,
        "instances": INSTANCES,
        "model_calls": model.calls,
        "errors": len(errors),
        "error_examples": errors[:3],
        "statuses": statuses,
        "wall_s": round(time.perf_counter() - started, 2),
        "per_duplicate": percentiles(samples),
    }


def _concurrent_turns(client) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    stores = _stores(client)
    user = f"bench-conc-{uuid.uuid4().hex[:8]}"
    stores[0].register_user(UserProfile(user_id=user))
    session = stores[0].start_session(user)
    base = datetime.now(UTC) - timedelta(minutes=1)
    turns = [
        stores[0].add_turn(
            user,
            session,
            "user",
            f"turn {i}: data quality, data governance, sensors, data scientists, cloud, AI strategy",
            created_at=base + timedelta(seconds=i),
        )
        for i in range(INSTANCES)
    ]
    model = SlowModel()
    results: list[tuple[str, float]] = []
    lock = threading.Lock()

    def instance(index: int) -> None:
        started = time.perf_counter()
        try:
            status = TurnProcessor(stores[index], model, config=CONFIG).process(user, session, turns[index]).status
        except Exception as error:  # noqa: BLE001
            status = f"raised {type(error).__name__}"
        with lock:
            results.append((status, (time.perf_counter() - started) * 1000))

    threads = [threading.Thread(target=instance, args=(i,)) for i in range(INSTANCES)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    failures = [status for status, _ in results if status not in ("processed", "no_update")]
    return {
        "turns": INSTANCES,
        "instances": INSTANCES,
        "failures": len(failures),
        "failure_statuses": failures,
        "model_calls": model.calls,
        "turn_to_done": percentiles([ms for _, ms in results]),
    }


def run() -> dict[str, Any]:
    client = fresh_database("fj-bench-delivery")
    duplicates = _duplicates(client)
    print(
        f"  delivery: {duplicates['deliveries']} deliveries from {INSTANCES} instances -> "
        f"{duplicates['model_calls']} model call(s), {duplicates['errors']} errors, "
        f"duplicate p95 {duplicates['per_duplicate']['p95_ms']} ms"
    )
    concurrent = _concurrent_turns(client)
    print(
        f"  delivery: {INSTANCES} turns of one user at once -> {concurrent['failures']} failures, "
        f"{concurrent['model_calls']} model calls, p95 {concurrent['turn_to_done']['p95_ms']} ms"
    )
    return {
        "model_seconds": MODEL_SECONDS,
        "duplicates_of_one_turn": duplicates,
        "concurrent_turns_of_one_user": concurrent,
        "before": {"duplicates_600": {"model_calls": 600, "errors": 8}, "concurrent_8_turns": {"failures": 7}},
    }
