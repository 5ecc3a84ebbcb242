"""The turn pipeline on the Firestore emulator: outcomes, exactly-once, ordering, bad extractor output.

The pipeline is driven in-process here (in the ``fj-tests`` database, where no
trigger listens) so each case is deterministic; tests/test_trigger.py runs
the same code through the Functions emulator.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest

from doubles import ScriptedExtractor, reading
from factor_journal.documents import SessionDocument, TokenUsage
from factor_journal.extraction.base import ExtractionError
from factor_journal.extraction.offline import OfflineExtractor
from factor_journal.models import InferredUpdate
from factor_journal.pipeline import TurnProcessor
from factor_journal.planner import TurnContext


@pytest.fixture
def conversation(store, make_user):
    """A registered user with an open session; ``say`` writes a turn and returns its id."""
    user = make_user(store)
    session = store.start_session(user)
    clock = [datetime.now(UTC) - timedelta(minutes=30)]

    def say(role: str, text: str, at: datetime | None = None) -> str:
        clock[0] += timedelta(seconds=30)
        return store.add_turn(user, session, role, text, created_at=at or clock[0])

    return user, session, say


def outcome(store, user, session, turn):
    return store.turn_data(user, session, turn)["extraction"]


def test_user_turn_updates_factors_journal_summary_and_session(store, conversation):
    user, session, say = conversation
    say("assistant", "Tell me about your data.")
    say("user", "Our data is all over the place, 5 different systems")
    say("assistant", "That suggests limited data governance. Would you say you have a data catalog?")
    turn = say("user", "No, nothing like that yet")
    processor = TurnProcessor(store, OfflineExtractor(store.catalog))

    result = processor.process(user, session, turn)

    assert result.status == "processed"
    governance = store.factor(user, "data_governance")
    assert governance.current_value is not None and governance.current_value <= 35
    [entry] = store.history(user, "data_governance").entries
    assert entry.turn_id == turn and entry.session_id == session
    assert "data catalog" in entry.conversation_excerpt and "5 different systems" in entry.conversation_excerpt
    assert entry.conversation_excerpt.count("\n") + 1 == 4  # two exchanges before the answer, then the answer
    recorded = outcome(store, user, session, turn)
    assert recorded["status"] == "processed" and entry.entry_id in recorded["entry_ids"]
    assert recorded["extractor"] == "offline" and recorded["model"]
    session_doc = store.session_data(user, session)
    assert session_doc["last_topic_factor_id"] == "data_governance"
    assert session_doc["last_turn_id"] == turn
    assert store.summary(user).last_conversation.factor_id == "data_governance"


def test_assistant_turns_are_context_only(store, conversation):
    user, session, say = conversation
    turn = say("assistant", "Would you say you have a data catalog? Our data scientists love those.")
    extractor = ScriptedExtractor([reading("data_quality", 50)])
    assert TurnProcessor(store, extractor).process(user, session, turn).status == "context"
    assert extractor.requests == []
    assert store.summary(user).overall.total_factors_assessed == 0


def test_one_llm_call_per_turn_and_tokens_traced_to_turn_session_and_user(store, conversation):
    user, session, say = conversation
    extractor = ScriptedExtractor([reading("data_quality", 30), reading("sensor_data", 60)])
    processor = TurnProcessor(store, extractor)
    first = say("user", "We clean data by hand in spreadsheets; the sensors on line 2 log telemetry.")
    second = say("user", "And the warehouse team deduplicates monthly.")
    processor.process(user, session, first)
    processor.process(user, session, second)
    assert len(extractor.requests) == 2
    assert outcome(store, user, session, first)["prompt_tokens"] == 120
    assert outcome(store, user, session, first)["response_tokens"] == 30
    assert store.session_data(user, session)["usage"] == {"prompt_tokens": 240, "response_tokens": 60}
    assert store.get_user(user) is not None
    user_doc = store.client.collection("users").document(user).get().to_dict()
    assert user_doc["usage"] == {"prompt_tokens": 240, "response_tokens": 60}


def test_the_prompt_carries_candidates_not_the_catalog(store, conversation):
    user, session, say = conversation
    say("assistant", "Would you say you have a data catalog?")
    turn = say("user", "No. Our data is all over the place and nobody owns it.")
    extractor = ScriptedExtractor([])
    TurnProcessor(store, extractor).process(user, session, turn)
    [request] = extractor.requests
    ids = [c.factor_id for c in request.candidates]
    assert "data_governance" in ids and "data_quality" in ids
    assert len(ids) <= 8 < len(store.catalog.assessable_factors)
    assert [t.role for t in request.recent] == ["assistant"]


def test_concurrent_deliveries_of_one_turn_journal_once(store, conversation):
    user, session, say = conversation
    turn = say("user", "Our data is all over the place")
    processor = TurnProcessor(store, ScriptedExtractor([reading("data_quality", 25)]))
    data = store.turn_data(user, session, turn)
    results: list[str] = []
    threads = [
        threading.Thread(target=lambda: results.append(processor.process(user, session, turn, dict(data)).status))
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results.count("processed") == 1 and set(results) <= {"processed", "busy", "duplicate"}
    assert len(processor.extractor.requests) == 1  # one model call, however many deliveries
    assert len(store.history(user, "data_quality").entries) == 1
    assert store.summary(user).factors["data_quality"].evidence_count == 1


def test_concurrent_turns_of_one_user_lose_no_update(store, make_user):
    user = make_user(store)
    sessions = [store.start_session(user) for _ in range(3)]
    factors = [
        "data_quality",
        "data_governance",
        "sensor_data",
        "ml_expertise",
        "ml_infrastructure",
        "data_infrastructure",
    ]
    base = datetime.now(UTC) - timedelta(minutes=5)
    jobs = []
    for index, factor in enumerate(factors):
        session = sessions[index % 3]
        turn = store.add_turn(user, session, "user", f"about {factor}", created_at=base + timedelta(seconds=index))
        jobs.append((session, turn, factor))
    processors = {factor: TurnProcessor(store, ScriptedExtractor([reading(factor, 40)])) for factor in factors}
    threads = [
        threading.Thread(target=processors[factor].process, args=(user, session, turn))
        for session, turn, factor in jobs
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    summary = store.summary(user)
    assert {f for f in factors if summary.factors.get(f) and summary.factors[f].is_assessed} == set(factors)
    assert all(outcome(store, user, s, t)["status"] == "processed" for s, t, _ in jobs)


def test_bad_extractor_output_is_dropped_with_reasons_and_the_rest_applies(store, conversation):
    user, session, say = conversation
    turn = say(
        "user", "Our data is a mess, we have telemetry from every press, two data scientists and a data catalog."
    )
    extractor = ScriptedExtractor(
        [
            reading("data_quality", 20),
            reading("no_such_factor", 50),
            reading("sensor_data", 250),
            reading("ml_expertise", 50, 1.7),
            {"factor_id": "data_governance", "value": "high"},
            "not even a dict",
            reading("ai_readiness_score", 90),
        ]
    )
    result = TurnProcessor(store, extractor).process(user, session, turn)
    assert result.status == "processed"
    assert store.factor(user, "data_quality").current_value == 20
    for untouched in ("sensor_data", "ml_expertise", "data_governance"):
        assert not store.factor(user, untouched).is_assessed
    reasons = " | ".join(outcome(store, user, session, turn)["rejected"])
    for expected in ("unknown factor", "off the scale", "outside 0-1", "malformed", "derived factor"):
        assert expected in reasons


def test_extractor_failure_marks_the_turn_failed_and_reprocessing_recovers(store, conversation):
    user, session, say = conversation
    turn = say("user", "Our data is all over the place")
    failing = TurnProcessor(store, ScriptedExtractor(ExtractionError("Vertex AI answered 503 after 4 attempts")))
    assert failing.process(user, session, turn).status == "failed"
    recorded = outcome(store, user, session, turn)
    assert recorded["status"] == "failed" and "503" in recorded["error"] and recorded["attempts"] == 1
    assert not store.factor(user, "data_quality").is_assessed

    assert recorded["next_attempt_at"] > datetime.now(UTC)  # retried automatically, not at once
    early = TurnProcessor(store, ScriptedExtractor([reading("data_quality", 25)]))
    assert early.process(user, session, turn).status == "waiting"
    later = datetime.now(UTC) + timedelta(hours=1)
    healthy = TurnProcessor(store, ScriptedExtractor([reading("data_quality", 25)]), clock=lambda: later)
    assert healthy.process(user, session, turn).status == "processed"
    assert outcome(store, user, session, turn)["status"] == "processed"
    assert store.factor(user, "data_quality").current_value == 25


def test_turns_of_unknown_users_and_sessions_fail_readably(store, make_user):
    ghost = "ghost-user"
    ref = store.turns(ghost, "s1").document()
    ref.set({"role": "user", "text": "our data is all over the place", "created_at": datetime.now(UTC)})
    processor = TurnProcessor(store, ScriptedExtractor([reading("data_quality", 25)]))
    assert processor.process(ghost, "s1", ref.id).status == "invalid"
    assert "unknown user" in store.turn_data(ghost, "s1", ref.id)["extraction"]["error"]

    user = make_user(store)
    ref = store.turns(user, "never-started").document()
    ref.set({"role": "user", "text": "our data is all over the place", "created_at": datetime.now(UTC)})
    assert processor.process(user, "never-started", ref.id).status == "invalid"
    assert "unknown session" in store.turn_data(user, "never-started", ref.id)["extraction"]["error"]
    assert store.summary(user).overall.total_factors_assessed == 0


class DeletesTheTurn(ScriptedExtractor):
    """Reads the turn, and meanwhile the turn is deleted (after its claim, before its commit)."""

    def __init__(self, store, *outputs: list) -> None:
        super().__init__(*outputs)
        self.store = store

    def extract(self, request):
        self.store.turns(request.user_id, request.session_id).document(request.turn_id).delete()
        return super().extract(request)


def test_a_turn_deleted_after_its_claim_gets_nothing_applied_and_is_not_recreated(store, conversation):
    user, session, say = conversation
    processor = TurnProcessor(store, ScriptedExtractor([reading("data_quality", 30)]))
    assert processor.process(user, session, say("user", "We clean data by hand")).status == "processed"
    before = (store.factor(user, "data_quality"), store.summary(user), store.session_data(user, session))
    turn = say("user", "Our data is all over the place and nobody owns it")

    result = TurnProcessor(store, DeletesTheTurn(store, [reading("data_quality", 80)])).process(user, session, turn)

    assert (result.status, result.entry_ids) == ("missing", [])
    assert store.turn_data(user, session, turn) is None  # not recreated as a stub
    assert len(store.history(user, "data_quality").entries) == 1  # no journal entry of the deleted turn
    assert (store.factor(user, "data_quality"), store.summary(user), store.session_data(user, session)) == before


def test_a_change_for_a_turn_that_no_longer_exists_says_it_is_missing_and_writes_nothing(store, conversation):
    """The store's answer to the pipeline: ``missing``, neither a duplicate nor a change."""
    user, session, _ = conversation
    update = InferredUpdate(factor_id="data_quality", value=80, confidence=0.7, rationale="said so")
    context = TurnContext(session_id=session, turn_id="never-written", observed_at=datetime.now(UTC))
    change = store.record_inferences(user, [update], turn=context, idempotency_key=f"{session}/never-written")
    assert change.missing and not change.duplicate and change.entries == [] and change.summary is None
    assert store.turn_data(user, session, "never-written") is None
    assert store.factor(user, "data_quality").current_value is None


def test_an_unexpected_error_is_recorded_on_the_turn_and_replayable(store, conversation):
    """A profile that no longer reads is not guessed at (it says who the person is and where they belong): the turn
    fails as ``internal``, is kept, and is analysed once the profile is mended.  (Damaged documents that can be set
    aside never fail a turn: tests/factor_journal/test_set_aside.py.)"""
    user, session, say = conversation
    processor = TurnProcessor(store, ScriptedExtractor([reading("data_quality", 25)], [reading("data_quality", 40)]))
    assert processor.process(user, session, say("user", "Our data is all over the place")).status == "processed"
    profile = store.client.document(f"users/{user}")
    profile.update({"reminders_opt_out": "not a yes or no"})  # a field no code writes so
    turn = say("user", "Finance has cleaned up its customer records")
    assert processor.process(user, session, turn).status == "failed"
    recorded = outcome(store, user, session, turn)
    assert recorded["error_kind"] == "internal" and "ValidationError" in recorded["error"]
    assert store.factor(user, "data_quality").current_value == 25  # nothing of the turn was applied
    profile.update({"reminders_opt_out": False})  # repaired by hand
    assert processor.process(user, session, turn, force=True).status == "processed"  # what reprocess does
    assert 25 < store.factor(user, "data_quality").current_value < 40


def twin_conversations(store, make_user):
    """Two users told the same things at the same times (one is damaged, the other is the oracle)."""
    users = [make_user(store), make_user(store)]
    sessions = [store.start_session(user) for user in users]
    clock = [datetime.now(UTC) - timedelta(minutes=30)]

    def say(text: str) -> list[str]:
        clock[0] += timedelta(seconds=30)
        return [store.add_turn(u, s, "user", text, created_at=clock[0]) for u, s in zip(users, sessions, strict=True)]

    return users, sessions, say


def test_a_damaged_factor_is_folded_again_from_its_journal_and_rewritten_by_the_next_turn(store, make_user, caplog):
    (user, twin), (session, twin_session), say = twin_conversations(store, make_user)
    script = [
        [reading("data_quality", 20, 0.6), reading("ai_strategy", 70)],
        [reading("data_quality", 60, 0.6)],
        [reading("data_quality", 45, 0.7)],
    ]
    processors = [TurnProcessor(store, ScriptedExtractor(*script)) for _ in range(2)]

    def process(turns: list[str]) -> None:
        for processor, u, s, turn in zip(processors, (user, twin), (session, twin_session), turns, strict=True):
            assert processor.process(u, s, turn).status == "processed"

    process(say("Our data is all over the place; we have a written AI strategy the board signed off"))
    process(say("Actually, the finance data is clean"))
    stored = store.factor(user, "data_quality")
    document = store.client.document(f"users/{user}/factors/data_quality")
    document.set({**document.get().to_dict(), "current_value": "not a number", "evidence_count": -3})

    def same(a, b) -> bool:
        return a.model_dump(exclude={"last_updated"}) == b.model_dump(exclude={"last_updated"})

    shown = store.factor(user, "data_quality")  # a read folds the journal again and never shows the damage
    assert same(shown, stored) and 20 < shown.current_value < 60
    assert "factor data_quality of user" in caplog.text and "was damaged" in caplog.text
    rebuilt = store.rebuild_summary_by_scan(user)  # the scan a damaged summary is rebuilt from reads it too
    assert rebuilt.factors["data_quality"].current_value == stored.current_value
    assert rebuilt.model_dump(exclude={"updated_at"}) == store.summary(user).model_dump(exclude={"updated_at"})

    process(say("The CRM clean-up finished last month"))  # the next turn on the factor rewrites it
    healed = store.journal.factor(user, "data_quality")
    oracle = store.factor(twin, "data_quality")
    assert document.get().to_dict()["evidence_count"] == oracle.evidence_count == 3
    assert healed.current_value == oracle.current_value and healed.current_confidence == oracle.current_confidence
    assert [e.new_value for e in store.history(user, "data_quality").entries] == [
        e.new_value for e in store.history(twin, "data_quality").entries
    ]
    mine, theirs = store.journal.summary(user), store.summary(twin)
    assert mine.overall == theirs.overall and mine.categories == theirs.categories
    assert {f: (v.current_value, v.current_confidence, v.evidence_count) for f, v in mine.factors.items()} == {
        f: (v.current_value, v.current_confidence, v.evidence_count) for f, v in theirs.factors.items()
    }


def test_a_damaged_summary_is_rebuilt_from_the_factors_and_rewritten_by_the_next_turn(store, conversation, caplog):
    user, session, say = conversation
    processor = TurnProcessor(store, ScriptedExtractor([reading("data_quality", 25)], [reading("ai_strategy", 70)]))
    assert processor.process(user, session, say("user", "Our data is all over the place")).status == "processed"
    before = store.summary(user)
    document = store.client.document(f"users/{user}/metadata/assessment")
    damaged = document.get().to_dict()
    damaged["assessment_summary"]["overall"] = "half written"
    del damaged["assessment_summary"]["categories"]
    document.set(damaged)

    shown = store.summary(user)  # read: rebuilt from the factor documents, the damaged one never shown
    assert shown.factors["data_quality"].current_value == 25
    assert shown.overall == before.overall and shown.categories == before.categories
    assert shown.last_conversation == before.last_conversation  # the part that still read is kept
    assert "was damaged" in caplog.text

    assert (
        processor.process(user, session, say("user", "We have a written AI strategy that the board signed off")).status
        == "processed"
    )
    healed = store.journal.summary(user)  # the stored document reads again, with both factors
    assert healed.factors["data_quality"].current_value == 25
    assert healed.factors["ai_strategy"].current_value == 70
    assert healed.model_dump(exclude={"updated_at"}) == store.rebuild_summary_by_scan(user).model_dump(
        exclude={"updated_at"}
    )


def test_a_damaged_session_document_is_rewritten_by_the_next_turn_instead_of_failing_it(store, conversation, caplog):
    user, session, say = conversation
    readings = [reading("data_quality", 25)], [reading("ai_strategy", 70)], [reading("sensor_data", 60)]
    processor = TurnProcessor(store, ScriptedExtractor(*readings))
    first = say("user", "Our data is all over the place")
    assert processor.process(user, session, first).status == "processed"
    document = store.client.document(f"users/{user}/conversations/{session}")
    kept = document.get().to_dict()
    assert kept["analysed_turns"] == 1 and kept["last_turn_id"] == first
    document.update({"last_topic_at": "yesterday", "usage": "lots"})  # two fields no code writes

    second = say("user", "We have a written AI strategy that the board signed off")
    assert processor.process(user, session, second).status == "processed"  # not an internal error
    assert "session" in caplog.text and "was damaged (last_topic_at, usage): rewritten" in caplog.text
    healed = SessionDocument.of(session, document.get().to_dict())  # reads again
    assert healed.analysed_turns == 2  # a count that still read is carried on
    assert healed.usage == TokenUsage(prompt_tokens=120, response_tokens=30)  # this turn's; the damaged sum is lost
    assert (healed.last_turn_id, healed.last_topic_factor_id) == (second, "ai_strategy")
    assert healed.started_at == kept["started_at"]
    assert store.summary(user).factors["ai_strategy"].current_value == 70

    caplog.clear()
    third = say("user", "The lines log every sensor reading")
    assert processor.process(user, session, third).status == "processed"
    assert "was damaged" not in caplog.text  # merged into as usual from then on
    after = SessionDocument.of(session, document.get().to_dict())
    assert after.analysed_turns == 3 and after.usage == TokenUsage(prompt_tokens=240, response_tokens=60)


def test_the_latest_session_is_the_one_last_spoken_in_whatever_state_the_others_are_in(store, conversation, make_user):
    user, session, say = conversation
    assert store.latest_session(user) == session  # started, nothing analysed yet: when it started counts
    TurnProcessor(store, ScriptedExtractor([reading("data_quality", 25)])).process(
        user, session, say("user", "Our data is all over the place")
    )
    earlier = datetime.now(UTC) - timedelta(days=3)
    store.start_session(user, "opened-before", started_at=earlier)  # never spoken in
    assert store.latest_session(user) == session
    store.start_session(user, "opened-now")  # started after the last analysed turn
    assert store.latest_session(user) == "opened-now"
    store.client.document(f"users/{user}/conversations/opened-now").update({"started_at": "soon"})
    assert store.latest_session(user) == session  # a damaged one counts by what still reads
    assert store.latest_session(make_user(store)) is None


def test_registering_again_rewrites_a_damaged_summary(store, conversation):
    user, session, say = conversation
    TurnProcessor(store, ScriptedExtractor([reading("data_quality", 25)])).process(
        user, session, say("user", "Our data is all over the place")
    )
    document = store.client.document(f"users/{user}/metadata/assessment")
    document.set({"assessment_summary": {"overall": {}}})
    store.register_user(store.get_user(user))
    assert store.journal.summary(user).factors["data_quality"].current_value == 25
