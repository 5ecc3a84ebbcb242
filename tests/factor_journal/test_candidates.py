"""Which factors a turn may speak to: bounded, never composite, read from the turn and its question."""

from __future__ import annotations

import pytest

from factor_journal.candidates import MAX_CANDIDATES, select_candidates
from factor_journal.graph import graph_for
from factor_journal.models import FactorState, InferenceStatus


@pytest.mark.parametrize(
    ("question", "answer", "expected"),
    [
        ("", "We have no data catalog and nobody owns the data", "data_governance"),
        ("", "There are sensors on every press streaming telemetry", "sensor_data"),
        ("Do you have anyone who can build machine learning models?", "Not yet, no", "ml_expertise"),
    ],
)
def test_the_turn_and_its_question_pick_the_candidates(catalog, question, answer, expected):
    chosen = select_candidates(catalog, graph_for(catalog), answer, question, {})
    ids = [c.factor_id for c in chosen]
    assert expected in ids
    assert len(ids) <= MAX_CANDIDATES and len(set(ids)) == len(ids)
    assert not any(catalog.factor(fid).is_composite for fid in ids)


def test_candidates_carry_the_current_state_for_the_prompt(catalog):
    state = FactorState(
        factor_id="data_governance",
        category="data_readiness",
        current_value=30,
        current_confidence=0.6,
        inference_status=InferenceStatus.unconfirmed,
    )
    chosen = select_candidates(catalog, graph_for(catalog), "no data catalog", "", {"data_governance": state})
    view = next(c for c in chosen if c.factor_id == "data_governance")
    assert (view.current_value, view.current_confidence, view.inference_status) == (30, 0.6, "unconfirmed")
    assert view.rubric_low and view.rubric_high
