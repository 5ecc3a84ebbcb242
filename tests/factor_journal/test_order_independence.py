"""The same turns give the same assessment, whatever the order, the contention or the crash.

One conversation (two sessions, overlapping factors, a confident reading that the move bound must
temper) is processed in order, reversed, shuffled, interleaved across sessions, with injected model
failures recovered by the sweep, and from eight concurrent clients.  Every run must end with the same
factor states, summary and "where we were" — and one model call per turn (plus the failed calls).
Each run gets a fresh user; observation times are the same in every run.
"""

from __future__ import annotations

import random
import threading
import uuid
from datetime import UTC, datetime, timedelta

from google.cloud import firestore

from doubles import Clock, ReadingsByText, reading
from factor_journal.models import UserProfile
from factor_journal.pipeline import TurnProcessor, recover_due_turns
from factor_journal.settings import Settings
from factor_journal.store import FactorJournalStore

BASE = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
SESSION_A = [
    ("Our data quality is a mess, duplicates everywhere.", [reading("data_quality", 20, 0.8)]),
    ("We have 2 data scientists on the team.", [reading("ml_expertise", 55, 0.6)]),
    ("Data quality checks run nightly now, it is much cleaner.", [reading("data_quality", 85, 0.7)]),
    (
        "Nobody owns the data governance, no catalog.",
        [reading("data_governance", 15, 0.7), reading("data_quality", 40, 0.5)],
    ),
]
SESSION_B = [
    ("Sensor data from every press goes to the historian.", [reading("sensor_data", 75, 0.7)]),
    ("The data scientists left, no ML expertise now.", [reading("ml_expertise", 10, 0.8)]),
    ("A data steward for governance was appointed.", [reading("data_governance", 45, 0.6)]),
    ("Sensor data has gaps, maybe half the machines.", [reading("sensor_data", 45, 0.5)]),
]
READINGS = {text: readings for text, readings in SESSION_A + SESSION_B}


def seed(store: FactorJournalStore) -> tuple[str, list[tuple[str, str, str]]]:
    """A fresh user with both sessions' turns written (not analysed); returns (user, [(session, turn, text)])."""
    user = f"order-{uuid.uuid4().hex[:10]}"
    store.register_user(UserProfile(user_id=user, org_id="org-order"))
    turns = []
    for offset, (name, script) in enumerate((("a", SESSION_A), ("b", SESSION_B))):
        session = store.start_session(user, f"session-{name}")
        for index, (text, _) in enumerate(script):
            at = BASE + timedelta(minutes=10 * index + 3 * offset)  # the sessions interleave in time
            turn_id = f"turn-{name}{index}"  # the same ids in every run, so entry ids compare too
            turns.append((session, store.add_turn(user, session, "user", text, created_at=at, turn_id=turn_id), text))
    return user, turns


MOMENTS = [BASE + timedelta(minutes=minutes) for minutes in (5, 15, 25, 35)]  # between the turns, and after all


def outcome_of(store: FactorJournalStore, user: str) -> dict:
    """What a person (and their manager) would see, without recording times: the summary, every factor, every
    factor's history (its journal) and the assessment as of moments between the turns and now."""
    summary = store.summary(user).model_dump(exclude={"updated_at"})
    for state in summary["factors"].values():
        state.pop("last_updated")
    factors, journals = {}, {}
    for fid, state in store.journal.factor_states(user).items():
        factors[fid] = state.model_dump(exclude={"last_updated"})
        journal = store.journal.journal(user, fid)
        journals[fid] = {e.entry_id: e.model_dump(exclude={"recorded_at", "user_id"}) for e in journal}
    as_of = {}
    for moment in [*MOMENTS, datetime.now(UTC)]:
        then = store.summary_as_of(user, moment).factors
        as_of[moment.isoformat()[11:16]] = {fid: (s.current_value, s.current_confidence) for fid, s in then.items()}
    now = as_of.pop(next(reversed(as_of)))  # the assessment as of now is the assessment shown now
    assert now == {fid: (s["current_value"], s["current_confidence"]) for fid, s in summary["factors"].items()}
    return {"summary": summary, "factors": factors, "journals": journals, "as_of": as_of}


def differences(left: object, right: object, path: str = "") -> list[str]:
    """Where two nested documents differ (for a readable failure)."""
    if isinstance(left, dict) and isinstance(right, dict):
        found = []
        for key in sorted(set(left) | set(right), key=str):
            found += differences(left.get(key), right.get(key), f"{path}.{key}")
        return found
    if isinstance(left, list) and isinstance(right, list) and len(left) == len(right):
        return [d for i, (a, b) in enumerate(zip(left, right, strict=True)) for d in differences(a, b, f"{path}[{i}]")]
    return [] if left == right else [f"{path}: {left!r} != {right!r}"]


def run(store: FactorJournalStore, order: list[int], *, fail_first: int = 0) -> tuple[dict, ReadingsByText]:
    user, turns = seed(store)
    model = ReadingsByText(READINGS, fail_first=fail_first)
    clock = Clock(datetime.now(UTC))
    processor = TurnProcessor(store, model, clock=clock, config=Settings(retry_base_seconds=1, turns_per_minute=100))
    for index in order:
        session, turn, _ = turns[index]
        processor.process(user, session, turn)
    for _ in range(fail_first):
        clock.advance(minutes=10)
        recover_due_turns(processor)
    return outcome_of(store, user), model


def test_order_contention_and_crashes_do_not_change_the_assessment(database, catalog):
    store = FactorJournalStore(database, catalog)
    count = len(SESSION_A) + len(SESSION_B)
    in_order = sorted(range(count), key=lambda i: BASE + timedelta(minutes=10 * (i % 4) + 3 * (i // 4)))
    reference, model = run(store, in_order)
    assert all(calls == 1 for calls in model.calls.values()) and model.total_calls == count
    assert reference["summary"]["last_conversation"]["timestamp"] == BASE + timedelta(minutes=33)

    orders = {
        "reversed": list(reversed(in_order)),
        "session b first": list(range(4, 8)) + list(range(4)),
        "interleaved backwards": [7, 3, 6, 2, 5, 1, 4, 0],
    }
    shuffler = random.Random(20261122)
    for n in range(3):
        orders[f"shuffled {n}"] = shuffler.sample(range(count), count)
    for name, order in orders.items():
        result, model = run(store, order)
        assert differences(result, reference) == [], name
        assert model.total_calls == count, name

    failing, model = run(store, shuffler.sample(range(count), count), fail_first=1)
    assert differences(failing, reference) == [], "with failures and recovery"
    assert model.total_calls == 2 * count  # one failed call and one good call per turn

    concurrent = run_concurrently(database, catalog, count)
    assert differences(concurrent, reference) == [], "eight concurrent clients"


def run_concurrently(database: firestore.Client, catalog, count: int) -> dict:
    """Eight instances (own clients), every turn delivered twice, all at once; one model call per turn."""
    stores = [FactorJournalStore(database, catalog) for _ in range(8)]
    user, turns = seed(stores[0])
    model = ReadingsByText(READINGS)
    errors: list[BaseException] = []

    def deliver(index: int) -> None:
        store = stores[index % 8]
        session, turn, _ = turns[index % count]
        try:
            TurnProcessor(store, model, config=Settings(turns_per_minute=100)).process(user, session, turn)
        except BaseException as error:  # noqa: BLE001
            errors.append(error)

    threads = [threading.Thread(target=deliver, args=(i,)) for i in range(2 * count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert model.total_calls == count and all(calls == 1 for calls in model.calls.values())
    statuses = {stores[0].turn_data(user, s, t)["extraction"]["status"] for s, t, _ in turns}
    assert statuses == {"processed"}
    return outcome_of(stores[0], user)
