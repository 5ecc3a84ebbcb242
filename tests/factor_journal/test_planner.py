"""The pure change planner: what a change writes, given what it read (no Firestore)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from planned import Person
from test_folding import T0, blank, deliver, readings

from factor_journal import transitions
from factor_journal.documents import AnalysisDetails, ExtractionOutcome, SessionDocument, TokenUsage, TurnStatus
from factor_journal.folding import Reading, refold, refold_damaged
from factor_journal.graph import graph_for
from factor_journal.models import EntryKind, FactorState, InferredUpdate, Source
from factor_journal.planner import (
    ChangeInputs,
    DamagedFactorError,
    DamagedSummaryError,
    SessionProgress,
    TurnContext,
    attention_after,
    journals_to_read,
    moved_forward,
    plan_change,
    read_turn,
    repaired_session,
    said_in_change,
    stored_factor,
    stored_summary,
    timelines_to_read,
    touched_factors,
    touched_states,
)
from factor_journal.summary import build_summary


def test_a_factor_given_with_its_journal_is_folded_again_and_written_even_without_readings(catalog):
    """A damaged factor document is planned from a blank state plus its journal: the plan writes the state the
    journal folds to, and a new reading on top lands where it would have on the undamaged state."""
    graph = graph_for(catalog)
    said = readings()
    reference, journal = deliver(catalog, said[:4])
    damaged = blank()  # what the change knows of the factor once its document does not read
    inputs = ChangeInputs(
        user_id="u",
        summary=None,
        states={"data_quality": damaged},
        journals={"data_quality": list(journal.values())},
        last_active=None,
        now=T0 + timedelta(hours=1),
    )

    repair = plan_change(catalog, graph, inputs)
    assert set(repair.states) >= {"data_quality"} and repair.entries == [] and repair.rewritten == []
    assert repair.states["data_quality"].model_dump(exclude={"last_updated"}) == reference.model_dump(
        exclude={"last_updated"}
    )
    assert repair.summary.factors["data_quality"].current_value == reference.current_value

    expected, _ = deliver(catalog, said[:5])
    with_reading = plan_change(catalog, graph, inputs, readings=[said[4]])
    assert [e.entry_id for e in with_reading.entries][:1] == ["e4"]
    assert with_reading.states["data_quality"].model_dump(exclude={"last_updated"}) == expected.model_dump(
        exclude={"last_updated"}
    )


def test_an_untouched_factor_without_a_journal_is_not_written(catalog):
    graph = graph_for(catalog)
    state, _ = deliver(catalog, readings()[:2])
    inputs = ChangeInputs(
        user_id="u",
        summary=None,
        states={
            "data_quality": state,
            "ai_strategy": FactorState(factor_id="ai_strategy", category=catalog.factor("ai_strategy").category),
        },
        journals={},
        last_active=None,
        now=T0,
    )
    plan = plan_change(catalog, graph, inputs, readings=[])
    assert plan.states == {} and plan.entries == []


# What a change reads and derives again -------------------------------------------------------------------------


def test_a_summary_field_that_does_not_read_is_damaged_and_keeps_the_last_conversation_that_does(catalog):
    person = Person(catalog)
    person.say("data_quality", 25)
    stored = person.summary.to_document()
    assert stored_summary(stored) == person.summary and stored_summary(None) is None and stored_summary({}) is None
    damaged = {**stored, "overall": "half written"}
    del damaged["categories"]
    with pytest.raises(DamagedSummaryError) as caught:
        stored_summary(damaged)
    assert caught.value.last_conversation == person.summary.last_conversation
    with pytest.raises(DamagedSummaryError) as caught:
        stored_summary({**damaged, "last_conversation": {"topic": 3}})
    assert caught.value.last_conversation is None


def test_a_damaged_summary_is_rebuilt_whole_from_the_factor_states_and_its_salvaged_last_conversation(catalog):
    person = Person(catalog)
    person.say("data_quality", 25)
    person.correct("data_governance", 60, "stated")
    damaged = {**person.summary.to_document(), "categories": "lost"}
    with pytest.raises(DamagedSummaryError) as caught:
        stored_summary(damaged)
    states = {fid: person.factor(fid) for fid in person.documents}
    rebuilt = build_summary(catalog, person.graph, states, caught.value.last_conversation, person.clock)
    assert rebuilt.model_dump(exclude={"updated_at"}) == person.summary.model_dump(exclude={"updated_at"})


def test_a_factor_document_that_does_not_read_is_damaged(catalog):
    state = FactorState(factor_id="data_quality", category="data_readiness", current_value=20)
    assert stored_factor(state.to_document()) == state
    assert stored_factor(None) is None and stored_factor({}) is None
    with pytest.raises(DamagedFactorError, match="invalid field"):
        stored_factor({**state.to_document(), "current_value": "not a number"})


def test_a_touched_factor_reads_from_its_document_or_starts_blank_and_the_untouched_keep_the_summarys_copy(catalog):
    kept = FactorState(factor_id="sensor_data", category="data_readiness", current_value=40)
    stale = FactorState(factor_id="data_quality", category="data_readiness", current_value=10)
    fresh = stale.model_copy(update={"current_value": 30})
    states, damaged = touched_states(
        catalog,
        ["data_quality", "ml_expertise"],
        {"data_quality": fresh.to_document(), "ml_expertise": None},
        {"sensor_data": kept, "data_quality": stale},
    )
    assert damaged == {}
    assert states["data_quality"] == fresh  # the document, not the summary's copy
    assert states["ml_expertise"] == FactorState(factor_id="ml_expertise", category="ai_capability")  # missing row
    assert states["sensor_data"] == kept


def test_a_damaged_touched_factor_keeps_the_summarys_copy_and_is_named_for_a_refold(catalog):
    flagged = FactorState(
        factor_id="data_quality",
        category="data_readiness",
        current_value=20,
        needs_recheck=True,
        recheck_reason="inferred from Data governance, which the user corrected",
    )
    bad = {"factor_id": "data_quality", "current_value": "not a number"}
    states, damaged = touched_states(catalog, ["data_quality"], {"data_quality": bad}, {"data_quality": flagged})
    assert states["data_quality"] == flagged and list(damaged) == ["data_quality"]
    assert "invalid field" in damaged["data_quality"]
    states, damaged = touched_states(catalog, ["data_quality"], {"data_quality": bad}, {})
    assert states["data_quality"] == blank() and list(damaged) == ["data_quality"]  # no copy either: blank


def test_only_late_readings_and_damaged_factors_have_their_journal_read(catalog):
    state, _ = deliver(catalog, readings()[:3])  # folded through minute 2
    said = readings()
    states = {"data_quality": state}
    assert journals_to_read(states, [said[3]], []) == []  # newer than everything folded: one fold step
    assert journals_to_read(states, [said[1]], []) == ["data_quality"]  # said before what is folded: a refold
    assert journals_to_read(states, [said[3]], ["ml_expertise", "data_quality"]) == ["data_quality", "ml_expertise"]


def test_a_decision_is_said_now_and_a_reading_when_it_was_observed(catalog):
    said = readings()[:2]
    now = T0 + timedelta(days=1)
    assert said_in_change(said, [], now) == [("data_quality", T0), ("data_quality", T0 + timedelta(minutes=1))]
    assert said_in_change([], ["data_quality", "ml_expertise"], now) == [("data_quality", now), ("ml_expertise", now)]


def test_a_composite_is_derived_again_along_every_components_timeline_only_when_a_reading_arrives_late(catalog):
    graph = graph_for(catalog)
    components = sorted(catalog.factor("ai_readiness_score").composite)
    composite = FactorState(factor_id="ai_readiness_score", category="ai_capability", current_value=50, observed_at=T0)
    states = {"ai_readiness_score": composite}
    later, earlier = T0 + timedelta(minutes=5), T0 - timedelta(minutes=5)
    assert timelines_to_read(catalog, graph, states, [], [("data_quality", later)]) == []  # in order: one more step
    stale = timelines_to_read(catalog, graph, states, [], [("data_quality", earlier)])
    assert stale == sorted(["ai_readiness_score", *components])
    assert timelines_to_read(catalog, graph, states, [], [("data_quality", T0)]) == stale  # same instant: late too
    refolded = timelines_to_read(catalog, graph, states, ["data_quality"], [("data_quality", later)])
    assert refolded == stale  # a component folded again (a late reading, damage) moves its composite's history
    assert timelines_to_read(catalog, graph, {}, [], [("data_quality", earlier)]) == []  # never derived yet


@pytest.mark.parametrize("status", ["processed", "no_update"])
def test_a_duplicate_delivery_of_a_done_turn_reads_nothing_more(catalog, status):
    done = {"extraction": {"status": status, "attempts": 1, "entry_ids": ["e1"]}}
    read = read_turn("s1", done, {"usage": "not even a session"})
    assert read.duplicate and read.outcome.entry_ids == ["e1"] and read.session is None


@pytest.mark.parametrize("status", ["processing", "failed", "needs_attention"])
def test_a_turn_not_done_yet_is_analysed_with_its_session(catalog, status):
    turn = {"extraction": {"status": status, "attempts": 2}}
    read = read_turn("s1", turn, {"analysed_turns": 3, "last_turn_id": "t2"})
    assert not read.duplicate and read.outcome.attempts == 2
    assert (read.session.analysed_turns, read.session.last_turn_id, read.session_damage) == (3, "t2", ())


def test_a_turn_in_a_session_never_written_starts_it(catalog):
    read = read_turn("s1", {"role": "user", "text": "hi"}, None)
    assert not read.duplicate and read.outcome is None
    assert read.session == SessionDocument(session_id="s1") and read.session_damage == ()


def test_a_turn_that_no_longer_exists_is_gone_and_nothing_else_is_read(catalog):
    read = read_turn("s1", None, {"analysed_turns": 4})
    assert read.gone and not read.duplicate and read.session is None and read.outcome is None
    assert not read_turn("s1", {}, None).gone  # an existing turn with no fields is not gone


def test_a_damaged_session_is_salvaged_and_named_for_a_whole_rewrite(catalog):
    turn = {"role": "user", "text": "hi"}
    read = read_turn("s1", turn, {"analysed_turns": 4, "last_topic_at": "yesterday", "usage": "lots"})
    assert read.session_damage == ("last_topic_at", "usage")
    assert read.session.analysed_turns == 4 and read.session.usage == TokenUsage()


def test_a_repaired_session_counts_on_from_what_still_read_and_moves_where_we_were_forward(catalog):
    stored = SessionDocument(session_id="s1", analysed_turns=4, started_at=T0, last_topic="Data quality")
    progress = SessionProgress(
        session_id="s1",
        prompt_tokens=120,
        response_tokens=30,
        last_active=T0,
        last_turn_id="t5",
    )
    document = repaired_session(stored, progress)
    assert document["analysed_turns"] == 5 and document["started_at"] == T0
    assert document["usage"] == {"prompt_tokens": 120, "response_tokens": 30}  # a damaged sum starts again
    assert (document["last_turn_id"], document["last_topic"]) == ("t5", "Data quality")  # the topic did not move
    assert moved_forward(progress) == {"last_active": T0, "last_turn_id": "t5"}


def test_an_analysed_turn_needs_nobodys_attention_any_more(catalog):
    turn = TurnContext(session_id="s1", turn_id="t2", observed_at=T0)
    assert attention_after(["s1/t1", "s1/t2", "s2/t2"], turn) == ["s1/t1", "s2/t2"]
    assert attention_after(["s1/t1"], turn) == ["s1/t1"]  # unchanged: nothing is written
    assert attention_after(["s1/t2"], None) == ["s1/t2"]  # a person's decision settles no turn


def test_a_turns_outcome_carries_on_the_attempts_of_the_claim_it_settles(catalog):
    graph = graph_for(catalog)
    turn = TurnContext(session_id="s1", turn_id="t1", observed_at=T0)
    claimed = ExtractionOutcome(status=TurnStatus.processing, attempts=3)
    inputs = ChangeInputs(
        user_id="u",
        summary=None,
        states={"data_quality": blank()},
        journals={},
        last_active=None,
        now=T0,
        session=SessionDocument(session_id="s1"),
        outcome=claimed,
    )
    plan = plan_change(catalog, graph, inputs, readings=readings()[:1], turn=turn)
    assert plan.outcome.status == TurnStatus.processed and plan.outcome.attempts == 3
    first = plan_change(catalog, graph, replace(inputs, outcome=None), readings=readings()[:1], turn=turn)
    assert first.outcome.attempts == 0


def test_a_damaged_factor_is_folded_again_from_its_journal_with_the_summarys_recheck_flag(catalog):
    _, journal = deliver(catalog, readings()[:4])
    entries = list(journal.values())
    reference = refold(catalog, blank(), entries, [], "u", T0, [])[0]
    flagged = blank().model_copy(update={"needs_recheck": True, "recheck_reason": "corrected elsewhere"})
    now = T0 + timedelta(days=2)
    state = refold_damaged(catalog, "data_quality", entries, flagged, "u", now)
    assert state.current_value == reference.current_value and state.evidence_count == 4
    assert state.needs_recheck and state.recheck_reason == "corrected elsewhere"
    assert state.last_updated == max(e.recorded_at for e in entries)  # dated when its journal was last written
    assert refold_damaged(catalog, "data_quality", [], None, "u", now) == blank().model_copy(
        update={"last_updated": now}
    )
    assert refold_damaged(catalog, "no_such_factor", entries, None, "u", now) is None


def test_a_refold_after_a_correction_keeps_the_persons_value_whatever_came_late(catalog):
    person = Person(catalog)
    person.say("data_quality", 20, observed_at=T0 + timedelta(minutes=1))
    person.correct("data_quality", 70, "we checked")
    late = person.say("data_quality", 35, observed_at=T0)  # said before both, delivered last
    assert "data_quality" in person.journal_reads and late.effective  # a late reading: its journal folded again
    assert person.factor("data_quality").current_value == 70
    person.documents["data_quality"] = {"factor_id": "data_quality", "current_value": "lost"}
    person.say("data_quality", 72)  # the next change repairs the damaged document from the journal
    assert "data_quality" in person.journal_reads
    state = person.factor("data_quality")
    assert state.current_value == 70 and state.inference_status == "user_provided" and state.evidence_count == 4


def test_out_of_order_readings_leave_the_composite_as_in_order(catalog):
    minutes = [(0, "data_quality", 20), (1, "ml_expertise", 60), (2, "data_quality", 40)]

    def run(order):
        person = Person(catalog)
        for i in order:
            minute, fid, value = minutes[i]
            person.say(fid, value, observed_at=T0 + timedelta(minutes=minute))
        return person

    in_order, shuffled = run([0, 1, 2]), run([2, 1, 0])
    ids = {"last_updated", "last_entry_id", "folded_through_id"}  # entry ids of readings recorded apart differ
    composite = in_order.factor("ai_readiness_score")
    assert shuffled.factor("ai_readiness_score").model_dump(exclude=ids) == composite.model_dump(exclude=ids)
    values = [(e.observed_at, e.new_value) for e in in_order.journal("ai_readiness_score")]
    assert [(e.observed_at, e.new_value) for e in shuffled.journal("ai_readiness_score")] == values
    assert len(values) == 3  # one derived entry per moment the components moved it, none from states never held


# Turns delivered late or twice ---------------------------------------------------------------------------------


def analyse(catalog, session: SessionDocument, turn_id: str, at, *, last_active=None):
    """The change set of a turn said at ``at`` that reads ``ml_expertise`` 55, analysed a day later."""
    said = InferredUpdate(
        factor_id="ml_expertise",
        value=55,
        confidence=0.7,
        rationale="two data scientists",
        conversation_excerpt="User: we have two data scientists",
        session_id="s1",
        turn_id=turn_id,
        observed_at=at,
    )
    inputs = ChangeInputs(
        user_id="u",
        summary=None,
        journals={},
        last_active=last_active,
        now=T0 + timedelta(days=1),
        session=session,
        states={"ml_expertise": FactorState(factor_id="ml_expertise", category="ai_capability")},
    )
    turn = TurnContext(session_id="s1", turn_id=turn_id, observed_at=at)
    return plan_change(catalog, graph_for(catalog), inputs, readings=[Reading(said, f"e-{turn_id}")], turn=turn)


def test_a_late_turn_never_moves_the_sessions_position_or_the_persons_last_activity_back(catalog):
    newer = T0 + timedelta(minutes=5)
    session = SessionDocument(
        session_id="s1",
        last_active=newer,
        last_turn_id="t2",
        last_topic_at=newer,
        last_topic="Data quality",
        last_topic_factor_id="data_quality",
    )
    late = analyse(catalog, session, "t1", T0, last_active=newer)
    assert moved_forward(late.session) == {}  # counted (its tokens, its analysis), but "where were we" stays
    assert late.last_active == newer
    assert late.outcome.status == TurnStatus.processed
    later = analyse(catalog, session, "t3", T0 + timedelta(minutes=10), last_active=newer)
    assert moved_forward(later.session) == {
        "last_active": T0 + timedelta(minutes=10),
        "last_turn_id": "t3",
        "last_topic": "Machine learning expertise",
        "last_topic_factor_id": "ml_expertise",
        "last_topic_at": T0 + timedelta(minutes=10),
        "last_excerpt": "User: we have two data scientists",
    }
    assert later.last_active == T0 + timedelta(minutes=10)


def test_turns_said_at_the_same_instant_are_ordered_by_turn_id_not_by_delivery(catalog):
    at = T0 + timedelta(minutes=5)
    session = SessionDocument(session_id="s1", last_active=at, last_turn_id="t2", last_topic_at=at)
    assert moved_forward(analyse(catalog, session, "t1", at).session) == {}
    assert moved_forward(analyse(catalog, session, "t3", at).session)["last_turn_id"] == "t3"


def test_things_said_at_the_same_instant_give_the_same_where_we_were_in_either_order(catalog):
    """Two sessions each with a turn at the very same time: "where we were" does not depend on which was
    analysed first (moved here from the emulator: the rule is the planner's)."""

    def where_we_were(order):
        person = Person(catalog)
        said = [("data_quality", 20, "s0"), ("ml_expertise", 55, "s1")]
        for index in order:
            fid, value, session = said[index]
            person.say(fid, value, session_id=session, observed_at=T0)
        return person.summary.last_conversation.factor_id, person.summary.last_conversation.session_id

    assert where_we_were([0, 1]) == where_we_were([1, 0])


def test_where_we_were_is_never_moved_back_by_a_late_reading(catalog):
    person = Person(catalog)
    person.say("data_quality", 20, observed_at=T0 + timedelta(minutes=5))
    person.say("ml_expertise", 55, observed_at=T0)  # said earlier, delivered later
    assert person.summary.last_conversation.factor_id == "data_quality"
    assert person.summary.last_conversation.timestamp == T0 + timedelta(minutes=5)


def test_a_persons_decision_on_a_reading_leaves_where_we_were_on_the_last_exchange(catalog):
    """Confirming, correcting, withdrawing or bringing back a reading in the say-back is no exchange: "where we
    were" keeps the last answer's turns, not the few words decided on (it read "with duplicates and gaps")."""
    person = Person(catalog)
    exchange = "Assistant: How far back does your history go?\nUser: 6 years in the ERP, with duplicates and gaps."
    person.say("historical_data_depth", 40, conversation_excerpt=exchange)
    where = person.summary.last_conversation
    assert where is not None and where.excerpt == exchange
    words = "with duplicates and gaps"
    for decide in (
        lambda s, eid, now: transitions.confirm(s, "u", eid, now, "s1", turn_id="t1", excerpt=words),
        lambda s, eid, now: transitions.correct(s, "u", eid, now, 20, "corrected", "s1", turn_id="t1", excerpt=words),
        lambda s, eid, now: transitions.retract(s, "u", eid, now, "n/a", Source.user, session_id="s1", excerpt=words),
        lambda s, eid, now: transitions.correct(
            s, "u", eid, now, 40, "restored", "s1", excerpt=words, kind=EntryKind.restored
        ),
    ):
        person.tick()
        person.decide("historical_data_depth", decide)
        assert person.summary.last_conversation == where
    person.say("ml_expertise", 55, conversation_excerpt="Assistant: Who builds models?\nUser: Two data scientists.")
    assert person.summary.last_conversation.factor_id == "ml_expertise"  # the next answer moves it on


def test_evidence_accumulates_across_turns(catalog):
    """Extractor readings are weighed with the factor's earlier evidence (moved here from the emulator)."""
    person = Person(catalog)
    person.say("data_quality", 20, 0.6, weigh=True)
    person.say("data_quality", 60, 0.6, weigh=True)
    state = person.factor("data_quality")
    assert 20 < state.current_value < 60
    assert state.inference_status == "unconfirmed"
    assert "earlier observation" in person.journal("data_quality")[0].change_rationale


def test_a_turn_with_nothing_to_apply_is_no_update_and_still_moves_the_conversation_on(catalog):
    session = SessionDocument(session_id="s1", last_active=T0, last_turn_id="t1")
    inputs = ChangeInputs(
        user_id="u", summary=None, states={}, journals={}, last_active=T0, now=T0 + timedelta(days=1), session=session
    )
    at = T0 + timedelta(minutes=1)
    plan = plan_change(
        catalog, graph_for(catalog), inputs, turn=TurnContext(session_id="s1", turn_id="t2", observed_at=at)
    )
    assert plan.outcome.status == TurnStatus.no_update and plan.outcome.entry_ids == [] and plan.entries == []
    assert plan.states == {}  # no factor document is written
    assert moved_forward(plan.session) == {"last_active": at, "last_turn_id": "t2"}  # no topic: nothing was said
    assert plan.last_active == at


def test_a_turns_outcome_keeps_what_the_analysis_learned_and_rejected(catalog):
    details = AnalysisDetails(
        extractor="scripted",
        model="m1",
        prompt_tokens=120,
        response_tokens=30,
        rejected=["malformed JSON from model: Expecting value"],
    )
    inputs = ChangeInputs(
        user_id="u",
        summary=None,
        states={},
        journals={},
        last_active=None,
        now=T0,
        session=SessionDocument(session_id="s1"),
    )
    turn = TurnContext(session_id="s1", turn_id="t1", observed_at=T0, details=details)
    plan = plan_change(catalog, graph_for(catalog), inputs, turn=turn)
    assert plan.outcome.status == TurnStatus.no_update and plan.outcome.processed_at == T0
    assert plan.outcome.rejected == ["malformed JSON from model: Expecting value"]
    assert (plan.outcome.extractor, plan.outcome.model, plan.outcome.prompt_tokens) == ("scripted", "m1", 120)
    assert (plan.session.prompt_tokens, plan.session.response_tokens) == (120, 30)  # amounts the session adds


def test_an_extraction_field_no_code_wrote_is_no_outcome_and_the_turn_is_analysed(catalog):
    read = read_turn("s1", {"extraction": {"status": "finished"}}, None)
    assert read.outcome is None and not read.duplicate and read.session == SessionDocument(session_id="s1")


def test_a_sound_session_counts_on_whole_when_it_is_rewritten(catalog):
    stored = SessionDocument(session_id="s1", analysed_turns=2, usage=TokenUsage(prompt_tokens=100, response_tokens=20))
    progress = SessionProgress(session_id="s1", prompt_tokens=120, response_tokens=30)
    document = repaired_session(stored, progress)
    assert document["analysed_turns"] == 3
    assert document["usage"] == {"prompt_tokens": 220, "response_tokens": 50}


def test_a_damaged_component_is_folded_again_and_its_composite_derived_again_along_every_timeline(catalog):
    person = Person(catalog)
    person.say("data_quality", 20)
    person.say("ml_expertise", 60)
    components = sorted(catalog.factor("ai_readiness_score").composite)
    person.documents["data_quality"] = {"factor_id": "data_quality", "current_value": "lost"}
    person.say("data_quality", 40)  # in order: without the damage, no journal would be read
    assert person.journal_reads == sorted({"ai_readiness_score", *components})
    assert person.factor("data_quality").evidence_count == 2 and person.factor("data_quality").current_value == 40
    weights = catalog.factor("ai_readiness_score").composite
    expected = (weights["data_quality"] * 40 + weights["ml_expertise"] * 60) / (
        weights["data_quality"] + weights["ml_expertise"]
    )
    assert person.factor("ai_readiness_score").current_value == pytest.approx(expected, abs=0.01)
    assert [e.new_value for e in person.journal("ai_readiness_score")][0] == pytest.approx(expected, abs=0.01)


def test_a_change_may_write_its_factors_and_every_composite_built_on_them_once(catalog):
    graph = graph_for(catalog)
    composites = graph.composites_of("data_quality")
    assert composites  # the catalog builds a composite on it
    assert touched_factors(graph, ["data_quality"]) == ["data_quality", *sorted(composites)]
    both = touched_factors(graph, ["ml_expertise", "data_quality"])
    assert both[:2] == ["ml_expertise", "data_quality"] and len(both) == len(set(both))  # each composite once
    assert set(both[2:]) == set(composites) | set(graph.composites_of("ml_expertise"))


def test_a_touched_factor_without_a_document_starts_blank_whatever_the_summary_says(catalog):
    """The factor documents are the truth for what a change touches: a summary's copy of a factor whose document
    is missing (deleted by hand) is not carried on, and no journal is read for it."""
    copy = FactorState(factor_id="data_quality", category="data_readiness", current_value=20, observed_at=T0)
    states, damaged = touched_states(catalog, ["data_quality"], {"data_quality": None}, {"data_quality": copy})
    assert states["data_quality"] == blank() and damaged == {}
    assert journals_to_read(states, readings()[:1], damaged) == []  # nothing folded yet: no reading is late
