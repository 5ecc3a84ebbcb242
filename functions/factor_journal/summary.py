"""The assessment summary as a pure function of the user's factor states.

``build_summary`` is all the store needs to keep the summary current: the
summary document carries every factor's state, so after a change the store
swaps in the changed states and rebuilds the derived parts in memory, reading
nothing else.  The scan-based baseline (``FactorJournalStore.rebuild_summary_by_scan``)
feeds the same function from the factor documents, so the two always agree.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime

from factor_journal.catalog import Catalog, DecisionTier
from factor_journal.graph import FactorGraph, meets
from factor_journal.models import (
    AssessmentSummary,
    BlockedCapability,
    Blocker,
    Capabilities,
    CategoryProgress,
    FactorState,
    InferenceStatus,
    LastConversation,
    NextTier,
    OpenConflict,
    Overall,
    RecheckItem,
    UnconfirmedInference,
)


def _mean(values: list[float]) -> float:
    return round(sum(values) / len(values), 4) if values else 0.0


def decision_tier(catalog: Catalog, completeness: float, avg_confidence: float) -> DecisionTier:
    """The highest tier whose completeness and confidence thresholds are both met."""
    reached = catalog.decision_tiers[0]
    for tier in catalog.decision_tiers:
        if completeness >= tier.min_completeness and avg_confidence >= tier.min_avg_confidence:
            reached = tier
    return reached


def next_tier(
    catalog: Catalog, current: DecisionTier, assessed: int, total: int, avg_confidence: float
) -> NextTier | None:
    """The tier above ``current`` and what it still needs, or None at the top."""
    tiers = catalog.decision_tiers
    position = [tier.id for tier in tiers].index(current.id)
    if position + 1 >= len(tiers):
        return None
    target = tiers[position + 1]
    needed_assessed = math.ceil(round(target.min_completeness * total, 6))
    return NextTier(
        tier=target.id,
        name=target.name,
        budget=target.budget,
        min_completeness=target.min_completeness,
        min_avg_confidence=target.min_avg_confidence,
        factors_needed=max(0, needed_assessed - assessed),
        confidence_gap=round(max(0.0, target.min_avg_confidence - avg_confidence), 4),
    )


def _prerequisite_closeness(value: float | None, confidence: float, min_value: float, min_confidence: float) -> float:
    """1 when met, 0 when unassessed, otherwise the mean of value and confidence attainment."""
    if value is None:
        return 0.0
    value_part = 1.0 if value >= min_value else (value / min_value if min_value > 0 else 1.0)
    confidence_part = 1.0 if confidence >= min_confidence else (confidence / min_confidence if min_confidence else 1.0)
    return (max(0.0, value_part) + confidence_part) / 2


def capabilities(catalog: Catalog, graph: FactorGraph, states: Mapping[str, FactorState]) -> Capabilities:
    """Archetypes the user can evaluate now, and the others ranked by how close they are."""
    can_evaluate: list[str] = []
    blocked: list[BlockedCapability] = []
    for archetype in catalog.archetypes:
        blockers: list[Blocker] = []
        closeness: list[float] = []
        for prerequisite in archetype.prerequisites:
            state = states.get(prerequisite.factor)
            value = state.current_value if state else None
            confidence = state.current_confidence if state and value is not None else 0.0
            if meets(prerequisite, state):
                closeness.append(1.0)
                continue
            missing = (
                ["unassessed"]
                if value is None
                else [
                    reason
                    for reason, short in (
                        ("value", value < prerequisite.min_value),
                        ("confidence", confidence < prerequisite.min_confidence),
                    )
                    if short
                ]
            )
            closeness.append(
                _prerequisite_closeness(value, confidence, prerequisite.min_value, prerequisite.min_confidence)
            )
            blockers.append(
                Blocker(
                    factor_id=prerequisite.factor,
                    factor_name=graph.name(prerequisite.factor),
                    value=value,
                    confidence=round(confidence, 4),
                    min_value=prerequisite.min_value,
                    min_confidence=prerequisite.min_confidence,
                    missing=missing,
                )
            )
        if not blockers:
            can_evaluate.append(archetype.id)
            continue
        blocked.append(
            BlockedCapability(
                archetype_id=archetype.id,
                name=archetype.name,
                closeness=round(_mean(closeness), 4),
                met=len(archetype.prerequisites) - len(blockers),
                total=len(archetype.prerequisites),
                blockers=blockers,
            )
        )
    blocked.sort(key=lambda item: (-item.closeness, len(item.blockers), item.archetype_id))
    return Capabilities(can_evaluate=can_evaluate, cannot_evaluate_yet=blocked)


def build_summary(
    catalog: Catalog,
    graph: FactorGraph,
    states: Mapping[str, FactorState],
    last_conversation: LastConversation | None,
    updated_at: datetime | None,
) -> AssessmentSummary:
    """The whole assessment summary from the user's factor states (missing ones are unassessed)."""
    categories: dict[str, CategoryProgress] = {}
    all_confidences: list[float] = []
    total = 0
    for category in catalog.categories:
        factors = [f for f in catalog.assessable_factors if f.category == category.id]
        assessed = [states[f.id] for f in factors if f.id in states and states[f.id].is_assessed]
        confidences = [state.current_confidence for state in assessed]
        all_confidences.extend(confidences)
        total += len(factors)
        updates = [state.observed_at for state in assessed if state.observed_at is not None]
        categories[category.id] = CategoryProgress(
            name=category.name,
            completeness=round(len(assessed) / len(factors), 4) if factors else 0.0,
            avg_confidence=_mean(confidences),
            factor_count=len(assessed),
            total_factors=len(factors),
            last_updated=max(updates) if updates else None,
        )

    assessed_count = len(all_confidences)
    completeness = round(assessed_count / total, 4) if total else 0.0
    avg_confidence = _mean(all_confidences)
    tier = decision_tier(catalog, completeness, avg_confidence)
    overall = Overall(
        total_factors_assessed=assessed_count,
        total_factors=total,
        completeness=completeness,
        avg_confidence=avg_confidence,
        decision_tier=tier.id,
        decision_tier_name=tier.name,
        decision_budget=tier.budget,
        next_tier=next_tier(catalog, tier, assessed_count, total, avg_confidence),
    )

    ordered = [states[f.id] for f in catalog.factors if f.id in states]
    unconfirmed = sorted(
        (
            UnconfirmedInference(
                factor_id=state.factor_id,
                factor_name=graph.name(state.factor_id),
                value=state.current_value,
                confidence=state.current_confidence,
                evidence_count=state.evidence_count,
                latest_mention=state.observed_at,
            )
            for state in ordered
            if state.inference_status == InferenceStatus.unconfirmed
            and state.current_value is not None
            and not catalog.factor(state.factor_id).is_composite
        ),
        key=lambda item: (
            item.latest_mention is None,
            -(item.latest_mention.timestamp() if item.latest_mention else 0),
        ),
    )
    conflicts = [
        OpenConflict(
            factor_id=state.factor_id,
            factor_name=graph.name(state.factor_id),
            current_value=state.current_value,
            proposed_value=state.open_conflict.proposed_value,
            proposed_confidence=state.open_conflict.proposed_confidence,
            rationale=state.open_conflict.rationale,
            entry_id=state.open_conflict.entry_id,
            observed_at=state.open_conflict.observed_at,
        )
        for state in ordered
        if state.open_conflict is not None
    ]
    rechecks = [
        RecheckItem(
            factor_id=state.factor_id,
            factor_name=graph.name(state.factor_id),
            reason=state.recheck_reason or "",
        )
        for state in ordered
        if state.needs_recheck
    ]
    return AssessmentSummary(
        catalog_version=catalog.version,
        categories=categories,
        overall=overall,
        capabilities=capabilities(catalog, graph, states),
        last_conversation=last_conversation,
        unconfirmed_inferences=unconfirmed,
        conflicts=conflicts,
        needs_recheck=rechecks,
        factors=dict(states),
        updated_at=updated_at,
    )
