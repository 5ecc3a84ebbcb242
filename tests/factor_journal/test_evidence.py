"""Evidence weighing and confidence merging, table-driven (no Firestore)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from factor_journal.evidence import merge_confidence, synthesise
from factor_journal.models import FactorState, InferenceStatus, InferredUpdate

NOW = datetime(2026, 11, 20, tzinfo=UTC)


@pytest.mark.parametrize(
    ("existing", "new", "merged"),
    [(0.9, 0.5, 0.78), (0.1, 0.9, 0.66), (0.5, 0.7, 0.6), (0.8, 0.8, 0.8), (0.2, 0.2, 0.2)],
)
def test_merge_confidence_follows_the_sdm_rule(existing, new, merged):
    assert merge_confidence(existing, new) == pytest.approx(merged)


def prior(value, confidence, count, status=InferenceStatus.unconfirmed) -> FactorState:
    return FactorState(factor_id="q", category="c", current_value=value, current_confidence=confidence,
                       inference_status=status, evidence_count=count, observed_at=NOW - timedelta(hours=1))  # fmt: skip


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
        plain = merge_confidence(state.current_confidence, 0.7)
        assert result.confidence == pytest.approx(plain + (0.05 if corroborated else 0))


def test_more_evidence_resists_a_single_contrary_reading():
    one, three = synthesise(prior(20, 0.7, 1), reading(80)), synthesise(prior(20, 0.7, 3), reading(80))
    assert three.value < one.value
    assert synthesise(prior(20, 0.7, 9), reading(80)).value == three.value  # capped at three observations
