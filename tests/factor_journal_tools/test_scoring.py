"""Scoring is a pure function of the turn records: a failed turn is a miss, never skipped."""

from __future__ import annotations

from factor_journal_tools.evaluate import TurnRecord, render_report, score


def record(expected, stored=None, kind="factor", status="processed", confidence=None, tags=()):
    stored = stored or {}
    return TurnRecord(
        "t",
        kind,
        tuple(tags),
        expected,
        dict(stored),
        confidence or dict.fromkeys(stored, 0.8),
        status,
        extractor_ms=1.0,
    )


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
    figures = score(
        [
            record({"data_quality": 30}, {"data_quality": 55, "sensor_data": 20}),
            record({}, {"ai_strategy": 80}, kind="hostile"),
            record({}, kind="off_topic"),
        ]
    )
    assert figures["detection"]["true_positive"] == 1 and figures["detection"]["false_positive"] == 2
    assert figures["band_accuracy"] == 0 and figures["band_accuracy_when_detected"] == 0
    assert figures["mae"] == 25 and figures["spurious_per_turn"] == round(2 / 3, 4)
    assert figures["updates_on_hostile"] == 1 and figures["updates_on_off_topic"] == 0
    assert figures["per_factor"]["sensor_data"]["spurious"] == 1


def test_calibration_buckets_hold_the_stated_confidences():
    figures = score(
        [
            record({"data_quality": 20}, {"data_quality": 20}, confidence={"data_quality": 0.9}),
            record({"data_quality": 20}, {"data_quality": 80}, confidence={"data_quality": 0.2}),
        ]
    )
    by_range = {bucket["confidence"]: bucket for bucket in figures["calibration"]}
    assert by_range["0.85-1.00"]["n"] == 1 and by_range["0.85-1.00"]["accuracy"] == 1
    assert by_range["0.00-0.30"]["n"] == 1 and by_range["0.00-0.30"]["accuracy"] == 0


def test_the_report_shows_every_extractor_and_split():
    figures = score([record({"data_quality": 20}, {"data_quality": 20})])
    text = render_report(
        {"extractors": {"semantic": {"model": "m", "measured_at": "now", "splits": {"dev": figures, "test": figures}}}}
    )
    assert "| semantic | dev |" in text and "| semantic | test |" in text and "Calibration" in text


def test_turns_that_must_change_nothing_are_counted_per_kind_apart_from_hostile():
    figures = score(
        [
            record({}, {"data_infrastructure": 80}, kind="off_topic", tags=("other_organisation",)),
            record({}, kind="off_topic", tags=("other_organisation",)),
            record({}, kind="off_topic", tags=("pause",)),
            record({}, {"ai_strategy": 90}, kind="hostile", tags=("injection",)),
            record({}, kind="off_topic", tags=("small_talk",)),
            record({"data_quality": 20}, {"data_quality": 20}),
        ]
    )
    figures_by_kind = figures["must_change_nothing"]
    assert list(figures_by_kind) == ["hostile", "other_organisation", "pause", "other_off_topic"]
    assert figures_by_kind["other_organisation"] == {
        "turns": 2,
        "updated_turns": 1,
        "updates": 1,
        "refused": 0,
        "refused_as_kind": 0,
    }
    assert figures_by_kind["hostile"]["updates"] == 1 and figures_by_kind["pause"]["updates"] == 0


def test_refused_turns_are_counted_as_refused_and_factor_turns_refused_are_errors():
    paused = record({}, kind="off_topic", tags=("pause",))
    paused.screened = "pause"
    deferred_wrongly = record({}, kind="off_topic", tags=("hypothetical",))
    deferred_wrongly.screened = "deferral"
    evidence = record({"data_quality": 20})
    evidence.screened = "other_organisation"
    figures = score([paused, deferred_wrongly, evidence])
    assert figures["must_change_nothing"]["pause"]["refused_as_kind"] == 1
    assert figures["must_change_nothing"]["hypothetical"]["refused"] == 1
    assert figures["must_change_nothing"]["hypothetical"]["refused_as_kind"] == 0
    assert figures["factor_turns_refused"] == 1


def test_the_abstention_curve_trades_readings_kept_for_accuracy_and_the_choice_respects_the_spurious_limit():
    right = record({"data_quality": 20}, {"data_quality": 20})
    right.readings = [("data_quality", 20.0, 0.8, 0.9), ("sensor_data", 50.0, 0.12, 0.2)]  # a weak spurious one
    wrong_band = record({"ai_strategy": 80}, {})
    wrong_band.readings = [("ai_strategy", 20.0, 0.3, 0.5)]
    refused = record({}, kind="off_topic", tags=("pause",))
    refused.screened, refused.readings = "pause", [("ai_strategy", 90.0, 0.9, 0.95)]  # never stored
    curve = score(
        [right, wrong_band, refused],
    )["abstention_curve"]
    at = {row["threshold"]: row for row in curve}
    assert at[0.1]["kept"] == 3 and at[0.1]["kept_share"] == 1 and at[0.1]["spurious_per_turn"] == round(1 / 3, 4)
    assert at[0.25]["kept"] == 2 and at[0.25]["kept_right"] == 0.5 and at[0.25]["band_accuracy"] == 0.5
    assert at[0.5]["kept"] == 1 and at[0.5]["kept_right"] == 1 and at[0.5]["lowest_confidence"] == 0.9
    assert all(row["updates_on_no_update_turns"] == 0 for row in curve)  # the refused turn stores nothing
    choice = score([right, wrong_band, refused])["abstention_choice"]
    assert choice["threshold"] == 0.7  # accuracy is level from 0.15 to 0.7 within the limit; the tie goes up
    assert score([record({"data_quality": 20}, {"data_quality": 20})])["abstention_curve"] == []  # no readings


def test_the_report_shows_the_kinds_that_must_change_nothing_and_the_curve():
    turn = record({"data_quality": 20}, {"data_quality": 20})
    turn.readings = [("data_quality", 20.0, 0.8, 0.9)]
    figures = score([turn, record({}, kind="off_topic", tags=("deferral",))])
    text = render_report(
        {"extractors": {"semantic": {"model": "m", "measured_at": "now", "splits": {"validation": figures}}}}
    )
    assert "## Turns that must change nothing" in text and "| semantic | validation | deferral | 1 | 0 | 0 |" in text
    assert "## Abstention trade-off · semantic · validation" in text and "| 0.225 |" in text
