"""Decision tiers and capability rules, exactly, on a small catalog with round thresholds.

The pure rules are checked directly, and again on the summary a change leaves (the pure planner's; that the
store writes it is tested on the emulator in test_store.py).
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from planned import Person

from factor_journal.graph import graph_for
from factor_journal.models import FactorState, InferenceStatus
from factor_journal.summary import build_summary


def state(factor_id: str, value: float | None, confidence: float, category: str = "data") -> FactorState:
    return FactorState(
        factor_id=factor_id,
        category=category,
        current_value=value,
        current_confidence=confidence,
        inference_status=InferenceStatus.unconfirmed if value is not None else InferenceStatus.unassessed,
        observed_at=datetime.now(UTC),
    )


def summarise(catalog, *states: FactorState):
    return build_summary(catalog, graph_for(catalog), {s.factor_id: s for s in states}, None, None)


def test_nothing_assessed_is_exploratory_and_says_what_the_next_tier_needs(small_catalog):
    summary = summarise(small_catalog)
    assert summary.overall.decision_tier == "exploratory"
    assert summary.overall.next_tier.tier == "low_risk"
    assert summary.overall.next_tier.factors_needed == 2  # 40% of 5 assessable factors
    assert summary.overall.next_tier.confidence_gap == pytest.approx(0.6)
    assert summary.overall.total_factors == 5  # the composite is not counted


@pytest.mark.parametrize(
    ("states", "tier"),
    [
        ([("quality", 50, 0.59), ("skills", 50, 0.59)], "exploratory"),  # confidence just short
        ([("quality", 50, 0.6)], "exploratory"),  # completeness 20% < 40%
        ([("quality", 50, 0.6), ("skills", 50, 0.6)], "low_risk"),  # 40%, 0.6: exactly on both thresholds
        ([("quality", 50, 0.8), ("skills", 50, 0.8), ("storage", 50, 0.7)], "medium_risk"),  # 60%, 0.7667
        ([("quality", 50, 0.8), ("skills", 50, 0.7), ("storage", 50, 0.7)], "low_risk"),  # 0.7333 < 0.75
        ([(f, 50, 0.9) for f in ("quality", "governance", "storage", "skills", "sponsorship")], "high_risk"),
        ([(f, 50, 0.84) for f in ("quality", "governance", "storage", "skills", "sponsorship")], "medium_risk"),
    ],
)
def test_decision_tier_thresholds(small_catalog, states, tier):
    summary = summarise(small_catalog, *(state(f, v, c) for f, v, c in states))
    assert summary.overall.decision_tier == tier


def test_top_tier_has_no_next_tier(small_catalog):
    everything = [state(f, 50, 0.9) for f in ("quality", "governance", "storage", "skills", "sponsorship")]
    assert summarise(small_catalog, *everything).overall.next_tier is None


def test_capabilities_name_blockers_and_rank_by_closeness(small_catalog):
    summary = summarise(small_catalog, state("quality", 65, 0.75), state("skills", 40, 0.8, "people"))
    caps = summary.capabilities
    assert caps.can_evaluate == ["easy"]
    assert [b.archetype_id for b in caps.cannot_evaluate_yet] == ["medium", "hard"]
    medium = caps.cannot_evaluate_yet[0]
    assert (medium.met, medium.total) == (1, 2)
    [blocker] = medium.blockers
    assert (blocker.factor_id, blocker.value, blocker.min_value, blocker.missing) == ("skills", 40, 50, ["value"])
    hard = caps.cannot_evaluate_yet[1]
    by_factor = {b.factor_id: b for b in hard.blockers}
    assert by_factor["storage"].missing == ["unassessed"]
    assert by_factor["quality"].missing == ["value", "confidence"]
    assert medium.closeness > hard.closeness


def test_low_confidence_alone_blocks(small_catalog):
    summary = summarise(small_catalog, state("quality", 90, 0.5))
    easy = next(b for b in summary.capabilities.cannot_evaluate_yet if b.archetype_id == "easy")
    assert easy.blockers[0].missing == ["confidence"]


def test_graph_unlocks_if_improved(small_catalog):
    graph = graph_for(small_catalog)
    states = {"quality": state("quality", 65, 0.75), "skills": state("skills", 40, 0.8, "people")}
    assert graph.unlocks_if_improved("skills", states) == ["medium"]
    assert graph.unlocks_if_improved("storage", states) == []
    assert graph.depends_on("quality") == ["governance"]
    assert graph.dependents("governance") == ["quality"]
    assert graph.composites_of("quality") == ["readiness"]


def test_the_summary_a_change_leaves_follows_the_rules(small_catalog):
    """The summary the planner writes with a change (the store writes the change set whole: test_store.py)."""
    person = Person(small_catalog)
    for factor_id, value, confidence in [("quality", 65, 0.75), ("skills", 55, 0.8), ("storage", 20, 0.8)]:
        person.say(factor_id, value, confidence)
    summary = person.summary
    assert summary.overall.decision_tier == "medium_risk"
    assert summary.overall.next_tier.factors_needed == 2
    assert summary.capabilities.can_evaluate == ["easy", "medium"]
    [hard] = summary.capabilities.cannot_evaluate_yet
    assert {b.factor_id for b in hard.blockers} == {"quality", "skills", "storage"}
    assert summary.factors["readiness"].current_value == pytest.approx((3 * 65 + 55) / 4, abs=0.01)
