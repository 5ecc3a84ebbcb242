"""Evidence weighing, confidence merging and the move bound, table-driven (no Firestore)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from factor_journal.catalog.models import Scale
from factor_journal.evidence import MOVED_CONFIDENCE_CAP, agrees, bound_move, merge_confidence, synthesise
from factor_journal.models import FactorState, InferenceStatus, InferredUpdate

NOW = datetime(2026, 11, 20, tzinfo=UTC)


@pytest.mark.parametrize(
    ("existing", "new", "merged"),
    [(0.9, 0.5, 0.78), (0.1, 0.9, 0.66), (0.5, 0.7, 0.6), (0.8, 0.8, 0.8), (0.2, 0.2, 0.2)],
)
def test_merge_confidence_follows_the_sdm_rule(existing, new, merged):
    assert merge_confidence(existing, new) == pytest.approx(merged)


def prior(value, confidence, count, status=InferenceStatus.unconfirmed) -> FactorState:
    return FactorState(
        factor_id="q",
        category="c",
        current_value=value,
        current_confidence=confidence,
        inference_status=status,
        evidence_count=count,
        observed_at=NOW - timedelta(hours=1),
    )


def reading(value, confidence=0.7) -> InferredUpdate:
    return InferredUpdate(factor_id="q", value=value, confidence=confidence, rationale="r", observed_at=NOW)


@pytest.mark.parametrize(
    ("state", "value", "expected_value", "corroborated"),
    [
        (FactorState(factor_id="q", category="c"), 30, 30, False),  # nothing earlier: unchanged
        (prior(20, 0.6, 1), 60, 20 + (60 - 20) * 0.7 / (0.3 + 0.7), False),
        (prior(50, 0.6, 1), 55, (0.3 * 50 + 0.7 * 55) / 1.0, True),  # within the band: corroborates
        (prior(50, 0.95, 2, InferenceStatus.user_provided), 90, 90, False),  # user-backed: conflict rules apply
    ],
)
def test_synthesis_weighs_earlier_evidence(state, value, expected_value, corroborated):
    result = synthesise(state, reading(value))
    assert result.value == pytest.approx(expected_value, abs=0.01)
    if state.is_assessed and state.inference_status == InferenceStatus.unconfirmed:
        if corroborated:  # agreement: the surer of the two, plus the bonus
            assert result.confidence == pytest.approx(max(state.current_confidence, 0.7) + 0.05)
        else:
            assert result.confidence == pytest.approx(merge_confidence(state.current_confidence, 0.7))


@pytest.mark.parametrize(
    ("prior_value", "prior_confidence", "value", "confidence"),
    [
        (20, 0.83, 35, 0.6),  # both low, 15 points apart: the case that lost ten points of confidence
        (5, 0.9, 38, 0.3),  # both low, far apart, a weak second reading
        (45, 0.7, 68, 0.5),  # both mid
        (72, 0.6, 99, 0.95),  # both high: the surer second reading leads
        (38, 0.8, 45, 0.5),  # across the low/mid edge but within 10 points
    ],
)
def test_agreeing_evidence_never_makes_us_less_sure(prior_value, prior_confidence, value, confidence):
    result = synthesise(prior(prior_value, prior_confidence, 1), reading(value, confidence))
    assert result.confidence >= max(prior_confidence, confidence)
    assert result.confidence == pytest.approx(min(0.95, max(prior_confidence, confidence) + 0.05)) or (
        result.confidence == max(prior_confidence, confidence) > 0.95
    )


def test_agreement_is_read_by_band_on_the_factors_own_scale():
    scale = Scale(min=0, max=10)  # low below 4, mid below 7
    assert agrees(scale, 1.0, 3.5) and agrees(scale, 3.5, 4.2)  # same band; across the edge within 1 point
    assert not agrees(scale, 2.0, 5.5) and not agrees(Scale(), 20, 55)
    lowered = synthesise(prior(2.0, 0.8, 1), reading(5.5, 0.5), scale)
    assert lowered.confidence == pytest.approx(merge_confidence(0.8, 0.5))  # disagreement may lower it


def test_a_disagreeing_reading_is_merged_and_may_lower_confidence():
    result = synthesise(prior(20, 0.83, 1), reading(75, 0.6))
    assert result.confidence == pytest.approx(merge_confidence(0.83, 0.6)) and result.confidence < 0.83


def test_more_evidence_resists_a_single_contrary_reading():
    one, three = synthesise(prior(20, 0.7, 1), reading(80)), synthesise(prior(20, 0.7, 3), reading(80))
    assert three.value < one.value
    assert synthesise(prior(20, 0.7, 9), reading(80)).value == three.value  # capped at three observations


@pytest.mark.parametrize(
    ("current", "confidence", "proposed", "bounded", "capped"),
    [
        (20, 0.8, 90, 45, True),  # a confident value moves at most 25 points, at capped confidence
        (80, 0.8, 10, 55, True),
        (20, 0.8, 40, 40, False),  # within the bound: untouched
        (20, 0.5, 90, 90, False),  # not confidently known: untouched
        (None, 0.0, 90, 90, False),
    ],
)
def test_the_move_bound(catalog, current, confidence, proposed, bounded, capped):
    state = FactorState(
        factor_id="data_quality",
        category="data_readiness",
        current_value=current,
        current_confidence=confidence,
        inference_status=InferenceStatus.unconfirmed,
    )
    screened = InferredUpdate(factor_id="data_quality", value=proposed, confidence=0.9, rationale="said so")
    notes: list[str] = []
    result = bound_move(screened, catalog, state, notes)
    assert result.value == bounded
    assert (result.confidence == MOVED_CONFIDENCE_CAP) is capped and bool(notes) is capped
