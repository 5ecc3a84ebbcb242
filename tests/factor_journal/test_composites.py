"""A composite derived along its components' timelines, and when a change must derive it again (pure)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from factor_journal.composites import composites_to_rederive, derive_composites, rederive_composite
from factor_journal.graph import graph_for
from factor_journal.models import EntryKind, FactorState, InferenceStatus, JournalEntry, Source

COMPOSITE = "ai_readiness_score"  # data_quality 0.25, ml_expertise 0.2, ... of weight 1
AT = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


def said(factor_id: str, value: float, minutes: int, confidence: float = 0.8) -> JournalEntry:
    """A component's entry on its timeline: the state ``value`` at ``confidence`` from AT + ``minutes``."""
    return JournalEntry(
        entry_id=f"{factor_id}-{minutes}",
        user_id="u",
        factor_id=factor_id,
        kind=EntryKind.inferred,
        source=Source.llm,
        previous_value=None,
        new_value=value,
        change_rationale="said so",
        confidence=confidence,
        observed_at=AT + timedelta(minutes=minutes),
        recorded_at=AT + timedelta(days=1),
        applied=True,
        effective=True,
        value_after=value,
        confidence_after=confidence,
        status_after=InferenceStatus.unconfirmed,
    )


@pytest.fixture(scope="module")
def graph(catalog):
    return graph_for(catalog)


def in_observed_order(catalog, graph, entries: list[JournalEntry]) -> list[JournalEntry]:
    """The composite's entries when every entry arrives in observed order (one change each)."""
    states: dict[str, FactorState] = {}
    derived = []
    for entry in sorted(entries, key=lambda e: e.observed_at):
        blank = FactorState(factor_id=entry.factor_id, category=catalog.factor(entry.factor_id).category)
        states[entry.factor_id] = blank.model_copy(
            update={
                "current_value": entry.value_after,
                "current_confidence": entry.confidence_after,
                "observed_at": entry.observed_at,
                "last_entry_id": entry.entry_id,
            }
        )
        derived += [c.entry for c in derive_composites(catalog, graph, "u", states, {entry.factor_id}, AT)]
    return derived


def test_derived_again_it_is_what_observed_order_gives_and_stale_entries_go(catalog, graph):
    timeline = [said("data_quality", 20, 0), said("ml_expertise", 60, 10), said("data_quality", 80, 20)]
    expected = in_observed_order(catalog, graph, timeline)
    # what arrival in another order left behind: ml expertise first, then data quality's two readings
    stale = in_observed_order(catalog, graph, [e.model_copy(update={"observed_at": AT}) for e in timeline[1:2]])
    by_factor = {"data_quality": [timeline[0], timeline[2]], "ml_expertise": [timeline[1]]}
    result = rederive_composite(catalog, graph, COMPOSITE, "u", by_factor, [expected[0], *stale], AT)

    assert [(e.entry_id, e.value_after, e.observed_at) for e in result.written] == [
        (e.entry_id, e.value_after, e.observed_at) for e in expected[1:]
    ]  # the first entry was already right, and is kept as it is
    assert [e.previous_value for e in expected] == [None, expected[0].new_value, expected[1].new_value]
    assert result.removed == [stale[0].entry_id]
    assert (result.state.current_value, result.state.last_entry_id) == (expected[-1].value_after, expected[-1].entry_id)


def test_a_moment_that_moves_two_components_is_one_entry(catalog, graph):
    both = [said("data_quality", 20, 0), said("ml_expertise", 60, 0)]
    result = rederive_composite(catalog, graph, COMPOSITE, "u", {e.factor_id: [e] for e in both}, [], AT)
    assert len(result.written) == 1 and result.written[0].inferred_from == ["data_quality", "ml_expertise"]
    assert "Data quality, Machine learning expertise changed" in result.written[0].change_rationale


def test_entries_off_the_timeline_are_not_derived_from(catalog, graph):
    held = said("data_quality", 95, 5).model_copy(update={"effective": False, "kind": EntryKind.conflict})
    timelines = {"data_quality": [said("data_quality", 20, 0), held]}
    result = rederive_composite(catalog, graph, COMPOSITE, "u", timelines, [], AT)
    assert [e.value_after for e in result.written] == [20.0]


def test_a_reading_is_late_for_a_composite_when_it_is_not_after_every_moment_derived(catalog, graph):
    composite = FactorState(factor_id=COMPOSITE, category="ai_capability", observed_at=AT + timedelta(minutes=10))
    states = {COMPOSITE: composite}
    assert composites_to_rederive(catalog, graph, states, [], [("data_quality", AT)]) == {COMPOSITE}
    assert composites_to_rederive(catalog, graph, states, [], [("data_quality", AT + timedelta(minutes=10))]) == {
        COMPOSITE
    }  # the same moment: derived again, so that moment is one entry whatever the order
    assert composites_to_rederive(catalog, graph, states, [], [("data_quality", AT + timedelta(minutes=11))]) == set()
    assert composites_to_rederive(catalog, graph, states, ["ml_expertise"], []) == {COMPOSITE}  # refolded component
    assert composites_to_rederive(catalog, graph, states, [], [("cloud_adoption", AT)]) == set()  # not a component


def test_a_retraction_moves_the_composite_when_it_is_made_not_when_the_rest_was_said(catalog, graph):
    states = {
        fid: FactorState(
            factor_id=fid,
            category=catalog.factor(fid).category,
            current_value=value,
            current_confidence=0.8,
            observed_at=AT + timedelta(minutes=minutes),
            last_entry_id=f"{fid}-{minutes}",
        )
        for fid, value, minutes in (("data_quality", 20.0, 0), ("ml_expertise", 60.0, 10))
    }
    derive_composites(catalog, graph, "u", states, {"data_quality", "ml_expertise"}, AT)
    retracted_at = AT + timedelta(hours=2)
    states["data_quality"] = states["data_quality"].model_copy(
        update={"current_value": None, "observed_at": retracted_at, "last_entry_id": "data_quality-retracted"}
    )
    [change] = derive_composites(catalog, graph, "u", states, {"data_quality"}, retracted_at)
    assert change.entry.observed_at == retracted_at and change.entry.value_after == 60.0


def test_a_composite_folded_again_from_its_journal_is_its_document(catalog, graph):
    """A damaged composite document is mended by folding its journal: the same state, evidence counted per
    component as derivation counts it."""
    from factor_journal.folding import refold

    timeline = [said("data_quality", 20, 0), said("ml_expertise", 60, 10), said("data_quality", 80, 20)]
    entries = in_observed_order(catalog, graph, timeline)
    blank = FactorState(factor_id=COMPOSITE, category="ai_capability")
    derived = rederive_composite(
        catalog,
        graph,
        COMPOSITE,
        "u",
        {"data_quality": [timeline[0], timeline[2]], "ml_expertise": [timeline[1]]},
        [],
        AT,
    )
    folded, _ = refold(catalog, blank, entries, [], "u", AT, [])
    assert folded.evidence_count == derived.state.evidence_count == 2
    assert (folded.current_value, folded.last_entry_id) == (derived.state.current_value, derived.state.last_entry_id)
