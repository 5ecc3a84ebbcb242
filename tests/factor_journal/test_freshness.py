"""Fresh or stale: the decay of what was said, as pure functions of a state and an injected clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from factor_journal import freshness, transitions
from factor_journal.catalog import CatalogError, load_catalog
from factor_journal.catalog.models import parse_catalog
from factor_journal.graph import graph_for
from factor_journal.guidance import next_best_questions
from factor_journal.models import Conflict, FactorState, InferenceStatus, UserProfile
from factor_journal.rollup import PersonRow, aged, decode_said, encode_said, person_row, row_freshness
from factor_journal.summary import build_summary

CATALOG = """
version: "t1"
freshness: {version: "f1", default_half_life: 12 months, recheck_below: 0.5}
categories:
  - {id: people, name: People, half_life: 6 months}
  - {id: infra, name: Infrastructure, half_life: 18 months}
  - {id: data, name: Data}
decision_tiers:
  - {id: exploratory, name: Exploratory, budget: none, min_completeness: 0, min_avg_confidence: 0}
  - {id: low, name: Low, budget: "< 25k", min_completeness: 0.5, min_avg_confidence: 0.6}
  - {id: medium, name: Medium, budget: "< 100k", min_completeness: 0.5, min_avg_confidence: 0.75}
factors:
  - {id: sponsor, name: Sponsor, category: people, rubric: {low: l, mid: m, high: h},
     elicitation_questions: ["Who sponsors?"]}
  - {id: cloud, name: Cloud, category: infra, rubric: {low: l, mid: m, high: h}, elicitation_questions: ["Cloud?"]}
  - {id: history, name: History, category: data, half_life: never, rubric: {low: l, mid: m, high: h},
     elicitation_questions: ["How many years?"]}
  - {id: quality, name: Quality, category: data, rubric: {low: l, mid: m, high: h}, elicitation_questions: ["Clean?"]}
  - {id: score, name: Score, category: data, rubric: {low: l, mid: m, high: h}, elicitation_questions: [n/a],
     composite: {sponsor: 1, cloud: 1}}
archetypes:
  - {id: one, name: One, prerequisites: [{factor: cloud, min_value: 10, min_confidence: 0.5}]}
  - {id: two, name: Two, prerequisites: [{factor: cloud, min_value: 10, min_confidence: 0.5},
                                         {factor: sponsor, min_value: 10, min_confidence: 0.5}]}
"""
T0 = datetime(2025, 1, 1, tzinfo=UTC)
MONTH = timedelta(days=365.25 / 12)


@pytest.fixture(scope="module")
def catalog():
    return parse_catalog(CATALOG)


def said(catalog, fid: str, confidence: float, at: datetime = T0, status=InferenceStatus.unconfirmed) -> FactorState:
    return FactorState(
        factor_id=fid,
        category=catalog.factor(fid).category,
        current_value=60.0,
        current_confidence=confidence,
        inference_status=status,
        observed_at=at,
        folded_through=at,
        folded_through_id="e",
    )


def summary_of(catalog, *states: FactorState):
    by_id = {s.factor_id: s for s in states}
    composite = catalog.factor("score")
    by_id["score"] = transitions.composite_state(
        catalog, composite, FactorState(factor_id="score", category="data"), by_id
    )
    return build_summary(catalog, graph_for(catalog), by_id, None, T0)


def test_decay_halves_per_half_life_along_the_curve(catalog):
    sponsor = said(catalog, "sponsor", 0.8)  # people: 6 months
    curve = [freshness.effective_confidence(sponsor, T0 + months * MONTH, catalog) for months in (0, 3, 6, 12, 24)]
    assert curve == pytest.approx([0.8, 0.8 / 2**0.5, 0.4, 0.2, 0.05], abs=1e-4)
    cloud = said(catalog, "cloud", 0.8)  # infrastructure: 18 months
    assert freshness.effective_confidence(cloud, T0 + 18 * MONTH, catalog) == pytest.approx(0.4, abs=1e-4)
    quality = said(catalog, "quality", 0.8)  # no half-life of its own or its category's: the default, 12 months
    assert freshness.effective_confidence(quality, T0 + 12 * MONTH, catalog) == pytest.approx(0.4, abs=1e-4)
    # the stored value never changes because time passed
    assert sponsor.current_confidence == 0.8
    points = freshness.decay_curve(sponsor, catalog, T0 + 12 * MONTH, points=4)
    assert [round(c, 3) for _, c in points] == [0.8, 0.566, 0.4, 0.283, 0.2]
    assert points[0][0] == T0 and points[-1][0] == T0 + 12 * MONTH


def test_a_half_life_of_never_does_not_age(catalog):
    history = said(catalog, "history", 0.7)
    assert catalog.half_life("history").never
    assert freshness.effective_confidence(history, T0 + 600 * MONTH, catalog) == 0.7
    assert freshness.due_at(history, catalog) is None
    assert freshness.decay_curve(history, catalog, T0 + 24 * MONTH) == []


def test_a_confirmation_refreshes_the_answer(catalog):
    old = said(catalog, "sponsor", 0.8)
    later = T0 + 14 * MONTH
    assert freshness.effective_confidence(old, later, catalog) < 0.2
    assert freshness.is_due(old, later, catalog)
    confirmed = transitions.confirm(old, "u", "e2", later, None).state
    assert freshness.effective_confidence(confirmed, later, catalog) == pytest.approx(0.95)  # the person's word
    assert not freshness.is_due(confirmed, later, catalog)
    assert freshness.due_at(confirmed, catalog) == later + 6 * MONTH * __import__("math").log2(0.95 / 0.5)


def test_a_corroborating_reading_refreshes_but_an_open_conflict_does_not(catalog):
    backed = said(catalog, "sponsor", 0.95, status=InferenceStatus.user_provided)
    corroborated = backed.model_copy(update={"folded_through": T0 + 6 * MONTH})
    assert freshness.said_at(corroborated) == T0 + 6 * MONTH
    assert freshness.effective_confidence(corroborated, T0 + 6 * MONTH, catalog) == 0.95
    conflict = Conflict(
        entry_id="c", proposed_value=10, proposed_confidence=0.6, rationale="r", observed_at=T0 + 6 * MONTH
    )
    disputed = corroborated.model_copy(update={"open_conflict": conflict})
    assert freshness.said_at(disputed) == T0
    assert freshness.effective_confidence(disputed, T0 + 6 * MONTH, catalog) == pytest.approx(0.475)


def test_due_for_a_recheck_when_time_alone_takes_it_under_the_threshold(catalog):
    sure = said(catalog, "sponsor", 0.8)  # crosses 0.5 after log2(0.8/0.5) = 0.678 half-lives
    assert freshness.due_at(sure, catalog) == T0 + 6 * MONTH * 0.6780719051126377
    assert not freshness.is_due(sure, T0 + 4 * MONTH, catalog)
    assert freshness.is_due(sure, T0 + 5 * MONTH, catalog)
    unsure = said(catalog, "sponsor", 0.4)  # never above 0.5: weak, not stale, until a half-life old
    assert not freshness.is_due(unsure, T0 + 5 * MONTH, catalog)
    assert freshness.is_due(unsure, T0 + 6 * MONTH, catalog)


def test_an_answer_just_sure_enough_is_not_due_days_after_it_was_said(catalog):
    # 0.502 crosses 0.5 within two days of a 6-month half-life: it waits a quarter of a half-life instead
    barely = said(catalog, "sponsor", 0.502)
    assert not freshness.is_due(barely, T0 + timedelta(days=30), catalog)
    assert freshness.due_at(barely, catalog) == T0 + 6 * MONTH * freshness.MIN_HALF_LIVES_BEFORE_DUE
    dues = [freshness.due_at(said(catalog, "sponsor", c), catalog) for c in (0.45, 0.502, 0.55, 0.6, 0.8, 0.95)]
    assert all(due is not None for due in dues)
    surer_later = [dues[i] <= dues[i + 1] for i in range(1, len(dues) - 1)]  # above the line: surer lasts longer
    assert all(surer_later), dues


def test_composites_age_with_their_components(catalog):
    sponsor, cloud = said(catalog, "sponsor", 0.8), said(catalog, "cloud", 0.8, at=T0 + 12 * MONTH)
    states = {"sponsor": sponsor, "cloud": cloud}
    composite = transitions.composite_state(
        catalog, catalog.factor("score"), FactorState(factor_id="score", category="data"), states
    )
    states["score"] = composite
    at = T0 + 12 * MONTH  # sponsor is two half-lives old (0.2), cloud was just said (0.8)
    assert composite.current_confidence == 0.8
    assert freshness.effective_confidence(composite, at, catalog, states) == pytest.approx(0.5)
    assert freshness.aged_states(states, at, catalog)["score"].current_confidence == pytest.approx(0.5)
    with pytest.raises(ValueError, match="composite"):
        freshness.effective_confidence(composite, at, catalog)
    assert freshness.due_at(composite, catalog) is None  # its components are re-checked, not it


def test_assess_ages_every_confidence_and_what_rests_on_them(catalog):
    summary = summary_of(
        catalog, said(catalog, "sponsor", 0.9), said(catalog, "cloud", 0.9), said(catalog, "quality", 0.9)
    )
    assert summary.overall.decision_tier == "medium"
    fresh = freshness.assess(catalog, graph_for(catalog), summary, T0)
    assert fresh.summary.overall.decision_tier == "medium" and fresh.to_recheck == [] and fresh.tier_note is None
    later = freshness.assess(catalog, graph_for(catalog), summary, T0 + 9 * MONTH)
    assert later.stored is summary and summary.overall.avg_confidence == 0.9  # the stored summary is untouched
    assert later.summary.categories["people"].avg_confidence == pytest.approx(0.9 * 0.5**1.5, abs=1e-4)
    assert later.summary.factors["sponsor"].current_confidence == pytest.approx(0.3182, abs=1e-4)
    assert later.factors["sponsor"].stored_confidence == 0.9 and later.factors["sponsor"].due
    # the capabilities' confidence thresholds are weighed with the aged confidence
    assert "two" not in later.summary.capabilities.can_evaluate and "two" in summary.capabilities.can_evaluate
    # stale first by how many unlocks rest on them: cloud (2 archetypes) before sponsor (1) before quality (0)
    assert [item.factor_id for item in later.to_recheck] == ["sponsor"]
    much_later = freshness.assess(catalog, graph_for(catalog), summary, T0 + 20 * MONTH)
    assert [item.factor_id for item in much_later.to_recheck] == ["cloud", "sponsor", "quality"]


def test_as_of_ages_to_the_as_of_date(catalog):
    summary = summary_of(catalog, said(catalog, "sponsor", 0.8))
    then = freshness.assess(catalog, graph_for(catalog), summary, T0 + 6 * MONTH)
    now = freshness.assess(catalog, graph_for(catalog), summary, T0 + 24 * MONTH)
    assert then.factors["sponsor"].confidence == pytest.approx(0.4, abs=1e-4)
    assert now.factors["sponsor"].confidence == pytest.approx(0.05, abs=1e-4)
    before = freshness.assess(catalog, graph_for(catalog), summary, T0 - MONTH)  # not said yet: no age
    assert before.factors["sponsor"].confidence == 0.8


def test_a_tier_never_drops_silently(catalog):
    summary = summary_of(catalog, said(catalog, "sponsor", 0.9), said(catalog, "history", 0.9))
    assert summary.overall.decision_tier == "medium"  # 50% mapped, 0.9 sure
    # 0.75 average: sponsor must keep 0.6 -> it lapses after log2(0.9/0.6) half-lives = 3.51 months
    soon = freshness.assess(catalog, graph_for(catalog), summary, T0 + 3 * MONTH)
    note = soon.tier_note
    assert note is not None and not note.lapsed and note.now == "medium" and note.confirm == ["sponsor"]
    assert abs(note.lapses_at - (T0 + 6 * MONTH * 0.5849625)) < timedelta(hours=3)  # confidences are kept to 4 places
    assert "keep it" in note.message and "Medium" in note.message
    lapsed = freshness.assess(catalog, graph_for(catalog), summary, T0 + 8 * MONTH)
    assert lapsed.tier_note.lapsed and lapsed.tier_note.now == "low" and lapsed.summary.overall.decision_tier == "low"
    assert lapsed.tier_note.reached == "medium" and lapsed.tier_note.confirm == ["sponsor"]
    assert "get Medium back" in lapsed.tier_note.message
    assert freshness.assess(catalog, graph_for(catalog), summary, T0).tier_note is None  # far from lapsing


def test_next_best_questions_put_stale_high_impact_answers_first(catalog):
    summary = summary_of(
        catalog, said(catalog, "sponsor", 0.9), said(catalog, "cloud", 0.9), said(catalog, "quality", 0.9)
    )
    graph = graph_for(catalog)
    later = freshness.assess(catalog, graph, summary, T0 + 20 * MONTH)
    stale = later.stale
    assert stale == {"cloud": T0, "sponsor": T0, "quality": T0}  # only what is due, with when it was last said
    assert freshness.assess(catalog, graph, summary, T0 + MONTH).stale == {}
    questions = next_best_questions(catalog, graph, later.summary, limit=4, stale=stale)
    assert [q.factor_id for q in questions][:3] == ["cloud", "sponsor", "quality"]
    assert (
        all(q.stale for q in questions[:3]) and "re-check" in questions[0].reason and "Jan 2025" in questions[0].reason
    )
    assert next_best_questions(catalog, graph, later.summary, limit=4)[0].factor_id != "quality"  # unchanged without


def test_roll_up_rows_are_aged_from_the_row_alone(catalog):
    row = PersonRow(
        user_id="p",
        completeness=0.5,
        avg_confidence=0.9,
        assessed=2,
        total=4,
        decision_tier="medium",
        said=encode_said([("sponsor", 0.9, T0), ("cloud", 0.9, T0), ("score", 0.45, T0)]),
    )
    now = row_freshness(row, catalog, T0)
    assert (now.due, now.share, now.avg_confidence, now.decision_tier) == (0, 0.0, 0.9, "medium")
    later = row_freshness(row, catalog, T0 + 9 * MONTH)  # sponsor due (0.318), cloud not (0.636)
    assert later.due == 1 and later.share == 0.5 and later.decision_tier == "exploratory"
    assert later.avg_confidence == pytest.approx((0.3182 + 0.6364) / 2, abs=1e-3)
    assert list(decode_said(row.said))[0] == ("sponsor", 0.9, T0) and list(decode_said("")) == []
    damaged = row.model_copy(update={"said": "sponsor lots 1735689600;" + encode_said([("cloud", 0.9, T0)])})
    assert row_freshness(damaged, catalog, T0 + 9 * MONTH).due == 0  # a mark that no longer reads is skipped
    old_row = row.model_copy(update={"said": ""})  # written before rows carried answers' ages: as stored
    assert row_freshness(old_row, catalog, T0 + 9 * MONTH).decision_tier == "medium"


@pytest.mark.parametrize("confidence", [0.3, 0.5, 0.502, 0.51, 0.55, 0.7, 0.9])
def test_the_team_row_counts_as_due_exactly_what_the_persons_own_pages_and_reminders_do(catalog, confidence):
    """One rule: an answer just sure enough (0.502 crosses 0.5 within days) is due a quarter of a half-life
    after it was said on the person's pages, in the reminder, and in the team's roll-up row alike."""
    summary = summary_of(
        catalog, said(catalog, "sponsor", confidence), said(catalog, "cloud", confidence), said(catalog, "quality", 0.9)
    )
    row = person_row(UserProfile(user_id="p"), summary, None, catalog, T0)
    graph = graph_for(catalog)
    for days in (0, 1, 3, 10, 30, 44, 46, 100, 137, 200, 400):
        at = T0 + timedelta(days=days)
        own = freshness.assess(catalog, graph, summary, at)
        team = row_freshness(row, catalog, at)
        assert team.due == len(own.to_recheck), (confidence, days)
        assert team.avg_confidence == pytest.approx(own.summary.overall.avg_confidence, abs=1e-3), (confidence, days)
        assert aged(row, catalog, at).due == team.due  # as the nightly job ages the stored row
    a_quarter = timedelta(days=6 * 365.25 / 12 / 4)  # of the sponsor's six months: nothing is due sooner
    assert row_freshness(row, catalog, T0 + a_quarter - timedelta(hours=1)).due == 0


BAD = [
    (
        "  - {id: cloud, name: Cloud, category: infra,",
        "  - {id: cloud, name: Cloud, category: infra, half_life: soon,",
        r"factors\[cloud\]\.half_life: .*'soon' is not understood",
    ),
    (
        "  - {id: cloud, name: Cloud, category: infra,",
        "  - {id: cloud, name: Cloud, category: infra, half_life: 18,",
        r"factors\[cloud\]\.half_life: .*no unit",
    ),
    (
        "  - {id: cloud, name: Cloud, category: infra,",
        "  - {id: cloud, name: Cloud, category: infra, half_life: 0 day,",
        r"factors\[cloud\]\.half_life: .*between 1 day and 100 years",
    ),
    (
        "{id: people, name: People, half_life: 6 months}",
        "{id: people, name: People, half_life: -6 months}",
        r"categories\[people\]\.half_life",
    ),
    (
        "composite: {sponsor: 1, cloud: 1}",
        "composite: {sponsor: 1, cloud: 1}, half_life: 6 months",
        "composite 'score' has a half-life",
    ),
    ("recheck_below: 0.5", "recheck_below: 1.5", r"freshness\.recheck_below"),
]


@pytest.mark.parametrize(("before", "after", "message"), BAD)
def test_bad_freshness_values_are_refused_at_load_naming_the_factor(before, after, message):
    assert before in CATALOG
    with pytest.raises(CatalogError, match=message):
        parse_catalog(CATALOG.replace(before, after, 1))


def test_the_packaged_catalog_carries_justified_half_lives():
    catalog = load_catalog()
    assert catalog.freshness.version and 0 < catalog.freshness.recheck_below < 1
    # the values are the catalog's alone (docs/freshness.md's table is tested against it); what holds is the
    # reasoning behind them: priorities move faster than infrastructure, and kept history does not go away
    strategy, infrastructure = catalog.half_life("ai_strategy"), catalog.half_life("it_integration")
    assert strategy.days is not None and infrastructure.days is not None and strategy.days < infrastructure.days
    assert catalog.half_life("historical_data_depth").never
    assert all(catalog.half_life(f.id) for f in catalog.assessable_factors)


def test_a_summary_holding_a_factor_the_catalog_no_longer_knows_is_still_aged(catalog):
    summary = summary_of(catalog, said(catalog, "sponsor", 0.9))
    gone = FactorState(factor_id="retired", category="data", current_value=10, current_confidence=0.9, observed_at=T0)
    summary = summary.model_copy(update={"factors": {**summary.factors, "retired": gone}})
    fresh = freshness.assess(catalog, graph_for(catalog), summary, T0 + 9 * MONTH)
    assert "retired" not in fresh.factors and fresh.factors["sponsor"].due
