"""Folding observations into a factor's state: the result depends on what was said and when, never on
the order the readings arrived in (pure; the emulator version is test_order_independence.py)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from factor_journal import transitions
from factor_journal.folding import Reading, arrives_late, fold_reading, refold
from factor_journal.models import FactorState, InferredUpdate

T0 = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)
SCRIPT = [(20, 0.8), (85, 0.7), (40, 0.5), (60, 0.6), (35, 0.9), (70, 0.4)]


def readings(weigh: bool = True) -> list[Reading]:
    return [
        Reading(
            InferredUpdate(
                factor_id="data_quality",
                value=v,
                confidence=c,
                rationale=f"r{i}",
                observed_at=T0 + timedelta(minutes=i),
            ),
            f"e{i}",
            weigh=weigh,
        )
        for i, (v, c) in enumerate(SCRIPT)
    ]


def blank() -> FactorState:
    return FactorState(factor_id="data_quality", category="data_readiness")


def deliver(catalog, order: list[Reading]) -> tuple[FactorState, dict]:
    """Process readings in delivery order the way the store does: one fold step when a reading is newer
    than everything folded, a re-fold of the journal when it arrives late."""
    state, journal = blank(), {}
    for reading in order:
        if arrives_late(state, *reading.key):
            state, changed = refold(catalog, state, list(journal.values()), [reading], "u", T0, [])
            journal.update({e.entry_id: e for e in changed})
        else:
            change = fold_reading(catalog, state, reading, "u", T0, [])
            state, journal[change.entry.entry_id] = change.state, change.entry
    return state, journal


@pytest.mark.parametrize("weigh", [True, False])
def test_any_delivery_order_gives_the_in_order_state_and_timeline(catalog, weigh):
    in_order = readings(weigh)
    reference, reference_journal = deliver(catalog, in_order)
    shuffler = random.Random(7)
    for _ in range(25):
        order = shuffler.sample(in_order, len(in_order))
        state, journal = deliver(catalog, order)
        assert state.model_dump(exclude={"last_updated"}) == reference.model_dump(exclude={"last_updated"})
        for entry_id, entry in reference_journal.items():
            assert journal[entry_id].model_dump() == entry.model_dump(), entry_id


def test_a_persons_decision_stands_and_later_readings_conflict(catalog):
    state, journal = deliver(catalog, readings()[:2])
    corrected = transitions.correct(state, "u", "fix", T0 + timedelta(minutes=3), 30, "we checked", None)
    journal["fix"] = corrected.entry
    # a reading said before the correction arrives late: folded before it, the person's value stands
    early = readings()[2]
    folded, _ = refold(catalog, corrected.state, list(journal.values()), [early], "u", T0, [])
    assert folded.current_value == 30 and folded.open_conflict is None
    # one said after it, far from it, is held as a conflict
    late = readings()[5]
    after = fold_reading(catalog, folded, late, "u", T0, [])
    assert after.state.current_value == 30 and after.state.open_conflict is not None
