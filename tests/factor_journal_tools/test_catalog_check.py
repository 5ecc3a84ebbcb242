"""The catalog check: pairs of factors whose descriptions or same-band level texts share too many of their
weighted words fail and are named; the packaged catalog passes; the boundaries issue 35 names are declared
from both sides and reach the Gemini prompt."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from factor_journal.catalog.models import DEFAULT_CATALOG_PATH, parse_catalog
from factor_journal.extraction.prompts import reader_instruction
from factor_journal_tools.catalog_check import THRESHOLD, main, similar_pairs, too_similar

# The pairs a careful reader confused (issue 35, section 3).
CONFUSED = [
    ("ml_infrastructure", "compute_capacity"),
    ("ml_infrastructure", "mlops_maturity"),
    ("compute_capacity", "mlops_maturity"),
    ("model_monitoring", "model_risk_controls"),
    ("staff_capacity", "domain_expertise"),
    ("data_governance", "data_security"),
    ("it_integration", "automation_maturity"),
    ("data_accessibility", "vendor_governance"),
    ("analytics_maturity", "forecasting_practice"),
    ("ai_strategy", "use_case_clarity"),
]


def _edited(change: dict[str, dict[str, str]]) -> dict:
    """The packaged catalog's raw data with some factors' rubric or description texts replaced."""
    raw = yaml.safe_load(DEFAULT_CATALOG_PATH.read_text(encoding="utf-8"))
    for factor in raw["factors"]:
        for field, text in change.get(factor["id"], {}).items():
            if field == "description":
                factor["description"] = text
            else:
                factor["rubric"][field] = text
    return raw


def test_the_packaged_catalog_has_no_pair_at_the_threshold(catalog, capsys):
    assert too_similar(catalog) == [], "reword these texts apart (or merge the factors)"
    assert main([]) == 0
    assert f"0 pair(s) at or above {THRESHOLD}" in capsys.readouterr().out


def test_every_pair_is_scored_in_each_field_closest_first(catalog):
    pairs = similar_pairs(catalog)
    n = len(catalog.assessable_factors)
    assert len(pairs) == 4 * n * (n - 1) // 2
    assert [p.score for p in pairs] == sorted((p.score for p in pairs), reverse=True)
    assert all(0.0 <= p.score <= 1.0 for p in pairs)
    assert len(similar_pairs(catalog, top=5)) == 5


def test_two_mid_texts_in_the_same_words_fail_and_the_pair_is_printed(tmp_path: Path, capsys):
    raw = _edited(
        {  # the overlap the catalog had before issue 35: one "capacity for pilots" in two factors
            "compute_capacity": {"mid": "Some capacity can be found for pilots."},
            "staff_capacity": {"mid": "Time can be found for a focused pilot."},
        }
    )
    path = tmp_path / "factors.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    flagged = too_similar(parse_catalog(path.read_text(encoding="utf-8")))
    assert (flagged[0].field, {flagged[0].a, flagged[0].b}) == ("mid", {"compute_capacity", "staff_capacity"})
    assert all(p.field == "mid" and "compute_capacity" in (p.a, p.b) for p in flagged)  # nothing else moved
    assert main(["--catalog", str(path)]) == 1
    out = capsys.readouterr().out
    assert "too close (mid" in out and "compute_capacity" in out and "staff_capacity" in out
    assert "Time can be found for a focused pilot." in out


def test_a_description_shared_by_two_factors_fails():
    text = "Whether servers or cloud budget can be had for new workloads."
    raw = _edited({"compute_capacity": {"description": text}, "budget_commitment": {"description": text}})
    flagged = too_similar(parse_catalog(yaml.safe_dump(raw)))
    assert [(p.field, {p.a, p.b}, p.score) for p in flagged] == [
        ("description", {"compute_capacity", "budget_commitment"}, 1.0)
    ]


def test_only_texts_of_the_same_band_are_compared():
    text = "Nobody would notice if a model's predictions got worse."
    raw = _edited({"model_risk_controls": {"high": text}})  # model_monitoring's low text, as another factor's high
    assert too_similar(parse_catalog(yaml.safe_dump(raw))) == []
    raw = _edited({"model_risk_controls": {"low": text}})
    assert [(p.field, {p.a, p.b}) for p in too_similar(parse_catalog(yaml.safe_dump(raw)))] == [
        ("low", {"model_monitoring", "model_risk_controls"})
    ]


@pytest.mark.parametrize(("a", "b"), CONFUSED)
def test_each_confused_pair_has_a_boundary_from_both_sides(catalog, a, b):
    assert catalog.factor(a).boundaries.get(b) and catalog.factor(b).boundaries.get(a)


def test_the_gemini_prompt_shows_every_factors_boundaries(catalog):
    prompt = reader_instruction(catalog)
    for a, b in (("it_integration", "automation_maturity"), ("automation_maturity", "it_integration")):
        assert f"{catalog.factor(a).boundaries[b]} is {b}" in prompt
    assert prompt.count("\n  about: ") == len([f for f in catalog.assessable_factors if f.description])
