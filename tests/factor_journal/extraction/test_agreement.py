"""Two readings that must agree (``extraction.agreement``): pure decisions on untrusted model output."""

from __future__ import annotations

from factor_journal.extraction.agreement import ModelReading, agree
from factor_journal.extraction.base import TurnKind


def update(factor_id: str, value: float, confidence: float = 0.8, rationale: str = "said so") -> dict:
    return {"factor_id": factor_id, "value": value, "confidence": confidence, "rationale": rationale, "quote": "q"}


def evidence(*updates: dict) -> ModelReading:
    return ModelReading(TurnKind.evidence, list(updates))


def test_a_factor_both_readings_put_in_one_band_is_stored_at_their_mean(catalog):
    first = evidence(update("data_quality", 20, 0.8, "first"), update("data_governance", 50, 0.6))
    second = evidence(update("data_governance", 60, 0.7), update("data_quality", 30, 0.6, "second"))
    agreed = agree(first, second, catalog)
    assert [u["factor_id"] for u in agreed.updates] == ["data_quality", "data_governance"]  # the first's order
    quality, governance = agreed.updates
    assert (quality["value"], quality["confidence"], quality["rationale"]) == (25, 0.7, "first")
    assert (governance["value"], governance["confidence"]) == (55, 0.65)
    assert agreed.torn == [] and agreed.set_aside_as is None and agreed.rejected == []


def test_readings_that_differ_on_a_band_ask_instead_of_storing(catalog):
    first, second = update("data_quality", 35), update("data_quality", 50)
    agreed = agree(evidence(first), evidence(second), catalog)
    assert agreed.updates == [] and agreed.torn == [[first, second]]  # the first reading's option first
    assert "differ on its band (low 35, mid 50): asked instead" in agreed.rejected[0]


def test_a_factor_only_one_reading_names_is_not_stored(catalog):
    agreed = agree(
        evidence(update("data_quality", 20), update("ml_expertise", 80)),
        evidence(update("data_quality", 25), update("compute_capacity", 50)),
        catalog,
    )
    assert [u["factor_id"] for u in agreed.updates] == ["data_quality"]
    assert agreed.rejected == [
        "'ml_expertise': named by one reading only: not stored",
        "'compute_capacity': named by one reading only: not stored",
    ]


def test_a_turn_either_reading_sets_aside_stores_nothing(catalog):
    reading = update("data_quality", 20)
    aside = agree(evidence(reading), ModelReading(TurnKind.hypothetical, []), catalog)
    assert aside.updates == [] and aside.torn == [] and aside.set_aside_as == "hypothetical"
    assert aside.rejected == ["the second reading says the turn is hypothetical: nothing stored"]
    both = agree(ModelReading(TurnKind.deferral, []), ModelReading(TurnKind.pause, []), catalog)
    assert both.set_aside_as == "deferral" and both.rejected == []  # the first reading's reason names it
    first_only = agree(ModelReading(TurnKind.other_organisation, [reading]), evidence(reading), catalog)
    assert first_only.set_aside_as == "other_organisation" and first_only.updates == []


def test_two_readings_of_nothing_agree_on_nothing(catalog):
    agreed = agree(evidence(), evidence(), catalog)
    assert (agreed.updates, agreed.torn, agreed.set_aside_as, agreed.rejected) == ([], [], None, [])


def test_entries_that_do_not_read_pass_on_for_the_pipeline_and_a_repeat_is_the_first(catalog):
    """Malformed entries and unknown factors are the pipeline's to reject with its own reasons; of two entries for
    one factor the first speaks for it, as the pipeline keeps one reading per factor."""
    odd = [{"factor_id": "not_a_factor", "value": 50}, {"factor_id": "data_quality", "value": "high"}, "text"]
    first = evidence(*odd, update("data_quality", 20), update("data_quality", 90))
    agreed = agree(first, evidence(update("data_quality", 30)), catalog)
    assert agreed.updates[:3] == odd
    assert [(u["factor_id"], u["value"]) for u in agreed.updates[3:]] == [("data_quality", 25)]
    assert agreed.torn == []


def test_a_confidence_that_is_not_a_number_is_left_for_the_pipeline(catalog):
    agreed = agree(
        evidence({"factor_id": "data_quality", "value": 20, "confidence": "very"}),
        evidence(update("data_quality", 30)),
        catalog,
    )
    assert agreed.updates[0]["confidence"] == "very" and agreed.updates[0]["value"] == 25
