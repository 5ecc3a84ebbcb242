"""Evidence accumulation: a new reading is combined with what the factor already rests on.

The factor's state (value, confidence, evidence count) summarises its journal,
so synthesis is O(1): the design's recalculate-from-journal without re-reading
the journal on every turn.  Newer evidence weighs more than any single older
one, but accumulated evidence resists a single contrary turn.

**Agreement never makes us less sure.**  A reading agrees with the factor's value when both fall in the same
band of the factor's scale (low, mid, high), or lie within ``AGREEMENT_BAND`` points of each other across a
band edge.  An agreeing reading leaves the confidence at least as high as the surer of the two, plus the
corroboration bonus (capped); only a disagreeing reading is merged by the SDM rule, which may lower it.
"""

from __future__ import annotations

from factor_journal.catalog.models import Scale, band_of
from factor_journal.models import USER_BACKED, FactorState, InferredUpdate

PRIOR_EVIDENCE_CAP = 3  # beyond three observations, more history adds no further inertia
PRIOR_WEIGHT_PER_OBSERVATION = 0.5
AGREEMENT_BAND = 10.0  # readings this close (on a 0-100 scale) corroborate each other
CORROBORATION_BONUS = 0.05
MAX_SYNTHESISED_CONFIDENCE = 0.95


def merge_confidence(existing: float, new: float) -> float:
    """Confidence merging of the SDM memory design: lean on a high existing
    confidence, on the new one when the existing is low, balance in between."""
    if existing >= 0.8:
        merged = 0.7 * existing + 0.3 * new
    elif existing <= 0.2:
        merged = 0.3 * existing + 0.7 * new
    else:
        merged = 0.5 * existing + 0.5 * new
    return round(merged, 4)


def agrees(scale: Scale, prior: float, value: float) -> bool:
    """Whether two values on ``scale`` corroborate each other: the same band, or within ``AGREEMENT_BAND``
    points (of 100) across a band edge."""
    span = scale.max - scale.min
    same_band = band_of(100.0 * (prior - scale.min) / span) == band_of(100.0 * (value - scale.min) / span)
    return same_band or abs(prior - value) <= AGREEMENT_BAND * span / 100


def synthesise(state: FactorState, update: InferredUpdate, scale: Scale | None = None) -> InferredUpdate:
    """The update with value and confidence combined with the factor's earlier inferred evidence.

    Unchanged when there is no earlier evidence, when the value is user-backed
    (the conflict rules apply instead), or when the update is an older
    observation arriving late (it stands on the timeline at its own time).
    """
    if not state.is_assessed or state.inference_status in USER_BACKED:
        return update
    if state.observed_at is not None and update.observed_at is not None and update.observed_at < state.observed_at:
        return update
    prior = state.current_value
    assert prior is not None
    prior_weight = (
        state.current_confidence * min(state.evidence_count, PRIOR_EVIDENCE_CAP) * PRIOR_WEIGHT_PER_OBSERVATION
    )
    new_weight = update.confidence
    if prior_weight + new_weight == 0:
        return update
    value = round((prior_weight * prior + new_weight * update.value) / (prior_weight + new_weight), 2)
    if agrees(scale or Scale(), prior, update.value):
        surer = max(state.current_confidence, update.confidence)
        confidence = max(surer, min(MAX_SYNTHESISED_CONFIDENCE, round(surer + CORROBORATION_BONUS, 4)))
    else:
        confidence = merge_confidence(state.current_confidence, update.confidence)
    observations = state.evidence_count
    rationale = (
        f"{update.rationale} (combined with {observations} earlier observation"
        f"{'s' if observations != 1 else ''}: {prior:g} → {value:g})"
    )
    return update.model_copy(update={"value": value, "confidence": confidence, "rationale": rationale})
