"""The packaged catalog and the catalog validator."""

from __future__ import annotations

import pytest

from factor_journal.catalog import CatalogError, load_catalog
from factor_journal.catalog.models import parse_catalog
from factor_journal.graph import graph_for

REQUIRED_FACTORS = {
    "data_quality",
    "data_governance",
    "data_infrastructure",
    "sensor_data",
    "ml_expertise",
    "ml_infrastructure",
}
REQUIRED_ARCHETYPES = {
    "basic_forecasting_annual",
    "simple_automation",
    "complex_forecasting_seasonal",
    "ml_automation",
    "predictive_maintenance",
}


def test_packaged_catalog_has_what_the_design_names(catalog):
    ids = {factor.id for factor in catalog.factors}
    assert len(catalog.assessable_factors) >= 40
    assert len(catalog.categories) >= 4
    assert ids >= REQUIRED_FACTORS
    assert {"data_readiness", "ai_capability"} <= {c.id for c in catalog.categories}
    assert {a.id for a in catalog.archetypes} >= REQUIRED_ARCHETYPES
    composite = catalog.factor("ai_readiness_score")
    assert composite.is_composite and set(composite.composite) >= {"data_quality", "ml_expertise"}
    assert [t.id for t in catalog.decision_tiers] == ["exploratory", "low_risk", "medium_risk", "high_risk"]
    assert catalog.version


def test_every_assessable_factor_can_be_asked_about_and_recognised(catalog):
    for factor in catalog.assessable_factors:
        assert factor.elicitation_questions, factor.id
        assert factor.cues, factor.id
        assert all((factor.rubric.low, factor.rubric.mid, factor.rubric.high))


def test_levels_map_onto_each_scale(catalog):
    from factor_journal.catalog import Level

    assert catalog.level_value("data_quality", Level.low) < catalog.level_value("data_quality", Level.high)


def test_bands_are_low_below_40_mid_below_70_high_from_70_on_every_scale(catalog):
    from factor_journal.catalog import Level

    assert [catalog.band("data_quality", v) for v in (0, 39.99, 40, 69.99, 70, 100)] == [
        Level.low,
        Level.low,
        Level.mid,
        Level.mid,
        Level.high,
        Level.high,
    ]
    for factor in catalog.assessable_factors:  # each rubric level's own value sits in its band
        assert all(catalog.band(factor.id, catalog.level_value(factor.id, level)) == level for level in Level)


def test_graph_answers_dependency_questions(catalog):
    graph = graph_for(catalog)
    assert "data_governance" in graph.depends_on("data_quality")
    assert "data_quality" in graph.dependents("data_governance")
    assert "predictive_maintenance" in [a for a, _ in graph.archetypes_needing("sensor_data")]
    assert "ai_readiness_score" in graph.composites_of("data_quality")


def test_missing_catalog_file_is_a_clear_error(tmp_path):
    with pytest.raises(CatalogError, match="cannot read catalog"):
        load_catalog(tmp_path / "absent.yaml")


BASE = """
version: "x"
categories: [{id: data, name: Data}]
decision_tiers:
  - {id: exploratory, name: E, budget: none, min_completeness: 0, min_avg_confidence: 0}
factors:
  - {id: a, name: A, category: data, rubric: {low: l, mid: m, high: h}, elicitation_questions: [q], depends_on: [b]}
  - {id: b, name: B, category: data, rubric: {low: l, mid: m, high: h}, elicitation_questions: [q]}
"""


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("depends_on: [b]", "depends_on: [zzz]"), "depends on unknown factor 'zzz'"),
        (
            (
                "category: data, rubric: {low: l, mid: m, high: h}, elicitation_questions: [q]}",
                "category: data, rubric: {low: l, mid: m, high: h}, elicitation_questions: [q], depends_on: [a]}",
            ),
            "cycle",
        ),
        (("category: data, rubric", "category: other, rubric"), "unknown category"),
        (
            (
                'version: "x"',
                'version: "x"\narchetypes: [{id: p, name: P, '
                "prerequisites: [{factor: a, min_value: 300, min_confidence: 0.5}]}]",
            ),
            "off the scale",
        ),
        (
            (
                "rubric: {low: l, mid: m, high: h}, elicitation_questions: [q], depends_on",
                "rubric: {low: l}, elicitation_questions: [q], depends_on",
            ),
            "rubric.mid",
        ),
        (("depends_on: [b]}", "depends_on: [b], boundaries: {zzz: what zzz covers}}"), "unknown factor 'zzz'"),
        (("depends_on: [b]}", "depends_on: [b], boundaries: {b: what b covers}}"), "'b' has none with it"),
    ],
)
def test_inconsistent_catalog_is_rejected_with_the_reason(change, message):
    parse_catalog(BASE)  # the base is valid
    with pytest.raises(CatalogError, match=message):
        parse_catalog(BASE.replace(*change, 1))


def test_catalog_that_is_not_yaml_is_rejected():
    with pytest.raises(CatalogError, match="not valid YAML"):
        parse_catalog("factors: [unclosed")


def test_the_factors_and_capabilities_a_text_names_are_found_in_its_own_spelling():
    catalog = load_catalog()
    assert catalog.factors_named_in("What do you mean by machine-learning expertise?") == ["ml_expertise"]
    assert catalog.factors_named_in("DATA_QUALITY, and what is a data catalog?") == ["data_quality", "data_governance"]
    assert catalog.factors_named_in("Why do you ask?") == []
    assert catalog.factors_named_in("our metadata quality") == []  # whole words only
    assert catalog.archetypes_named_in("Why can't we do predictive maintenance?") == ["predictive_maintenance"]
