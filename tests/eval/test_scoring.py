"""Scoring is a pure function of the turn records: a failed turn is a miss, never skipped."""

from __future__ import annotations

from factor_journal.extraction.evaluate import TurnRecord, render_report, score


def record(expected, stored=None, kind="factor", status="processed", confidence=None, tags=()):
    stored = stored or {}
    return TurnRecord("t", kind, tuple(tags), expected, dict(stored),
                      confidence or dict.fromkeys(stored, 0.8), status, extractor_ms=1.0)  # fmt: skip


def test_a_failed_turn_counts_as_a_miss_of_every_expected_factor():
    figures = score(
        [
            record({"data_quality": 20, "data_governance": 50}, status="failed"),
            record({"data_quality": 80}, {"data_quality": 75}),
        ]
    )
    assert figures["turns"] == 2 and figures["failed_turns"] == 1
    assert figures["detection"]["false_negative"] == 2 and figures["detection"]["recall"] == round(1 / 3, 4)
    assert figures["band_accuracy"] == round(1 / 3, 4)
    assert figures["confusion"]["low"]["none"] == 1 and figures["confusion"]["high"]["high"] == 1


def test_bands_spurious_updates_and_hostile_turns_are_counted():
    figures = score([
        record({"data_quality": 30}, {"data_quality": 55, "sensor_data": 20}),
        record({}, {"ai_strategy": 80}, kind="hostile"),
        record({}, kind="off_topic"),
    ])  # fmt: skip
    assert figures["detection"]["true_positive"] == 1 and figures["detection"]["false_positive"] == 2
    assert figures["band_accuracy"] == 0 and figures["band_accuracy_when_detected"] == 0
    assert figures["mae"] == 25 and figures["spurious_per_turn"] == round(2 / 3, 4)
    assert figures["updates_on_hostile"] == 1 and figures["updates_on_off_topic"] == 0
    assert figures["per_factor"]["sensor_data"]["spurious"] == 1


def test_calibration_buckets_hold_the_stated_confidences():
    figures = score([
        record({"data_quality": 20}, {"data_quality": 20}, confidence={"data_quality": 0.9}),
        record({"data_quality": 20}, {"data_quality": 80}, confidence={"data_quality": 0.2}),
    ])  # fmt: skip
    by_range = {bucket["confidence"]: bucket for bucket in figures["calibration"]}
    assert by_range["0.85-1.00"]["n"] == 1 and by_range["0.85-1.00"]["accuracy"] == 1
    assert by_range["0.00-0.30"]["n"] == 1 and by_range["0.00-0.30"]["accuracy"] == 0


def test_the_report_shows_every_extractor_and_split():
    figures = score([record({"data_quality": 20}, {"data_quality": 20})])
    text = render_report(
        {"extractors": {"semantic": {"model": "m", "measured_at": "now", "splits": {"dev": figures, "test": figures}}}}
    )
    assert "| semantic | dev |" in text and "| semantic | test |" in text and "Calibration" in text
