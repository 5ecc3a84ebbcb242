"""What a person's pages show, decided without Streamlit or Firestore: re-checks, "What we know", the history."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from factor_journal import freshness, page_models, transitions
from factor_journal.catalog import load_catalog
from factor_journal.catalog.models import parse_catalog
from factor_journal.conversation import StoredTurn
from factor_journal.documents import TurnStatus
from factor_journal.freshness import FactorFreshness, FreshAssessment, TierNote
from factor_journal.graph import graph_for
from factor_journal.models import EntryKind, FactorState, InferenceStatus, JournalEntry, Source
from factor_journal.page_models import COMPUTED, EntryEffect
from factor_journal.summary import build_summary

CATALOG = """
version: "t1"
freshness: {version: "f1", default_half_life: 12 months, recheck_below: 0.5}
categories:
  - {id: people, name: People, half_life: 6 months}
  - {id: data, name: Data}
  - {id: infra, name: Infrastructure}
decision_tiers:
  - {id: exploratory, name: Exploratory, budget: none, min_completeness: 0, min_avg_confidence: 0}
  - {id: low, name: Low, budget: "< 25k", min_completeness: 0.5, min_avg_confidence: 0.6}
factors:
  - {id: sponsor, name: Sponsor, category: people, rubric: {low: l, mid: m, high: h},
     elicitation_questions: ["Who sponsors?"]}
  - {id: budget, name: Budget, category: people, rubric: {low: l, mid: m, high: h}, elicitation_questions: ["$?"]}
  - {id: quality, name: Quality, category: data, rubric: {low: l, mid: m, high: h}, elicitation_questions: ["Clean?"]}
  - {id: archive, name: Archive, category: data, half_life: never, rubric: {low: l, mid: m, high: h},
     elicitation_questions: ["How many years?"]}
  - {id: score, name: A score, category: data, rubric: {low: l, mid: m, high: h}, elicitation_questions: [n/a],
     composite: {sponsor: 1, budget: 1}}
  - {id: cloud, name: Cloud, category: infra, rubric: {low: l, mid: m, high: h}, elicitation_questions: ["Cloud?"]}
archetypes:
  - {id: one, name: One, prerequisites: [{factor: sponsor, min_value: 10, min_confidence: 0.5}]}
"""
T0 = datetime(2025, 1, 1, tzinfo=UTC)
DAY = timedelta(days=1)


@pytest.fixture(scope="module")
def catalog():
    return parse_catalog(CATALOG)


def said(catalog, fid: str, confidence: float, at: datetime, status=InferenceStatus.unconfirmed) -> FactorState:
    return FactorState(
        factor_id=fid,
        category=catalog.factor(fid).category,
        current_value=60.0,
        current_confidence=confidence,
        inference_status=status,
        observed_at=at,
        last_updated=at,
        evidence_count=1,
        folded_through=at,
        folded_through_id="e",
    )


def assessment_of(catalog, now: datetime, *states: FactorState) -> FreshAssessment:
    """The assessment as it counts at ``now``; the composite ``score`` computed from its parts as stored, its
    own ``observed_at`` left at T0 (as when a later re-statement of a part did not move it)."""
    by_id = {s.factor_id: s for s in states}
    score = transitions.composite_state(
        catalog, catalog.factor("score"), FactorState(factor_id="score", category="data"), by_id
    )
    by_id["score"] = score.model_copy(update={"observed_at": T0})
    summary = build_summary(catalog, graph_for(catalog), by_id, None, T0)
    return freshness.assess(catalog, graph_for(catalog), summary, now)


def test_a_composite_was_said_when_its_latest_assessed_part_was(catalog):
    sponsor = said(catalog, "sponsor", 0.8, T0 + 10 * DAY)
    budget = said(catalog, "budget", 0.8, T0 + 40 * DAY)
    states = {"sponsor": sponsor, "budget": budget}
    assert freshness.last_said(catalog, states, "score") == T0 + 40 * DAY
    retracted = budget.model_copy(update={"current_value": None})  # a part no longer assessed says nothing
    assert freshness.last_said(catalog, {**states, "budget": retracted}, "score") == T0 + 10 * DAY
    assert freshness.last_said(catalog, {}, "score") is None
    corroborated = sponsor.model_copy(update={"folded_through": T0 + 50 * DAY})  # said again, value left standing
    assert freshness.last_said(catalog, {"sponsor": corroborated}, "sponsor") == T0 + 50 * DAY
    fresh = assessment_of(catalog, T0 + 60 * DAY, sponsor, budget)
    assert fresh.factors["score"].said_at == T0 + 40 * DAY  # not the composite's own (older) observed_at


def test_what_we_know_lists_answers_by_category_and_name_with_status_said_and_ageing(catalog):
    now = T0 + 365 * DAY
    fresh = assessment_of(
        catalog,
        now,
        said(catalog, "sponsor", 0.9, now - 65 * DAY, InferenceStatus.confirmed),  # people: 6 months, aged, not due
        said(catalog, "budget", 0.7, now - DAY, InferenceStatus.user_provided),  # said yesterday: hardly aged
        said(catalog, "quality", 0.8, T0),  # a year old at a 12-month half-life: due
        said(catalog, "archive", 0.6, T0),  # never ages
    )
    known = page_models.what_we_know(catalog, fresh)
    assert [c.category_id for c in known.categories] == ["people", "data"]  # catalog order; infra has none
    people, data = known.categories
    assert [f.factor_id for f in people.factors] == ["budget", "sponsor"]  # by name
    assert [f.name for f in data.factors] == ["A score", "Archive", "Quality"]
    assert (people.total, data.total) == (2, 2)  # the category's factors to assess, assessed or not (no score)
    assert (people.assessed, data.assessed) == (2, 2)  # the computed score is listed, not counted
    for category in known.categories:  # one count on the page: the summary's (the chart and the "Mapped" metric)
        progress = fresh.summary.categories[category.category_id]
        assert (category.assessed, category.total) == (progress.factor_count, progress.total_factors)
    by_id = {f.factor_id: f for c in known.categories for f in c.factors}
    assert by_id["score"].status == COMPUTED and by_id["score"].said_at == now - DAY  # its latest part
    assert by_id["budget"].status == "user_provided" and by_id["sponsor"].status == "confirmed"
    assert by_id["quality"].due and not by_id["archive"].due and not by_id["sponsor"].due
    assert by_id["quality"].stored_confidence == 0.8 and by_id["quality"].confidence == pytest.approx(0.4, abs=0.01)
    assert by_id["archive"].stored_confidence is None and by_id["archive"].confidence == 0.6  # never ages
    assert by_id["sponsor"].stored_confidence == 0.9 and by_id["sponsor"].confidence < 0.75
    assert by_id["budget"].stored_confidence is None  # a day's ageing does not show as a percentage
    assert known.by_status == {"confirmed": 1, "user_provided": 1, "unconfirmed": 2, COMPUTED: 1}
    assert known.assessed == 4  # as the summary counts: the computed score is not


def test_what_we_know_of_nothing_is_empty(catalog):
    known = page_models.what_we_know(catalog, assessment_of(catalog, T0))
    assert known.categories == [] and known.assessed == 0


def test_confidences_read_apart_only_when_their_whole_percentages_differ():
    assert page_models.shown_apart(0.8, 0.79)
    assert not page_models.shown_apart(0.8, 0.8004)
    assert not page_models.shown_apart(0.7, 0.7)


def test_a_correction_saved_unmoved_keeps_the_value_as_read_and_a_moved_one_the_sliders_number():
    # the slider starts at the value as every page shows it (32.5, 20.7; 39.96 shows as 39.9), not a whole number
    assert [page_models.shown_value(v) for v in (32.5, 20.7, 39.96, 55.3)] == [32.5, 20.7, 39.9, 55.3]
    assert page_models.correction_to_save(20.7, 20.7, 20.7) == 20.7  # unmoved
    assert page_models.correction_to_save(None, 20.7, 20.7) == 20.7  # first drawn in the run it was saved in
    unmoved = page_models.shown_value(20.73)  # shown as 20.7: saved as read, so the store's ``seen`` check holds
    assert page_models.correction_to_save(20.73, 20.73, unmoved) == 20.73
    assert page_models.correction_to_save(20.7, 20.7, 20.8) == 20.8  # moved one step: the person's number
    assert page_models.correction_to_save(20.7, 20.7, 20.800000000000001) == 20.8  # a float step's noise is not kept
    assert page_models.correction_to_save(20.7, 20.7, 45) == 45.0


def test_a_correction_of_a_value_that_changed_since_the_slider_was_drawn_saves_nothing():
    assert page_models.changed_since_drawn(20.7, 35)
    assert not page_models.changed_since_drawn(20.7, 20.7) and not page_models.changed_since_drawn(None, 35)
    assert page_models.correction_to_save(20.7, 35, 35) is None  # the slider restarted at the new value: not seen
    assert page_models.correction_to_save(20.7, 35, 20.7) is None  # the stale slider's number never overwrites it
    assert page_models.correction_to_save(20.7, 20.71, 20.7) is None  # a change too small to move the slider counts


def _fresh(fid: str, due: bool = True) -> FactorFreshness:
    return FactorFreshness(
        factor_id=fid,
        stored_confidence=0.8,
        confidence=0.3,
        said_at=T0,
        half_life="1 year",
        due_at=T0,
        due=due,
        unlocks=0,
    )


def _listed(factor_ids: list[str], confirm: list[str], to_recheck: list[str], at_least: int):
    factors = {fid: _fresh(fid, due=fid in to_recheck) for fid in factor_ids}
    summary = build_summary(parse_catalog(CATALOG), graph_for(parse_catalog(CATALOG)), {}, None, T0)
    note = (
        TierNote(
            reached="low",
            reached_name="Low",
            now="exploratory",
            now_name="Exploratory",
            lapsed=True,
            lapses_at=None,
            confirm=confirm,
            message="m",
        )
        if confirm
        else None
    )
    assessment = FreshAssessment(
        at=T0,
        summary=summary,
        stored=summary,
        factors=factors,
        to_recheck=[factors[f] for f in to_recheck],
        tier_note=note,
    )
    listed = page_models.recheck_list(assessment, at_least=at_least)
    return [item.factor_id for item in listed.shown], listed.more


def test_the_re_check_list_puts_what_the_tier_rests_on_first_once_each_then_the_rest_due():
    ids = ["a", "b", "c", "d", "e"]
    assert _listed(ids, confirm=["d", "b"], to_recheck=["a", "b", "c"], at_least=8) == (["d", "b", "a", "c"], 0)
    assert _listed(ids, confirm=[], to_recheck=["c", "a", "e"], at_least=2) == (["c", "a"], 1)
    # every answer the tier rests on is listed, however many
    assert _listed(ids, confirm=["e", "d", "c"], to_recheck=["a"], at_least=2) == (["e", "d", "c"], 1)
    assert _listed(ids, confirm=[], to_recheck=[], at_least=8) == ([], 0)


def test_categories_read_best_mapped_first_then_surest_then_by_name(catalog):
    states = {
        "sponsor": said(catalog, "sponsor", 0.5, T0),
        "budget": said(catalog, "budget", 0.5, T0),  # people: fully mapped
        "quality": said(catalog, "quality", 0.9, T0),
        "cloud": said(catalog, "cloud", 0.6, T0),  # infra: fully mapped, surer than people
    }
    summary = build_summary(catalog, graph_for(catalog), states, None, T0)
    order = [c.name for c in page_models.categories_by_progress(summary)]
    assert order == ["Infrastructure", "People", "Data"]


REAL = load_catalog()


def test_the_history_opens_on_the_factor_asked_for_or_the_one_changed_last_never_a_composite():
    base = datetime(2026, 11, 1, tzinfo=UTC)
    states = {
        "data_quality": FactorState(
            factor_id="data_quality", category="data_readiness", current_value=20, evidence_count=1, last_updated=base
        ),
        "ml_expertise": FactorState(
            factor_id="ml_expertise",
            category="ai_capability",
            current_value=50,
            evidence_count=1,
            last_updated=base + timedelta(days=2),
        ),
        "ai_readiness_score": FactorState(
            factor_id="ai_readiness_score",
            category="ai_capability",
            current_value=30,
            last_entry_id="x",
            last_updated=base + timedelta(days=3),
        ),
        "sensor_data": FactorState(factor_id="sensor_data", category="data_readiness"),
    }
    assert page_models.history_factors(states) == ["data_quality", "ml_expertise", "ai_readiness_score"]
    assert page_models.most_recently_changed(REAL, states) == "ml_expertise"
    said_later = states["data_quality"].model_copy(update={"observed_at": base + timedelta(days=5)})
    flagged = states["ml_expertise"].model_copy(update={"observed_at": base, "last_updated": base + timedelta(days=9)})
    mixed = {**states, "data_quality": said_later, "ml_expertise": flagged}  # a re-check flag is no change
    assert page_models.most_recently_changed(REAL, mixed) == "data_quality"
    assert page_models.most_recently_changed(REAL, {"sensor_data": states["sensor_data"]}) is None
    assert page_models.history_opens_on(REAL, mixed, "ai_readiness_score") == "ai_readiness_score"  # a link
    assert page_models.history_opens_on(REAL, mixed, "sensor_data") == "data_quality"  # no history: the latest
    assert page_models.history_opens_on(REAL, mixed, None) == "data_quality"


def _entry(
    observed: datetime,
    value: float,
    *,
    kind=EntryKind.inferred,
    applied=True,
    effective=True,
    recorded: datetime | None = None,
) -> JournalEntry:
    return JournalEntry(
        entry_id=f"e{observed.timestamp()}-{value}",
        user_id="u",
        factor_id="data_quality",
        kind=kind,
        source=Source.llm,
        previous_value=None,
        new_value=value,
        change_rationale="r",
        confidence=0.7,
        observed_at=observed,
        recorded_at=recorded or observed,
        applied=applied,
        effective=effective,
        value_after=value,
        confidence_after=0.7,
        status_after="unconfirmed",
    )


def test_an_entry_was_applied_held_as_a_conflict_or_only_recorded():
    assert page_models.entry_effect(_entry(T0, 20)) == EntryEffect.applied
    held = _entry(T0, 20, kind=EntryKind.conflict, applied=False, effective=False)
    assert page_models.entry_effect(held) == EntryEffect.held
    assert page_models.entry_effect(_entry(T0, 20, applied=False)) == EntryEffect.not_applied  # arrived late


def test_an_entry_is_what_its_kind_says_and_a_withdrawal_undone_before_restored_existed_reads_as_restored():
    restored = _entry(T0, 20, kind=EntryKind.restored)
    assert page_models.entry_kind(restored) == EntryKind.restored
    undone_before = _entry(T0, 20, kind=EntryKind.corrected).model_copy(
        update={"change_rationale": transitions.READING_CONFIRMED}  # from no value: the reading brought back
    )
    assert page_models.entry_kind(undone_before) == EntryKind.restored
    moved = undone_before.model_copy(update={"previous_value": 55.0})  # the reading set over another value
    assert page_models.entry_kind(moved) == EntryKind.corrected
    given = _entry(T0, 20, kind=EntryKind.corrected).model_copy(update={"change_rationale": "We hired two"})
    assert page_models.entry_kind(given) == EntryKind.corrected
    assert page_models.entry_kind(_entry(T0, 20)) == EntryKind.inferred


def test_a_factor_timeline_keeps_each_days_last_effective_state():
    morning = datetime(2026, 11, 3, 9, tzinfo=UTC)
    entries = [
        _entry(morning + 4 * DAY, 45),
        _entry(morning + timedelta(hours=5), 30, recorded=morning + 2 * DAY),
        _entry(morning + timedelta(hours=5), 35, recorded=morning + 3 * DAY),  # same moment, recorded later: last
        _entry(morning, 20),
        _entry(morning + 6 * DAY, 90, kind=EntryKind.conflict, applied=False, effective=False),  # held: no point
    ]
    ends = page_models.day_ends(entries)
    assert [(e.observed_at.date(), e.value_after) for e in ends] == [(date(2026, 11, 3), 35), (date(2026, 11, 7), 45)]
    assert page_models.said_days(entries) == {date(2026, 11, 3), date(2026, 11, 7)}


def test_one_rule_decides_a_chart_or_a_sentence_and_the_ageing_line_is_drawn_only_when_it_spans_days(catalog):
    morning = datetime(2026, 11, 28, 9, tzinfo=UTC)
    today = {morning.date()}
    state = said(catalog, "quality", 0.7, morning)
    within_the_day = freshness.decay_curve(state, catalog, morning + timedelta(hours=8))
    assert within_the_day  # a curve, but over hours: nothing a day axis draws
    for curve in ([], within_the_day):  # said today only: the sentence, whether the answer ages or not
        assert page_models.timeline(today, curve) == page_models.Timeline(chart=False, one_day=morning.date())
    weeks = freshness.decay_curve(state, catalog, morning + 20 * DAY)
    assert page_models.timeline(today, weeks) == page_models.Timeline(chart=True, ageing=weeks)  # it ages: drawn
    two_days = {morning.date(), (morning + DAY).date()}
    assert page_models.timeline(two_days, within_the_day) == page_models.Timeline(chart=True)  # no line to caption
    assert page_models.timeline(set(), []) == page_models.Timeline(chart=False)


def test_the_as_of_table_lists_only_assessed_answers_by_factor_id(catalog):
    states = {
        "quality": said(catalog, "quality", 0.8, T0),
        "cloud": said(catalog, "cloud", 0.6, T0),
        "sponsor": FactorState(factor_id="sponsor", category="people"),
    }
    summary = build_summary(catalog, graph_for(catalog), states, None, T0)
    assert [fid for fid, _ in page_models.assessed_states(summary)] == ["cloud", "quality"]


@pytest.mark.parametrize(
    ("status", "awaiting", "may_change", "said_when_older"),
    [
        (None, True, True, True),
        (TurnStatus.processing, True, True, True),
        (TurnStatus.failed, False, True, True),
        (TurnStatus.processed, False, False, False),
        (TurnStatus.no_update, False, False, False),
        (TurnStatus.needs_attention, False, False, True),
        (TurnStatus.invalid, False, False, True),
    ],
)
def test_an_answer_is_awaited_may_still_change_and_has_its_fate_said(status, awaiting, may_change, said_when_older):
    assert page_models.awaiting_analysis(status) is awaiting
    assert page_models.may_change_yet(status) is may_change
    assert page_models.status_worth_saying(status, latest=False) is said_when_older
    assert page_models.status_worth_saying(status, latest=True)  # the latest answer's fate is always said


def test_a_page_keeps_looking_for_an_analysis_past_a_cold_start_but_not_for_ever():
    assert page_models.keep_watching(0.0)
    assert page_models.keep_watching(60.0)  # a cold start and a retry fit well inside
    assert not page_models.keep_watching(page_models.WATCH_FOR_SECONDS)
    assert not page_models.keep_watching(3600.0)


def test_a_composite_is_computed_whatever_status_it_was_stored_with(catalog):
    stored = FactorState(factor_id="score", category="data", current_value=50, inference_status="user_provided")
    assert page_models.answer_status(catalog, "score", stored) == COMPUTED
    assert page_models.answer_status(catalog, "sponsor", said(catalog, "sponsor", 0.5, T0)) == "unconfirmed"


def _answer(text: str, extraction: dict | None = None) -> dict:
    return {"role": "user", "text": text} | ({"extraction": extraction} if extraction is not None else {})


def stored(documents: list[dict]) -> list[StoredTurn]:
    """A session's turn documents (oldest first) as the pages read them, each turn once."""
    return [StoredTurn.of(f"turn-{index}", document) for index, document in enumerate(documents)]


def test_the_next_question_never_repeats_one_asked_nor_asks_what_the_last_answer_settled():
    heard = {
        "status": "processed",
        "readings": [
            {"factor_id": "data_quality", "value": 20, "confidence": 0.7},
            {"factor_id": "ml_expertise", "value": 60, "confidence": 0.6},
        ],
    }
    earlier = {"status": "processed", "readings": [{"factor_id": "cloud", "value": 50, "confidence": 0.7}]}
    turns = [
        {"role": "assistant", "text": "How clean is your data?"},
        _answer("We are on AWS", earlier),
        {"role": "assistant", "text": "Who builds models?"},
        _answer("Numbers never match; two data scientists", heard),
    ]
    bounds = page_models.next_question_bounds(stored(turns))
    assert bounds.asked == {"How clean is your data?", "Who builds models?"}
    assert bounds.just_heard == {"data_quality", "ml_expertise"}  # the last answer only, not the earlier one
    pending = page_models.next_question_bounds(stored([*turns, _answer("Not analysed yet")]))
    assert pending.just_heard == set()
    damaged = page_models.next_question_bounds(stored([*turns, _answer("x", {"status": "processed", "readings": "?"})]))
    assert damaged.just_heard == set()  # an outcome that no longer reads speaks to nothing
    assert page_models.next_question_bounds([]) == page_models.NextQuestionBounds(
        asked=set(), just_heard=set(), covered=set()
    )


def test_the_session_covers_every_factor_it_asked_about_or_heard_an_answer_speak_to():
    """An answer that changes nothing ("can we pause?") clears what the last answer settled, but not what the
    session covered: a factor asked about (in any wording) or heard earlier is not asked again in the session."""
    heard = {"status": "processed", "readings": [{"factor_id": "data_quality", "value": 20, "confidence": 0.7}]}
    turns = [
        {"role": "assistant", "text": "Who would build and run models today?", "about": "ml_expertise"},
        _answer("I don't know", {"status": "no_update"}),
        {"role": "assistant", "text": "How clean is your data?", "about": "data_quality"},
        _answer("Numbers never match", heard),
        {"role": "assistant", "text": "Where do you host things?"},  # written before questions said their factor
        _answer("Can we pause?", {"status": "no_update"}),
        _answer("Not analysed yet"),
    ]
    bounds = page_models.next_question_bounds(stored(turns))
    assert bounds.just_heard == set()
    assert bounds.covered == {"ml_expertise", "data_quality"}


def test_a_request_to_pause_is_the_persons_last_word_set_aside_as_a_pause():
    pause = {"status": "no_update", "screened": {"kind": "pause", "reason": "asked to pause: 'pause'"}}
    question_back = {"status": "no_update", "screened": {"kind": "question_back", "reason": "a question"}}
    asked = {"role": "assistant", "text": "Where does your data live?"}
    assert page_models.asked_to_pause(stored([asked, _answer("Can we pause?", pause)]))
    went_on = [asked, _answer("Can we pause?", pause), asked]  # the interview went on
    assert not page_models.asked_to_pause(stored(went_on))
    assert not page_models.asked_to_pause(stored([asked, _answer("What do you mean?", question_back)]))
    assert not page_models.asked_to_pause(stored([asked, _answer("Can we pause?")]))  # not analysed yet
    assert not page_models.asked_to_pause([])


def test_a_turns_outcome_is_none_until_it_has_one_and_a_damaged_one_needs_attention():
    assert StoredTurn.of("t", None).outcome is None
    assert StoredTurn.of("t", _answer("x")).outcome is None
    damaged = StoredTurn.of("t", _answer("x", {"status": "processed", "attempts": "many"}))
    assert damaged.outcome is not None and damaged.outcome.status == TurnStatus.needs_attention  # never understood
    assert damaged.status == "processed"  # as written: what the page watches, as the store reads it
    outcome = StoredTurn.of("t", _answer("x", {"status": "no_update"})).outcome
    assert outcome is not None and outcome.status == TurnStatus.no_update


def test_the_next_question_waits_for_the_answer_to_be_understood():
    asked = {"role": "assistant", "text": "How much do you trust the numbers?"}

    def answer(status: str | None) -> dict:
        return {"role": "user", "text": "They never match", **({"extraction": {"status": status}} if status else {})}

    assert page_models.time_for_next_question([])  # the conversation opens with a question
    assert not page_models.time_for_next_question(stored([asked]))  # never two questions in a row
    assert not page_models.time_for_next_question(stored([asked, answer(None)]))  # written, not analysed yet
    assert not page_models.time_for_next_question(stored([asked, answer("processing")]))
    for status in ("processed", "no_update", "failed", "needs_attention", "invalid", "rate_limited"):
        finished = stored([asked, answer(status)])  # whatever came of it
        assert page_models.time_for_next_question(finished), status


def test_a_question_back_to_the_assistants_question_asks_for_it_to_be_explained_once():
    catalog = REAL
    asked_back = {"status": "no_update", "screened": {"kind": "question_back", "reason": "a question"}}
    deferred = {"status": "no_update", "screened": {"kind": "deferral", "reason": "ask Sam"}}
    asked = {"role": "assistant", "text": "Who would build models?", "about": "ml_expertise"}
    explained = {"role": "assistant", "text": "I mean … So: who did the work?", "about": "ml_expertise"}
    assert page_models.to_clarify(stored([asked, _answer("What do you mean?", asked_back)]), catalog) == "ml_expertise"
    assert (
        page_models.to_clarify(stored([asked, _answer("What do you mean?", asked_back), explained]), catalog) is None
    )  # asked
    # explained once already: asked back again, the interview moves on
    assert (
        page_models.to_clarify(
            stored([asked, _answer("Hm?", asked_back), explained, _answer("Why?", asked_back)]), catalog
        )
        is None
    )
    not_back = stored([asked, _answer("Ask Sam.", deferred)])
    assert page_models.to_clarify(not_back, catalog) is None  # not a question back
    assert page_models.to_clarify(stored([asked, _answer("What do you mean?")]), catalog) is None  # not analysed yet
    assert (
        page_models.to_clarify(stored([{"role": "assistant", "text": "Hi?"}, _answer("Why?", asked_back)]), catalog)
        is None
    )
    assert page_models.to_clarify(stored([_answer("Why?", asked_back)]), catalog) is None


def test_a_question_back_that_names_another_factor_has_that_one_explained():
    catalog = REAL
    asked_back = {"status": "no_update", "screened": {"kind": "question_back", "reason": "a question"}}
    asked = {"role": "assistant", "text": "Who would build models?", "about": "ml_expertise"}
    named = _answer("What do you mean by data governance exactly?", asked_back)
    assert page_models.to_clarify(stored([asked, named]), catalog) == "data_governance"
    # named twice, or nothing the catalog knows: the question it answers is the one explained
    both = _answer("Is that about data quality or data governance?", asked_back)
    assert page_models.to_clarify(stored([asked, both]), catalog) == "ml_expertise"
    unknown = {"role": "assistant", "text": "Anything else?", "about": "no_such_factor"}
    assert page_models.to_clarify(stored([unknown, _answer("Why?", asked_back)]), catalog) is None


def test_where_we_left_off_is_the_last_answer_given_before_this_visit_and_whether_it_was_a_pause():
    pause = {"status": "no_update", "screened": {"kind": "pause", "reason": "asked to pause: 'pause'"}}
    visit = datetime(2026, 11, 28, 9, 0, tzinfo=UTC)
    before, during = visit - timedelta(days=3), visit + timedelta(minutes=1)
    asked = {"role": "assistant", "text": "Where does your data live?", "created_at": before}
    left = page_models.where_we_left_off(stored([asked, _answer("In SAP.") | {"created_at": before}, asked]), visit)
    assert left == page_models.LeftOff(answered_at=before, paused=False)
    paused = page_models.where_we_left_off(
        stored([asked, _answer("Can we pause?", pause) | {"created_at": before}]), visit
    )
    assert paused is not None and paused.paused
    assert page_models.where_we_left_off(stored([asked, _answer("In SAP.") | {"created_at": during}]), visit) is None
    just_before = _answer("In SAP.") | {"created_at": visit - timedelta(minutes=5)}  # a reload mid-conversation
    assert page_models.where_we_left_off(stored([asked, just_before]), visit) is None
    assert page_models.where_we_left_off(stored([asked]), visit) is None  # never answered: nothing to come back to
    assert page_models.where_we_left_off([], visit) is None


PAUSE = {"status": "no_update", "screened": {"kind": "pause", "reason": "asked to pause: 'pause'"}}


def _question(text: str, about: str | None) -> dict:
    return {"role": "assistant", "text": text} | ({"about": about} if about else {})


def test_a_question_paused_on_stays_open_until_it_is_asked_again_or_an_answer_speaks_to_it():
    models_q = _question("Who would build models?", "ml_expertise")
    paused = [models_q, _answer("Can we pause?", PAUSE) | {"created_at": T0}]
    [open_one] = page_models.paused_questions(stored(paused))
    assert open_one == page_models.PausedQuestion(
        text="Who would build models?", about="ml_expertise", paused_at=T0, pause_turn=1
    )
    cloud_q = _question("Where do you host things?", "cloud")
    went_on = [*paused, cloud_q, _answer("Ask Sam.", {"status": "no_update"})]
    assert [q.about for q in page_models.paused_questions(stored(went_on))] == ["ml_expertise"]  # still open
    asked_again = [*went_on, _question("Coming back to it: Who would build models?", "ml_expertise")]
    assert page_models.paused_questions(stored(asked_again)) == []  # a paused question comes back once
    spoken_to = {"status": "processed", "readings": [{"factor_id": "ml_expertise", "value": 20, "confidence": 0.7}]}
    assert page_models.paused_questions(stored([*paused, cloud_q, _answer("Nobody, really.", spoken_to)])) == []
    answered = stored([models_q, _answer("Nobody, really.", spoken_to)])
    assert page_models.paused_questions(answered) == []  # answered: no pause
    unnamed = _question("Anything else?", None)  # written without its factor: nothing to tell it by
    assert page_models.paused_questions(stored([unnamed, _answer("Can we pause?", PAUSE)])) == []
    assert page_models.paused_questions(stored([models_q, _answer("Can we pause?")])) == []  # not analysed yet
    answered_then_paused = [models_q, _answer("In SAP."), _answer("Can we pause?", PAUSE)]
    assert page_models.paused_questions(stored(answered_then_paused)) == []  # the pause came after an answer


def test_a_paused_question_comes_back_after_another_question_or_at_the_next_visit_never_straight_away():
    visit = T0 + timedelta(hours=1)
    models_q = _question("Who would build models?", "ml_expertise")
    just_now = [models_q, _answer("Can we pause?", PAUSE) | {"created_at": visit - timedelta(minutes=2)}]
    # "Next question" right after the pause: another one
    assert page_models.to_ask_again(stored(just_now), visit) is None
    again = page_models.to_ask_again(
        stored([*just_now, _question("Where do you host?", "cloud"), _answer("AWS.")]), visit
    )
    assert again is not None and (again.text, again.about) == ("Who would build models?", "ml_expertise")

    days_ago = [models_q, _answer("Can we pause?", PAUSE) | {"created_at": visit - timedelta(days=2)}]
    came_back = stored(days_ago)
    assert page_models.to_ask_again(came_back, visit) == page_models.paused_questions(came_back)[0]

    # paused twice in a row: the first comes back now, the one paused on just now waits
    cloud_q = _question("Where do you host?", "cloud")
    twice = [*just_now, cloud_q, _answer("Let's move on.", PAUSE) | {"created_at": visit}]
    due = page_models.to_ask_again(stored(twice), visit)
    assert due is not None and due.about == "ml_expertise"
    after = [*twice, _question("Coming back to it: Who would build models?", "ml_expertise"), _answer("Two people.")]
    due = page_models.to_ask_again(stored(after), visit)
    assert due is not None and due.about == "cloud"
    assert page_models.to_ask_again([], visit) is None


def test_the_question_just_paused_on_is_the_one_the_last_word_set_aside():
    models_q = _question("Who would build models?", "ml_expertise")
    paused = [models_q, _answer("Can we pause?", PAUSE)]
    just = page_models.just_paused_on(stored(paused))
    assert just is not None and just.about == "ml_expertise"
    assert page_models.just_paused_on(stored([*paused, _question("Where do you host?", "cloud")])) is None  # went on
    assert (
        page_models.just_paused_on(stored([_question("Anything else?", None), _answer("Can we pause?", PAUSE)])) is None
    )
    assert page_models.just_paused_on(stored([models_q, _answer("Nobody.", {"status": "no_update"})])) is None


def _anna(at: datetime) -> FreshAssessment:
    """A person with answers from earlier weeks, each one clear answer (read at 0.55-0.6) and one barely heard."""
    states = {
        fid: said(REAL, fid, confidence, at - timedelta(days=days))
        for fid, confidence, days in [
            ("data_infrastructure", 0.573, 24),  # "5 different systems and lots of spreadsheets"
            ("ml_expertise", 0.558, 17),  # "two data scientists in the BI team"
            ("historical_data_depth", 0.561, 17),
            ("sensor_data", 0.35, 24),  # a passing remark: counts for too little
        ]
    }
    graph = graph_for(REAL)
    return freshness.assess(REAL, graph, build_summary(REAL, graph, states, None, at), at)


def test_the_questions_ahead_never_re_ask_what_was_answered_or_asked_and_start_with_what_comes_next():
    at = datetime(2026, 11, 28, 12, tzinfo=UTC)
    assessment, graph = _anna(at), graph_for(REAL)
    heard = {"factor_id": "privacy_protection", "value": 50, "confidence": 0.55}
    privacy = {"status": "processed", "readings": [heard]}
    session = [
        _question("How do your ERP, CRM and production systems exchange data?", "it_integration"),
        _answer("Hard to say.", {"status": "no_update"}),
        _question("How do you handle personal data under GDPR in analytics projects?", "privacy_protection"),
        _answer("We have the GDPR basics in place.", privacy),
    ]
    ahead = page_models.questions_ahead(REAL, graph, assessment, stored(session), at)
    answered = {"data_infrastructure", "ml_expertise", "historical_data_depth"}  # in earlier sessions
    asked = {"it_integration", "privacy_protection"}  # in this one
    assert len(ahead) == 3 and {q.factor_id for q in ahead}.isdisjoint(answered | asked)
    assert "sensor_data" in {q.factor_id for q in page_models.questions_ahead(REAL, graph, assessment, [], at, 60)}
    # what the conversation asks (the first) is what the overview lists first
    [asks] = page_models.questions_ahead(REAL, graph, assessment, stored(session), at, limit=1)
    assert asks == ahead[0] and not asks.verbatim
    # asked and not answered yet: the conversation shows that question, so it comes first, in its own words
    waiting = [*session, _question("Have you looked at the EU AI Act yet?", "regulatory_compliance")]
    first, *rest = page_models.questions_ahead(REAL, graph, assessment, stored(waiting), at)
    assert (first.factor_id, first.question, first.verbatim) == (
        "regulatory_compliance",
        "Have you looked at the EU AI Act yet?",
        True,
    )
    assert "regulatory_compliance" not in {q.factor_id for q in rest}
    # a question back: the question explained comes first
    back = {"status": "no_update", "screened": {"kind": "question_back", "reason": "a question"}}
    [explained] = page_models.questions_ahead(
        REAL, graph, assessment, stored([*waiting, _answer("What?", back)]), at, 1
    )
    assert explained.factor_id == "regulatory_compliance" and explained.question.startswith("Good question.")
    # a question paused on, at the next visit: it comes back first
    paused = [*session, _question("Have you looked at the EU AI Act yet?", "regulatory_compliance")]
    paused.append(_answer("Can we pause?", PAUSE) | {"created_at": at - timedelta(days=2)})
    [again] = page_models.questions_ahead(REAL, graph, assessment, stored(paused), at, 1)
    assert again.question == f"{page_models.COMING_BACK} Have you looked at the EU AI Act yet?"
    assert page_models.questions_ahead(REAL, graph, None, [], at) == []  # no summary yet: nothing to suggest
