"""The torn margin's trade-off is a pure function of the readings the reader made; the rule picks the margin."""

from __future__ import annotations

from factor_journal.extraction.semantic import Reading
from factor_journal_tools.evaluate import TurnRecord, render_report, score
from factor_journal_tools.torn_margin import choose_margin, torn_curve


def read(fid: str, detected: float, band: str, p: float, second: str, p2: float) -> Reading:
    values = {"low": 20.0, "mid": 50.0, "high": 80.0}
    return Reading(fid, detected, band, p, values[band], second, p2, values[second])


def record(expected: dict[str, float], readings: list[Reading], screened: str | None = None) -> TurnRecord:
    return TurnRecord("t", "factor", (), expected, status="processed", screened=screened, read=readings)


RECORDS = [
    # a misreading (high, expected low) whose bands are 0.04 apart: asked at 0.05, offering the right band
    record({"ml_expertise": 20}, [read("ml_expertise", 1.0, "high", 0.40, "low", 0.36)]),
    # a right reading whose bands are 0.09 apart: asked about needlessly from 0.1
    record({"data_quality": 20}, [read("data_quality", 1.0, "low", 0.50, "mid", 0.41)]),
    # a misreading (wrong factor) 0.12 above the right factor, which it did not store: asked from 0.125
    record(
        {"data_governance": 20},
        [read("data_quality", 0.8, "low", 0.5, "mid", 0.1), read("data_governance", 0.5, "low", 0.56, "mid", 0.2)],
    ),
    # three sure right readings, and one set aside by the screen (not counted)
    record({"cloud_adoption": 80}, [read("cloud_adoption", 1.0, "high", 0.9, "mid", 0.05)]),
    record({"it_integration": 80}, [read("it_integration", 1.0, "high", 0.9, "mid", 0.05)]),
    record({"erp_maturity": 80}, [read("erp_maturity", 1.0, "high", 0.9, "mid", 0.05)]),
    record({"erp_maturity": 80}, [read("erp_maturity", 1.0, "low", 0.4, "mid", 0.39)], screened="other_organisation"),
]


def test_each_margin_counts_the_misreadings_and_the_right_readings_it_would_ask_about():
    curve = {row["margin"]: row for row in torn_curve(RECORDS, threshold=0.3, margins=(0.025, 0.05, 0.1, 0.125))}
    assert (curve[0.025]["questions"], curve[0.025]["stored"], curve[0.025]["right"]) == (0, 6, 4)
    assert (curve[0.05]["misreadings_asked"], curve[0.05]["right_asked"]) == (1, 0)
    assert curve[0.05]["offering_right"] == 1  # the question offers low, the expected band
    assert (curve[0.1]["misreadings_asked"], curve[0.1]["right_asked"]) == (1, 1)
    assert (curve[0.125]["misreadings_asked"], curve[0.125]["offering_right"], curve[0.125]["right_asked"]) == (2, 2, 1)


def test_the_rule_picks_the_largest_margin_asking_as_many_misreadings_as_right_ones_and_few_right_ones():
    curve = torn_curve(RECORDS, threshold=0.3, margins=(0.025, 0.05, 0.1, 0.125))
    assert choose_margin(curve, max_needless=0.3)["margin"] == 0.125  # 1 of 4 right readings asked
    assert choose_margin(curve, max_needless=0.1)["margin"] == 0.05  # none asked
    costly = [{**row, "right_asked": row["misreadings_asked"] + 1} for row in curve]
    assert choose_margin(costly)["margin"] == 0.0  # never more needed than needless: never torn
    assert choose_margin([]) is None


def test_the_figures_and_the_report_carry_the_curve_and_the_margin_chosen():
    figures = score(RECORDS)
    assert figures["torn_curve"] and figures["torn_choice"]["margin"] >= 0
    report = render_report({"extractors": {"semantic": {"splits": {"validation": figures}}}})
    assert "## When the reader is torn · semantic · validation" in report
    assert "| margin | questions | misreadings asked |" in report
    assert not score([TurnRecord("t", "factor", (), {"x": 1})])["torn_curve"]  # another extractor: no curve
