"""The rules of a change of one person's factors — people's decisions, conflicts, re-check flags, composites and the
summary they leave — decided by the pure planner from what a change reads (no Firestore).  That the store reads
and writes exactly these change sets is tested on the emulator in test_store.py."""

from __future__ import annotations

from datetime import timedelta

import pytest
from planned import T0, Person

from factor_journal import transitions
from factor_journal.errors import (
    DerivedFactorError,
    FactorJournalError,
    InvalidConfidenceError,
    InvalidInputError,
    MissingRationaleError,
    NotAssessedError,
    RationaleTooLongError,
    UnknownFactorError,
    ValueChangedError,
    ValueOutOfScaleError,
)
from factor_journal.models import EntryKind, InferenceStatus, Source
from factor_journal.summary import build_summary
from factor_journal.validation import (
    MAX_RATIONALE_CHARS,
    assessable,
    checked_reading,
    rationale_given,
    still_as_seen,
    value_on_scale,
)


def test_a_first_inference_is_unconfirmed_and_the_summary_counts_it(catalog):
    person = Person(catalog)
    entry = person.say("data_quality", 20, 0.75, inferred_from=["data_governance", "data_infrastructure"])
    state = person.factor("data_quality")
    assert (state.current_value, state.current_confidence, state.inference_status) == (
        20,
        0.75,
        InferenceStatus.unconfirmed,
    )
    assert state.category == "data_readiness"
    assert state.inferred_from == ["data_governance", "data_infrastructure"]
    assert (entry.previous_value, entry.new_value, entry.kind, entry.source) == (
        None,
        20,
        EntryKind.inferred,
        Source.llm,
    )
    summary = person.summary
    data = summary.categories["data_readiness"]
    assert data.factor_count == 1 and data.avg_confidence == 0.75
    assert data.completeness == round(1 / data.total_factors, 4)
    assert summary.overall.total_factors_assessed == 1
    assert (summary.last_conversation.factor_id, summary.last_conversation.topic) == ("data_quality", "Data quality")
    assert [(u.factor_id, u.evidence_count) for u in summary.unconfirmed_inferences] == [("data_quality", 1)]


def test_second_inference_records_previous_value(catalog):
    person = Person(catalog)
    person.say("data_quality", 20)
    newest = person.say("data_quality", 35, 0.8)
    assert (newest.previous_value, newest.new_value) == (20, 35)
    assert [e.new_value for e in person.journal("data_quality")] == [35, 20]
    assert person.summary.unconfirmed_inferences[0].evidence_count == 2


def test_a_confirmation_counts_as_the_persons_word_and_caps_at_one(catalog):
    person = Person(catalog)
    person.say("data_quality", 20, 0.75)
    entry = person.confirm("data_quality")
    state = person.factor("data_quality")
    assert state.inference_status == InferenceStatus.confirmed
    assert state.current_confidence == pytest.approx(0.95)  # as sure as a value the person gave
    assert entry.kind == EntryKind.confirmed and entry.source == Source.user
    assert person.summary.unconfirmed_inferences == []

    person.say("ml_expertise", 60, 0.95)
    person.confirm("ml_expertise")
    assert person.factor("ml_expertise").current_confidence == 1.0


def test_correct_sets_user_value_and_flags_inferences_resting_on_it(catalog):
    person = Person(catalog)
    person.say("data_governance", 20, 0.6)
    person.say("data_quality", 20, 0.7, inferred_from=["data_governance"])
    person.say("sensor_data", 40, 0.7)

    entry = person.correct("data_governance", 70, "We appointed data owners last quarter")

    governance = person.factor("data_governance")
    assert (governance.current_value, governance.current_confidence) == (70, 0.95)
    assert governance.inference_status == InferenceStatus.user_provided
    assert entry.kind == EntryKind.corrected and entry.change_rationale == "We appointed data owners last quarter"
    assert (entry.previous_value, entry.new_value) == (20, 70)
    quality = person.factor("data_quality")
    assert quality.needs_recheck and "Data governance" in quality.recheck_reason
    assert not person.factor("sensor_data").needs_recheck
    assert [r.factor_id for r in person.summary.needs_recheck] == ["data_quality"]

    person.say("data_quality", 45, 0.7, inferred_from=["data_governance"])
    assert not person.factor("data_quality").needs_recheck
    assert person.summary.needs_recheck == []


def test_a_withdrawn_reading_brought_back_is_restored_and_the_re_check_it_flags_says_so(catalog):
    person = Person(catalog)
    person.say("data_governance", 20, 0.6)
    person.retract("data_governance", "User said what was understood from their answer does not apply")
    person.say("data_quality", 20, 0.7, inferred_from=["data_governance"])
    governance = catalog.factor("data_governance")

    entry = person.decide(
        "data_governance",
        lambda s, eid, now: transitions.confirm_reading(
            governance, s, person.user_id, eid, now, 20, session_id="s", turn_id="t", excerpt="no owners"
        ),
    )

    assert entry.kind == EntryKind.restored and (entry.previous_value, entry.new_value) == (None, 20)
    assert person.factor("data_governance").inference_status == InferenceStatus.user_provided
    reason = person.factor("data_quality").recheck_reason
    assert reason == "inferred from Data governance, which the user restored to 20.0"  # not "corrected from None"


def test_retract_returns_factor_to_unassessed_and_journals_it(catalog):
    person = Person(catalog)
    person.say("sensor_data", 60)
    entry = person.retract("sensor_data", "That was about a different plant")
    state = person.factor("sensor_data")
    assert state.current_value is None and state.inference_status == InferenceStatus.unassessed
    assert entry.kind == EntryKind.retracted and (entry.previous_value, entry.new_value) == (60, None)
    assert person.summary.overall.total_factors_assessed == 0
    assert person.summary.unconfirmed_inferences == []
    assert len(person.journal("sensor_data")) == 2


def test_confirmed_value_is_not_replaced_by_conflicting_inference(catalog):
    person = Person(catalog)
    person.correct("data_quality", 70, "We run data quality checks on every load")
    entry = person.say("data_quality", 20, 0.9)
    state = person.factor("data_quality")
    assert state.current_value == 70 and state.inference_status == InferenceStatus.user_provided
    assert entry.kind == EntryKind.conflict and not entry.applied
    assert state.open_conflict.proposed_value == 20
    [conflict] = person.summary.conflicts
    assert (conflict.factor_id, conflict.current_value, conflict.proposed_value) == ("data_quality", 70, 20)

    person.resolve_conflict("data_quality", accept=False, rationale="The checks are real")
    state = person.factor("data_quality")
    assert state.current_value == 70 and state.open_conflict is None
    assert person.summary.conflicts == []


def test_accepting_a_conflict_takes_the_proposed_value(catalog):
    person = Person(catalog)
    person.say("ml_expertise", 60, 0.7)
    person.confirm("ml_expertise")
    person.say("ml_expertise", 20, 0.8, rationale="Their data scientist left")
    person.resolve_conflict("ml_expertise", accept=True, rationale="Yes, she left in May")
    state = person.factor("ml_expertise")
    assert state.current_value == 20 and state.inference_status == InferenceStatus.confirmed
    assert state.current_confidence == pytest.approx(0.95)  # accepted by the person: their own word


def test_inference_close_to_a_confirmed_value_corroborates_without_change(catalog):
    person = Person(catalog)
    person.correct("data_quality", 70, "stated")
    entry = person.say("data_quality", 75, 0.6)
    state = person.factor("data_quality")
    assert state.current_value == 70 and state.open_conflict is None
    assert not entry.applied and entry.kind == EntryKind.inferred
    assert state.evidence_count == 2


def test_composite_is_derived_from_its_components(catalog):
    person = Person(catalog)
    person.say("data_quality", 20, 0.8)
    person.say("ml_expertise", 60, 0.8)
    weights = catalog.factor("ai_readiness_score").composite
    expected = (weights["data_quality"] * 20 + weights["ml_expertise"] * 60) / (
        weights["data_quality"] + weights["ml_expertise"]
    )
    composite = person.factor("ai_readiness_score")
    assert composite.current_value == pytest.approx(expected, abs=0.01)
    assert composite.inferred_from == ["data_quality", "ml_expertise"]
    newest = person.journal("ai_readiness_score")[0]
    assert newest.kind == EntryKind.derived and newest.source == Source.system
    with pytest.raises(DerivedFactorError):  # the store's check of what a person may set
        assessable(catalog, "ai_readiness_score")


def test_the_summary_a_change_leaves_is_the_summary_of_its_factor_states(catalog):
    """The summary carried from change to change is the one rebuilt from the factor documents alone (what
    repairs a damaged summary)."""
    person = Person(catalog)
    person.say("data_quality", 40, 0.7)
    person.say("ml_expertise", 55, 0.8)
    person.correct("data_governance", 60, "stated")
    person.confirm("ml_expertise")
    person.retract("data_quality", "misheard")
    states = {fid: person.factor(fid) for fid in person.documents}
    rebuilt = build_summary(catalog, person.graph, states, person.summary.last_conversation, person.clock)
    assert rebuilt.model_dump(exclude={"updated_at"}) == person.summary.model_dump(exclude={"updated_at"})


@pytest.mark.parametrize(
    ("reading", "error"),
    [
        (("no_such_factor", 20, 0.7, "r", ()), UnknownFactorError),
        (("data_quality", 120, 0.7, "r", ()), ValueOutOfScaleError),
        (("data_quality", -1, 0.7, "r", ()), ValueOutOfScaleError),
        (("data_quality", 20, 1.5, "r", ()), InvalidConfidenceError),
        (("data_quality", 20, -0.1, "r", ()), InvalidConfidenceError),
        (("data_quality", 20, 0.7, "  ", ()), MissingRationaleError),
        (("data_quality", 20, 0.7, "r", ["nope"]), UnknownFactorError),
        (("ai_readiness_score", 20, 0.7, "r", ()), DerivedFactorError),
    ],
)
def test_a_reading_the_catalog_refuses_raises_a_typed_error(catalog, reading, error):
    with pytest.raises(error):
        checked_reading(catalog, *reading)


def test_a_valid_reading_is_returned_clean(catalog):
    assert checked_reading(catalog, "data_quality", 20, 1, "  r ", ["data_governance", "data_quality"]) == (
        "data_quality",
        20.0,
        1.0,
        "r",
        ["data_governance"],
    )


@pytest.mark.parametrize(
    ("check", "error"),
    [
        (lambda c: rationale_given("", "the correction"), MissingRationaleError),  # a correction needs its reason
        (lambda c: rationale_given("x" * 200_000, "the correction"), RationaleTooLongError),  # and a bounded one
        (lambda c: value_on_scale(c, "data_quality", 500), ValueOutOfScaleError),
        (lambda c: value_on_scale(c, "data_quality", True), InvalidInputError),
    ],
)
def test_a_persons_decision_the_catalog_refuses_raises_a_typed_error(catalog, check, error):
    with pytest.raises(error):
        check(catalog)


def test_a_decision_about_a_value_shown_goes_through_only_while_the_value_is_still_that_one():
    still_as_seen("data_quality", 20.7, 20.7)
    still_as_seen("data_quality", 35, None)  # not tied to a value shown
    with pytest.raises(ValueChangedError) as refused:
        still_as_seen("data_quality", 35, 20.7)
    assert isinstance(refused.value, FactorJournalError)  # the pages say it, nothing is written
    assert str(refused.value) == (
        "the value of 'data_quality' changed since it was shown as 20.7: it is 35 now, so nothing was saved; "
        "look at it again before deciding"
    )
    with pytest.raises(ValueChangedError, match="it has no value now"):  # withdrawn meanwhile
        still_as_seen("data_quality", None, 20.7)


def test_a_reason_is_bounded_and_the_refusal_says_so_for_a_person(catalog):
    assert rationale_given("  " + "x" * MAX_RATIONALE_CHARS + "\n", "the correction") == "x" * MAX_RATIONALE_CHARS
    with pytest.raises(RationaleTooLongError) as refused:
        rationale_given("x" * (MAX_RATIONALE_CHARS + 1), "the retraction of 'data_quality'")
    assert isinstance(refused.value, FactorJournalError)  # the pages say it, nothing is written
    assert str(refused.value) == (
        "the reason for the retraction of 'data_quality' is 2,001 characters, over the 2,000-character limit: "
        "please say it more briefly"
    )
    emoji = "🙂" * (MAX_RATIONALE_CHARS // 2)  # counted as a browser counts them: two units each
    assert rationale_given(emoji, "the correction") == emoji
    with pytest.raises(RationaleTooLongError):
        rationale_given(emoji + "x", "the correction")
    with pytest.raises(RationaleTooLongError):  # an extractor's reading is held to the same bound
        checked_reading(catalog, "data_quality", 20, 0.7, "y" * (MAX_RATIONALE_CHARS + 1))


@pytest.mark.parametrize(
    ("action", "message"),
    [
        ("confirm", "cannot confirm the value of 'data_quality': it has no value yet"),
        ("correct", "cannot correct the value of 'data_quality': it has no value yet"),
        ("retract", "cannot withdraw the value of 'data_quality': it has no value yet"),
    ],
)
def test_a_decision_on_a_factor_without_a_value_says_what_was_attempted(action, message):
    error = NotAssessedError("data_quality", action)
    assert str(error) == message and (error.factor_id, error.action) == ("data_quality", action)


def test_a_late_older_observation_is_journaled_at_its_time_and_does_not_overwrite(catalog):
    """The rule of a late reading (the history's order and the as-of timeline on Firestore: test_store.py)."""
    person = Person(catalog)
    person.say("data_infrastructure", 60, observed_at=T0 + timedelta(days=3))
    late = person.say("data_infrastructure", 25, observed_at=T0)
    state = person.factor("data_infrastructure")
    assert state.current_value == 60 and state.evidence_count == 2 and state.last_entry_id != late.entry_id
    assert late.effective and late.value_after == 25  # on the timeline at its own time, not current
    assert [e.new_value for e in person.journal("data_infrastructure")] == [60, 25]
    newer = person.say("data_infrastructure", 40, observed_at=T0 + timedelta(days=4))
    assert newer.applied and person.factor("data_infrastructure").current_value == 40
