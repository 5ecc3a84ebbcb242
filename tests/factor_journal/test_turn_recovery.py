"""Claims, automatic retries and recovery of turns, on the Firestore emulator (issue: failures heal
themselves).  Separate clients stand in for separate function instances."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
from google.cloud import firestore

from doubles import Clock, ReadingsByText, ScriptedExtractor, reading
from factor_journal.extraction.base import ExtractionError
from factor_journal.pipeline import TurnProcessor, recover_due_turns
from factor_journal.settings import Settings
from factor_journal.store import FactorJournalStore


@pytest.fixture
def store(database, catalog) -> FactorJournalStore:
    return FactorJournalStore(database, catalog)


@pytest.fixture
def instances(database, catalog):
    """Eight stores, each with its own Firestore client, as eight function instances would have."""
    return [FactorJournalStore(database, catalog) for _ in range(8)]


def status(store, user, session, turn) -> str:
    return store.turn_data(user, session, turn)["extraction"]["status"]


def new_conversation(store, make_user):
    user = make_user(store)
    return user, store.start_session(user)


def test_duplicate_deliveries_from_eight_instances_make_one_model_call(instances, make_user):
    store = instances[0]
    user, session = new_conversation(store, make_user)
    turn = store.add_turn(user, session, "user", "Our data is all over the place", created_at=datetime.now(UTC))
    model = ReadingsByText({"Our data is all over the place": [reading("data_quality", 25)]})
    processors = [TurnProcessor(instance, model) for instance in instances]
    results: list[str] = []
    errors: list[BaseException] = []

    def deliver(processor: TurnProcessor) -> None:
        for _ in range(6):
            try:
                results.append(processor.process(user, session, turn).status)
            except BaseException as error:  # noqa: BLE001 - every error is a failure here
                errors.append(error)

    threads = [threading.Thread(target=deliver, args=(p,)) for p in processors]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert model.total_calls == 1
    assert results.count("processed") == 1 and set(results) <= {"processed", "busy", "duplicate"}
    assert len(store.history(user, "data_quality").entries) == 1
    assert status(store, user, session, turn) == "processed"


def test_a_duplicate_of_a_done_turn_reads_once_and_writes_nothing(store, make_user):
    user, session = new_conversation(store, make_user)
    turn = store.add_turn(user, session, "user", "Our data is all over the place")
    processor = TurnProcessor(store, ScriptedExtractor([reading("data_quality", 25)]))
    first = processor.process(user, session, turn)
    assert first.status == "processed" and len(processor.extractor.requests) == 1  # not screened: analysed
    assert status(store, user, session, turn) == "processed"
    assert store.turn_data(user, session, turn)["extraction"].get("screened") is None
    store.stats.reset()
    again = processor.process(user, session, turn)
    assert again.status == "duplicate" and again.entry_ids == first.entry_ids  # told what the first did
    assert (store.stats.reads, store.stats.writes) == (1, 0)
    assert len(store.history(user, "data_quality").entries) == 1


def test_a_claim_whose_holder_died_is_taken_over_after_its_lease(store, make_user):
    user, session = new_conversation(store, make_user)
    turn = store.add_turn(user, session, "user", "Our data is all over the place")
    clock = Clock()
    config = Settings(claim_lease_seconds=60)
    model = ScriptedExtractor([reading("data_quality", 25)])
    # an instance claims the turn and dies before finishing
    dead = store.ledger.claim(_ref(user, session, turn), lease=config.claim_lease, now=clock())
    assert dead.won and status(store, user, session, turn) == "processing"
    processor = TurnProcessor(store, model, config=config, clock=clock)
    assert processor.process(user, session, turn).status == "busy"  # the lease is live
    assert model.requests == []
    clock.advance(seconds=61)
    assert store.ledger.due(clock()) and _ref(user, session, turn) in store.ledger.due(clock())
    assert recover_due_turns(processor) == {"processed": 1}
    assert status(store, user, session, turn) == "processed" and len(model.requests) == 1


def _ref(user, session, turn):
    from factor_journal.repositories.people import TurnRef

    return TurnRef(user, session, turn)


def test_transient_failures_are_retried_automatically_with_backoff_then_need_attention(store, make_user):
    user, session = new_conversation(store, make_user)
    turn = store.add_turn(user, session, "user", "Our data is all over the place")
    clock = Clock()
    config = Settings(max_turn_attempts=3, retry_base_seconds=60)
    model = ScriptedExtractor(ExtractionError("Vertex AI answered 503"))
    processor = TurnProcessor(store, model, config=config, clock=clock)
    assert processor.process(user, session, turn).status == "failed"
    recorded = store.turn_data(user, session, turn)["extraction"]
    assert recorded["attempts"] == 1 and recorded["next_attempt_at"] == clock() + timedelta(seconds=60)
    assert recover_due_turns(processor) == {}  # not due yet: nothing happens, no model call
    assert len(model.requests) == 1
    clock.advance(seconds=61)
    assert recover_due_turns(processor) == {"failed": 1}
    recorded = store.turn_data(user, session, turn)["extraction"]
    assert recorded["attempts"] == 2 and recorded["next_attempt_at"] == clock() + timedelta(seconds=240)
    clock.advance(seconds=241)
    assert recover_due_turns(processor) == {"needs_attention": 1}
    recorded = store.turn_data(user, session, turn)["extraction"]
    assert recorded["status"] == "needs_attention" and recorded["attempts"] == 3 and recorded["retry_at"] is None
    clock.advance(days=1)
    assert recover_due_turns(processor) == {}  # the cap holds: no fourth attempt
    assert len(model.requests) == 3
    assert store.get_user(user).attention_turns == [f"{session}/{turn}"]
    # a person reprocesses it once the model is back: it is analysed and unlisted
    healthy = TurnProcessor(store, ScriptedExtractor([reading("data_quality", 25)]), config=config, clock=clock)
    assert healthy.process(user, session, turn, force=True).status == "processed"
    assert store.get_user(user).attention_turns == []


def test_a_turn_whose_analysis_keeps_stopping_its_instance_needs_attention_after_the_last_attempt(store, make_user):
    """A turn that kills every instance analysing it (a timeout, a crash) leaves only expired claims: after the
    last attempt it is not claimed again but needs attention, listed where the person's managers see it."""
    user = make_user(store, org_id="org-poison")
    session = store.start_session(user)
    turn = store.add_turn(user, session, "user", "Our data is all over the place")
    clock, config = Clock(), Settings(max_turn_attempts=3, claim_lease_seconds=60)
    for _ in range(3):  # three instances claim it and die
        assert store.ledger.claim(_ref(user, session, turn), lease=config.claim_lease, now=clock()).won
        clock.advance(seconds=61)
    model = ScriptedExtractor([reading("data_quality", 25)])
    assert recover_due_turns(TurnProcessor(store, model, config=config, clock=clock)) == {"needs_attention": 1}
    recorded = store.turn_data(user, session, turn)["extraction"]
    assert recorded["status"] == "needs_attention" and recorded["error_kind"] == "abandoned"
    assert recorded["attempts"] == 3 and recorded["retry_at"] is None and model.requests == []
    assert store.get_user(user).attention_turns == [f"{session}/{turn}"]
    assert _row(store, "org-poison", user)["needs_attention"] == 1
    clock.advance(days=1)
    assert recover_due_turns(TurnProcessor(store, model, config=config, clock=clock)) == {}  # never taken again


def test_a_turn_committed_after_its_takeover_failed_is_no_longer_listed_as_needing_attention(store, make_user):
    """A slow instance outlives its lease; the sweep takes the turn over and its last attempt fails (listed);
    then the slow instance commits the turn: it is done, so nobody is told it needs attention."""
    from factor_journal.models import InferredUpdate
    from factor_journal.planner import TurnContext

    user = make_user(store, org_id="org-takeover")
    session = store.start_session(user)
    turn = store.add_turn(user, session, "user", "Our data is all over the place")
    clock, config = Clock(), Settings(max_turn_attempts=2, claim_lease_seconds=60)
    slow = store.ledger.claim(_ref(user, session, turn), lease=config.claim_lease, now=clock())
    assert slow.won
    clock.advance(seconds=61)
    failing = TurnProcessor(store, ScriptedExtractor(ExtractionError("503")), config=config, clock=clock)
    assert recover_due_turns(failing) == {"needs_attention": 1}
    assert store.get_user(user).attention_turns == [f"{session}/{turn}"]
    created = store.turn_data(user, session, turn)["created_at"]
    late = InferredUpdate(
        factor_id="data_quality",
        value=25,
        confidence=0.7,
        rationale="scattered data",
        session_id=session,
        turn_id=turn,
        observed_at=created,
    )
    store.record_inferences(user, [late], turn=TurnContext(session, turn, created), idempotency_key=f"{session}/{turn}")
    assert status(store, user, session, turn) == "processed"
    assert store.get_user(user).attention_turns == []
    assert _row(store, "org-takeover", user)["needs_attention"] == 0


def _row(store, org_id: str, user: str) -> dict:
    return store.org_ref(org_id).collection("people").document(user).get().to_dict()


def test_invalid_input_is_never_retried(store, make_user):
    user, session = new_conversation(store, make_user)
    ref = store.turns(user, session).document()
    ref.set({"role": "user", "text": "   ", "created_at": datetime.now(UTC)})
    clock = Clock()
    model = ScriptedExtractor([reading("data_quality", 25)])
    processor = TurnProcessor(store, model, clock=clock)
    assert processor.process(user, session, ref.id).status == "invalid"
    recorded = store.turn_data(user, session, ref.id)["extraction"]
    assert "text is empty" in recorded["error"] and recorded["error_kind"] == "invalid_input"  # readable
    clock.advance(days=2)
    assert recover_due_turns(processor) == {}
    assert processor.process(user, session, ref.id).status == "invalid"
    assert model.requests == []
    assert store.summary(user).overall.total_factors_assessed == 0  # nothing written


def test_retries_interleaved_with_duplicates_produce_one_set_of_effects(instances, make_user):
    store = instances[0]
    user, session = new_conversation(store, make_user)
    text = "Our data is all over the place"
    turn = store.add_turn(user, session, "user", text)
    model = ReadingsByText({text: [reading("data_quality", 25)]}, fail_first=2)
    clock = Clock()
    processors = [TurnProcessor(s, model, clock=clock, config=Settings(retry_base_seconds=1)) for s in instances]
    for attempt in range(3):
        threads = [threading.Thread(target=p.process, args=(user, session, turn)) for p in processors]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        clock.advance(seconds=10 * 4**attempt)
        recover_due_turns(processors[attempt])
    assert model.total_calls == 3  # two failures, one success: each attempt called the model once
    assert status(store, user, session, turn) == "processed"
    [entry] = store.history(user, "data_quality").entries
    assert entry.turn_id == turn
    session_doc = store.session_data(user, session)
    assert session_doc["analysed_turns"] == 1
    assert store.summary(user).factors["data_quality"].evidence_count == 1


def test_a_turn_no_delivery_ever_claimed_is_found_by_the_sweep(store, make_user):
    user, session = new_conversation(store, make_user)
    written = datetime.now(UTC) - timedelta(minutes=5)
    turn = store.add_turn(user, session, "user", "Our data is all over the place", created_at=written)
    processor = TurnProcessor(store, ScriptedExtractor([reading("data_quality", 25)]))
    counts = recover_due_turns(processor)
    assert counts.get("processed", 0) >= 1
    assert status(store, user, session, turn) == "processed"


def test_turns_whose_delivery_was_lost_long_ago_are_found_however_old_and_only_once(store, make_user):
    """An outage, or sweeps that failed for hours: a turn no delivery claimed is analysed at the next sweep
    however long ago it was written, and once claimed it is no longer among the turns the sweep reads."""
    user, session = new_conversation(store, make_user)
    now = datetime.now(UTC)
    old = store.add_turn(user, session, "user", "Our data is all over the place", created_at=now - timedelta(days=3))
    hour = store.add_turn(
        user, session, "user", "Nobody trusts the sales figures", created_at=now - timedelta(minutes=31)
    )
    fresh = store.add_turn(user, session, "user", "We have one data engineer", created_at=now)
    model = ReadingsByText(
        {
            "Our data is all over the place": [reading("data_quality", 25)],
            "Nobody trusts the sales figures": [reading("data_quality", 20)],
        }
    )
    assert [ref.turn_id for ref in store.ledger.unclaimed(now - timedelta(minutes=2))] == [old, hour]  # oldest first

    counts = recover_due_turns(TurnProcessor(store, model))

    assert counts == {"processed": 2}
    assert status(store, user, session, old) == status(store, user, session, hour) == "processed"
    assert "extraction" not in store.turn_data(user, session, fresh)  # left to its own delivery
    assert "awaiting_analysis" not in store.turn_data(user, session, old)  # the claim took the mark off
    assert store.ledger.unclaimed(now - timedelta(minutes=2)) == []
    assert recover_due_turns(TurnProcessor(store, model)) == {} and model.total_calls == 2


def test_a_sweep_takes_at_most_its_limit_of_lost_turns_and_the_next_sweep_the_rest(store, make_user):
    user, session = new_conversation(store, make_user)
    written = datetime.now(UTC) - timedelta(hours=2)
    turns = [
        store.add_turn(user, session, "user", f"turn {i}", created_at=written + timedelta(seconds=i)) for i in range(5)
    ]
    processor = TurnProcessor(store, ScriptedExtractor([]))
    assert recover_due_turns(processor, limit=3) == {"no_update": 3}
    assert [status(store, user, session, turn) for turn in turns[:3]] == ["no_update"] * 3  # the oldest first
    assert recover_due_turns(processor, limit=3) == {"no_update": 2}
    assert recover_due_turns(processor, limit=3) == {}


def test_a_backlog_analysed_late_is_counted_in_the_minutes_it_was_written(store, make_user):
    """Forty-five turns written two a minute while deliveries were lost, analysed by one sweep twenty minutes
    later under a limit of thirty a minute: none is refused (each counts in the minute it was written); a burst
    over the limit within one minute is still refused however late it is analysed."""
    user, session = new_conversation(store, make_user)
    start = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(minutes=45)
    steady = [
        store.add_turn(user, session, "user", f"steady {i}", created_at=start + timedelta(seconds=30 * i))
        for i in range(45)
    ]
    burst_at = start + timedelta(minutes=30)
    burst = [store.add_turn(user, session, "user", f"burst {i}", created_at=burst_at) for i in range(4)]
    processor = TurnProcessor(
        store, ScriptedExtractor([]), config=Settings(turns_per_minute=3, turns_per_day=1000), enforce_rate_limits=True
    )
    counts = recover_due_turns(processor, limit=100)
    assert counts == {"no_update": 45 + 3, "rate_limited": 1}
    assert {status(store, user, session, turn) for turn in steady} == {"no_update"}
    assert [status(store, user, session, turn) for turn in burst].count("rate_limited") == 1


def test_a_turn_of_a_person_who_does_not_exist_writes_nothing_about_them(store, make_user):
    session = "s-ghost"
    ghost = f"ghost-{session}"
    turn = store.add_turn(ghost, session, "user", "Our data is all over the place")
    processor = TurnProcessor(store, ScriptedExtractor([]), enforce_rate_limits=True)
    assert processor.process(ghost, session, turn).status == "invalid"
    assert "unknown user" in store.turn_data(ghost, session, turn)["extraction"]["error"].lower()
    assert not store.client.document(f"users/{ghost}").get().exists
    assert list(store.client.collection(f"users/{ghost}/rate").stream()) == []  # no rate count about them


def test_a_damaged_turn_record_never_stops_the_sweep_and_is_listed_for_a_person(store, make_user, caplog):
    """A turn whose analysis record no longer reads (a bad write, a hand edit) is neither analysed again by a
    delivery nor left silent: the sweep lists it as needing attention and goes on to the other turns; a person's
    reprocess then analyses it."""
    user = make_user(store, org_id="org-damaged")
    session = store.start_session(user)
    written = datetime.now(UTC) - timedelta(minutes=5)
    lost = store.add_turn(user, session, "user", "Our data is all over the place", created_at=written)
    damaged = store.add_turn(user, session, "user", "Nobody trusts the sales figures", created_at=written)
    store.turns(user, session).document(damaged).update({"extraction": {"status": "processed", "attempts": "two"}})
    model = ReadingsByText(
        {
            "Our data is all over the place": [reading("data_quality", 25)],
            "Nobody trusts the sales figures": [reading("data_quality", 20)],
        }
    )
    processor = TurnProcessor(store, model)

    counts = recover_due_turns(processor)

    assert counts.get("processed", 0) >= 1 and counts.get("needs_attention", 0) >= 1
    assert status(store, user, session, lost) == "processed"  # the other turn was not held up
    recorded = store.turn_data(user, session, damaged)["extraction"]
    assert recorded["status"] == "needs_attention" and recorded["error_kind"] == "damaged"
    assert "attempts" in recorded["error"] and recorded["attempts"] == 0  # rewritten so that it reads
    assert store.get_user(user).attention_turns == [f"{session}/{damaged}"]
    assert _row(store, "org-damaged", user)["needs_attention"] == 1
    assert "no longer reads (attempts)" in caplog.text
    assert model.total_calls == 1  # the damaged turn was not analysed by the sweep
    assert damaged not in [ref.turn_id for ref in store.ledger.unclaimed(datetime.now(UTC))]

    assert processor.process(user, session, damaged, force=True).status == "processed"  # a person reprocesses it
    assert status(store, user, session, damaged) == "processed"
    assert store.get_user(user).attention_turns == []
    assert _row(store, "org-damaged", user)["needs_attention"] == 0


def test_turns_over_the_rate_limit_are_kept_marked_and_not_analysed(store, make_user):
    user, session = new_conversation(store, make_user)
    model = ScriptedExtractor([reading("data_quality", 25)])
    processor = TurnProcessor(
        store, model, config=Settings(turns_per_minute=2, turns_per_day=100), enforce_rate_limits=True
    )
    base = datetime.now(UTC).replace(second=0, microsecond=0)  # the four turns are written in one minute
    turns = [
        store.add_turn(user, session, "user", f"turn {i}", created_at=base + timedelta(seconds=i)) for i in range(4)
    ]
    statuses = [processor.process(user, session, turn).status for turn in turns]
    assert "rate_limited" not in statuses[:2] and statuses[2:] == ["rate_limited", "rate_limited"]
    assert len(model.requests) == 2
    recorded = store.turn_data(user, session, turns[3])
    assert recorded["text"] == "turn 3" and "over the limit of 2 a minute" in recorded["extraction"]["error"]


def test_a_burst_from_several_instances_refuses_only_the_turns_over_the_limit(instances, make_user):
    """Nine turns delivered at the same moment to three instances, a limit of five a minute: exactly four are
    refused (a turn is never refused for turns counted after it)."""
    store = instances[0]
    user, session = new_conversation(store, make_user)
    base = datetime.now(UTC)
    turns = [store.add_turn(user, session, "user", f"turn {i}", created_at=base) for i in range(9)]
    limits, clock = Settings(turns_per_minute=5, turns_per_day=100), Clock(base)  # one minute, whatever the run takes
    processors = [
        TurnProcessor(instance, ScriptedExtractor([]), config=limits, clock=clock, enforce_rate_limits=True)
        for instance in instances[:3]
    ]
    barrier = threading.Barrier(len(turns))
    statuses: list[str] = []

    def deliver(index: int) -> None:
        barrier.wait()
        statuses.append(processors[index % 3].process(user, session, turns[index]).status)

    threads = [threading.Thread(target=deliver, args=(index,)) for index in range(len(turns))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(statuses) == 9 and statuses.count("rate_limited") == 4, statuses


def test_the_daily_limit_counts_across_minutes(store, make_user):
    user, session = new_conversation(store, make_user)
    clock = Clock(datetime(2026, 11, 20, 9, 0, tzinfo=UTC))
    processor = TurnProcessor(
        store,
        ScriptedExtractor([]),
        config=Settings(turns_per_minute=5, turns_per_day=3),
        clock=clock,
        enforce_rate_limits=True,
    )
    statuses = []
    for i in range(4):
        turn = store.add_turn(user, session, "user", f"turn {i}", created_at=clock())
        statuses.append(processor.process(user, session, turn).status)
        clock.advance(minutes=2)
    assert statuses == ["no_update", "no_update", "no_update", "rate_limited"]


def test_counted_client_counts_every_read_and_write(store, make_user):
    user = make_user(store)
    store.stats.reset()
    store.summary(user)
    store.client.document(f"users/{user}/anything/x").set({"a": 1})
    list(store.client.collection(f"users/{user}/empty").stream())
    assert (store.stats.reads, store.stats.writes) == (2, 1)  # an empty query is billed one read
    batch = store.client.batch()
    for i in range(3):
        batch.set(store.client.document(f"users/{user}/anything/{i}"), {"i": i, "n": firestore.Increment(1)})
    batch.commit()
    assert store.stats.writes == 4


def test_the_deployed_trigger_counts_turns_against_the_limits(monkeypatch, firestore_client):
    """Clients write turns through the trigger, so that is where the limits hold (runtime wiring)."""
    from factor_journal import runtime

    monkeypatch.setenv("FJ_FIRESTORE_DATABASE", "fj-tests")
    monkeypatch.setenv("FJ_EXTRACTOR", "rules")
    runtime.reset()
    try:
        assert runtime.turn_processor().enforce_rate_limits
    finally:
        runtime.reset()
