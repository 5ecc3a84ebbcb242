"""A second reading that vetoes what it does not confirm (``extraction.agreement``): pure decisions on untrusted
model output."""

from __future__ import annotations

from factor_journal.extraction.agreement import ModelReading, agree
from factor_journal.extraction.base import TurnKind


def update(factor_id: str, value: float, confidence: float = 0.8, rationale: str = "said so") -> dict:
    return {"factor_id": factor_id, "value": value, "confidence": confidence, "rationale": rationale, "quote": "q"}


def evidence(*updates: object) -> ModelReading:
    return ModelReading(TurnKind.evidence, list(updates))


def test_what_both_readings_name_is_stored_as_the_first_reading_gave_it():
    """The second reading confirms a factor by naming it, in any band and order: the first reading's entry is stored
    unchanged, in the first reading's order."""
    quality, governance = update("data_quality", 20, 0.8, "first"), update("data_governance", 50, 0.6)
    second = evidence(update("data_governance", 80, 0.7), update("data_quality", 30, 0.6, "second"))
    agreed = agree(evidence(quality, governance), second)
    assert agreed.updates == [quality, governance]
    assert agreed.set_aside_as is None and agreed.rejected == []


def test_a_factor_the_second_reading_does_not_name_is_vetoed():
    agreed = agree(
        evidence(update("data_quality", 20), update("ml_expertise", 80)),
        evidence(update("data_quality", 25), update("compute_capacity", 50)),
    )
    assert [u["factor_id"] for u in agreed.updates] == ["data_quality"]  # the second's own extra factor adds nothing
    assert agreed.rejected == ["'ml_expertise': named by the first reading only: not stored"]


def test_a_turn_either_reading_sets_aside_stores_nothing():
    reading = update("data_quality", 20)
    aside = agree(evidence(reading), ModelReading(TurnKind.hypothetical, []))
    assert aside.updates == [] and aside.set_aside_as == "hypothetical"
    assert aside.rejected == ["the second reading says the turn is hypothetical: nothing stored"]
    both = agree(ModelReading(TurnKind.deferral, []), ModelReading(TurnKind.pause, []))
    assert both.set_aside_as == "deferral" and both.rejected == []  # the first reading's reason names it
    first_only = agree(ModelReading(TurnKind.other_organisation, [reading]), evidence(reading))
    assert first_only.set_aside_as == "other_organisation" and first_only.updates == []


def test_two_readings_of_nothing_agree_on_nothing():
    agreed = agree(evidence(), evidence(update("data_quality", 20)))
    assert (agreed.updates, agreed.set_aside_as, agreed.rejected) == ([], None, [])


def test_entries_that_name_no_factor_pass_on_for_the_pipeline_to_reject():
    """Malformed entries are the pipeline's to reject with its own reasons; an unknown factor the second reading
    names too passes on the same way (the pipeline rejects it); a repeated factor is said once."""
    odd = [{"value": 50}, {"factor_id": 7, "value": 50}, "text"]
    unknown = {"factor_id": "not_a_factor", "value": 50}
    first = evidence(*odd, unknown, update("ml_expertise", 20), update("ml_expertise", 90))
    agreed = agree(first, evidence(unknown, "noise", {"factor_id": None}))
    assert agreed.updates == [*odd, unknown]
    assert agreed.rejected == ["'ml_expertise': named by the first reading only: not stored"]
