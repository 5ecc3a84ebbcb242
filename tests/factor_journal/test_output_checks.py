"""Screening of untrusted extractor output, table-driven (no Firestore)."""

from __future__ import annotations

import pytest

from factor_journal.output_checks import MAX_UPDATES_PER_TURN, check_output


def raw(factor_id="data_quality", value=40, confidence=0.7, rationale="said so", **extra) -> dict:
    return {"factor_id": factor_id, "value": value, "confidence": confidence, "rationale": rationale, **extra}


@pytest.mark.parametrize(
    ("output", "reason"),
    [
        (raw(factor_id="no_such"), "unknown factor"),
        (raw(factor_id="ai_readiness_score"), "derived factor"),
        (raw(value=140), "off the scale"),
        (raw(confidence=1.5), "outside 0-1"),
        (raw(rationale="  "), "rationale is required"),
        ({"factor_id": "data_quality", "value": "high"}, "malformed"),
        ("not a dict", "malformed"),
        (raw(extra_field=1), "malformed"),
    ],
)
def test_bad_readings_are_dropped_with_a_reason(catalog, output, reason):
    result = check_output([output, raw("sensor_data", 60)], catalog)
    assert [u.factor_id for u in result.accepted] == ["sensor_data"]
    assert len(result.rejected) == 1 and reason in result.rejected[0]


def test_only_the_factors_asked_about_and_at_most_the_per_turn_limit(catalog):
    factors = [f.id for f in catalog.assessable_factors][: MAX_UPDATES_PER_TURN + 3]
    result = check_output([raw(fid, confidence=0.5 + i / 100) for i, fid in enumerate(factors)], catalog)
    assert len(result.accepted) == MAX_UPDATES_PER_TURN
    assert min(u.confidence for u in result.accepted) > max(
        raw_u["confidence"] for raw_u in [raw(fid, confidence=0.5 + i / 100) for i, fid in enumerate(factors)][:3]
    )
    asked = check_output([raw("data_quality"), raw("sensor_data")], catalog, allowed={"sensor_data"})
    assert [u.factor_id for u in asked.accepted] == ["sensor_data"] and "not among" in asked.rejected[0]


def test_a_duplicate_keeps_the_more_confident_reading(catalog):
    result = check_output([raw(confidence=0.4, value=10), raw(confidence=0.8, value=30)], catalog)
    assert [(u.value, u.confidence) for u in result.accepted] == [(30, 0.8)]
