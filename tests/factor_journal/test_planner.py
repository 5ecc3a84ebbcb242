"""The pure change planner: what a change writes, given what it read (no Firestore)."""

from __future__ import annotations

from datetime import timedelta

from test_folding import T0, blank, deliver, readings

from factor_journal.graph import graph_for
from factor_journal.models import FactorState
from factor_journal.planner import ChangeInputs, plan_change


def test_a_factor_given_with_its_journal_is_folded_again_and_written_even_without_readings(catalog):
    """A damaged factor document is planned from a blank state plus its journal: the plan writes the state the
    journal folds to, and a new reading on top lands where it would have on the undamaged state."""
    graph = graph_for(catalog)
    said = readings()
    reference, journal = deliver(catalog, said[:4])
    damaged = blank()  # what the change knows of the factor once its document does not read
    inputs = ChangeInputs(
        user_id="u", summary=None, states={"data_quality": damaged}, journals={"data_quality": list(journal.values())},
        last_active=None, now=T0 + timedelta(hours=1),
    )  # fmt: skip

    repair = plan_change(catalog, graph, inputs)
    assert set(repair.states) >= {"data_quality"} and repair.entries == [] and repair.rewritten == []
    assert repair.states["data_quality"].model_dump(exclude={"last_updated"}) == reference.model_dump(
        exclude={"last_updated"}
    )
    assert repair.summary.factors["data_quality"].current_value == reference.current_value

    expected, _ = deliver(catalog, said[:5])
    with_reading = plan_change(catalog, graph, inputs, readings=[said[4]])
    assert [e.entry_id for e in with_reading.entries][:1] == ["e4"]
    assert with_reading.states["data_quality"].model_dump(exclude={"last_updated"}) == expected.model_dump(
        exclude={"last_updated"}
    )


def test_an_untouched_factor_without_a_journal_is_not_written(catalog):
    graph = graph_for(catalog)
    state, _ = deliver(catalog, readings()[:2])
    inputs = ChangeInputs(
        user_id="u", summary=None, states={"data_quality": state, "ai_strategy": FactorState(
            factor_id="ai_strategy", category=catalog.factor("ai_strategy").category)},
        journals={}, last_active=None, now=T0,
    )  # fmt: skip
    plan = plan_change(catalog, graph, inputs, readings=[])
    assert plan.states == {} and plan.entries == []
