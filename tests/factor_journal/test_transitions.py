"""Pure transitions of one factor, table-driven (no Firestore)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from factor_journal import transitions
from factor_journal.models import EntryKind, FactorState, InferenceStatus, InferredUpdate, Source

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def state(value=None, confidence=0.0, status=InferenceStatus.unassessed, observed=None, **extra) -> FactorState:
    return FactorState(
        factor_id="quality",
        category="data",
        current_value=value,
        current_confidence=confidence,
        inference_status=status,
        observed_at=observed,
        **extra,
    )


def update(value: float, confidence: float = 0.7, observed=NOW) -> InferredUpdate:
    return InferredUpdate(
        factor_id="quality", value=value, confidence=confidence, rationale="said so", observed_at=observed
    )


@pytest.mark.parametrize(
    ("before", "reading", "value", "status", "kind", "applied", "conflict"),
    [
        (state(), 30, 30, InferenceStatus.unconfirmed, EntryKind.inferred, True, False),
        (
            state(40, 0.6, InferenceStatus.unconfirmed),
            70,
            70,
            InferenceStatus.unconfirmed,
            EntryKind.inferred,
            True,
            False,
        ),
        # user-backed: a close reading corroborates (journaled, not applied)
        (
            state(50, 0.95, InferenceStatus.user_provided),
            55,
            50,
            InferenceStatus.user_provided,
            EntryKind.inferred,
            False,
            False,
        ),
        # user-backed: a far reading is held as a conflict, never an overwrite
        (
            state(50, 0.95, InferenceStatus.confirmed),
            90,
            50,
            InferenceStatus.confirmed,
            EntryKind.conflict,
            False,
            True,
        ),
    ],
)
def test_infer(small_catalog, before, reading, value, status, kind, applied, conflict):
    change = transitions.infer(small_catalog.factor("quality"), before, update(reading), "u", "e1", NOW)
    assert change.state.current_value == value
    assert change.state.inference_status == status
    assert change.entry.kind == kind and change.entry.applied is applied
    assert (change.state.open_conflict is not None) is conflict
    assert change.state.evidence_count == before.evidence_count + 1


@pytest.mark.parametrize(
    ("step", "value", "confidence", "status", "kind"),
    [
        (
            lambda s: transitions.confirm(s, "u", "e", NOW, None),
            40,
            0.95,  # the person's word: as sure as a value they gave
            InferenceStatus.confirmed,
            EntryKind.confirmed,
        ),
        (
            lambda s: transitions.correct(s, "u", "e", NOW, 75, "we did", None),
            75,
            0.95,
            InferenceStatus.user_provided,
            EntryKind.corrected,
        ),
        (
            lambda s: transitions.retract(s, "u", "e", NOW, "wrong", Source.user),
            None,
            0.0,
            InferenceStatus.unassessed,
            EntryKind.retracted,
        ),
    ],
)
def test_a_persons_decisions(step, value, confidence, status, kind):
    before = state(40, 0.6, InferenceStatus.unconfirmed, NOW - timedelta(days=1), needs_recheck=True)
    change = step(before)
    assert (change.state.current_value, change.state.current_confidence) == (value, confidence)
    assert change.state.inference_status == status and change.entry.kind == kind
    assert not change.state.needs_recheck and change.state.open_conflict is None
    assert (change.state.folded_through, change.state.folded_through_id) == (NOW, "e")


def test_confirmation_is_capped_at_one():
    change = transitions.confirm(state(40, 0.95, InferenceStatus.unconfirmed), "u", "e", NOW, None)
    assert change.state.current_confidence == 1.0


@pytest.mark.parametrize("accept", [True, False])
def test_resolving_a_conflict(small_catalog, accept):
    held = transitions.infer(
        small_catalog.factor("quality"), state(50, 0.95, InferenceStatus.user_provided), update(90), "u", "c", NOW
    ).state
    resolved = transitions.resolve_conflict(held, "u", "r", NOW, accept, "checked")
    assert resolved.state.current_value == (90 if accept else 50)
    assert resolved.state.open_conflict is None


def test_a_composite_is_a_function_of_its_components(small_catalog):
    composite = next(f for f in small_catalog.factors if f.is_composite)
    components = list(composite.composite or {})
    states = {
        fid: state(60, 0.8, InferenceStatus.unconfirmed, NOW - timedelta(hours=i))
        for i, fid in enumerate(components[:2])
    }
    blank = FactorState(factor_id=composite.id, category=composite.category)
    change = transitions.derive(small_catalog, composite, blank, states, "u", "d", NOW, cause="Quality")
    assert change is not None and change.state.current_value == 60
    assert change.state.observed_at == NOW  # observed when its newest component was
    assert change.state.evidence_count == 2
    assert "Quality" in change.entry.change_rationale and components[0] not in change.entry.change_rationale
    assert transitions.derive(small_catalog, composite, change.state, states, "u", "d2", NOW, cause="x") is None


@pytest.mark.parametrize(
    ("current", "status", "seen", "value", "kind"),
    [
        (30, InferenceStatus.unconfirmed, 20, 30, EntryKind.confirmed),  # same band: the current value confirmed
        (55, InferenceStatus.unconfirmed, 20, 20, EntryKind.corrected),  # a later answer moved it: the reading stands
        (80, InferenceStatus.user_provided, 20, 20, EntryKind.corrected),  # they said otherwise before
        (None, InferenceStatus.unassessed, 20, 20, EntryKind.restored),  # withdrawn: brought back, not corrected
    ],
)
def test_confirming_a_reading_confirms_what_the_person_was_shown(small_catalog, current, status, seen, value, kind):
    before = state(current, 0.0 if current is None else 0.6, status, NOW - timedelta(days=1))
    change = transitions.confirm_reading(
        small_catalog.factor("quality"), before, "u", "e", NOW, seen, session_id="s", turn_id="t", excerpt="a mess"
    )
    assert change.state.current_value == value and change.entry.kind == kind
    assert change.state.current_confidence == 0.95 and change.entry.source == Source.user
    assert (change.entry.session_id, change.entry.turn_id, change.entry.conversation_excerpt) == ("s", "t", "a mess")


def test_bringing_back_a_withdrawn_reading_is_journaled_as_restored_never_as_a_correction(small_catalog):
    withdrawn = state(None, 0.0, InferenceStatus.unassessed, NOW - timedelta(days=1))
    change = transitions.confirm_reading(
        small_catalog.factor("quality"), withdrawn, "u", "e", NOW, 20, session_id="s", turn_id="t", excerpt="a mess"
    )
    assert change.state.inference_status == InferenceStatus.user_provided  # the person's own again
    assert (change.entry.kind, change.entry.previous_value, change.entry.new_value) == (EntryKind.restored, None, 20)
    assert "restored" in change.entry.change_rationale and "corrected" not in change.entry.change_rationale
    assert change.state.evidence_count == withdrawn.evidence_count + 1
