"""Pure state transitions of one factor: each returns the new state and its journal entry.

No I/O happens here; the store reads the current state inside a transaction,
calls one of these, and writes what comes back.  The rules they promise:

* A value the user confirmed or provided is never silently replaced by an
  inference: a disagreeing inference becomes a held *conflict* for the user.
* The current value is the latest *observed* one: an observation older than
  the current value is journaled (and kept on the as-of timeline) but does not
  overwrite it.
* Any change by the user clears open conflicts and re-check flags.
* A person's word is their own evidence: a confirmation counts as much as a value they give
  (``USER_PROVIDED_CONFIDENCE`` at least), and its journal entry carries where it was said (session,
  turn and the words confirmed) like any other evidence.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from factor_journal.catalog import Catalog, Factor
from factor_journal.evidence import agrees
from factor_journal.models import (
    USER_BACKED,
    Conflict,
    EntryKind,
    FactorState,
    InferenceStatus,
    InferredUpdate,
    JournalEntry,
    Source,
)

CONFIRMATION_BOOST = 0.1
USER_PROVIDED_CONFIDENCE = 0.95
CONFLICT_TOLERANCE = 0.10  # of the factor's scale: closer inferences corroborate, farther ones conflict
READING_CONFIRMED = "User confirmed what was understood from their answer"
READING_RESTORED = "User restored what was understood from their answer, after it was withdrawn"


@dataclass(frozen=True)
class Transition:
    state: FactorState
    entry: JournalEntry


def _entry(
    state: FactorState,
    user_id: str,
    entry_id: str,
    now: datetime,
    **fields: Any,
) -> JournalEntry:
    return JournalEntry(entry_id=entry_id, user_id=user_id, factor_id=state.factor_id, recorded_at=now, **fields)


def _timeline(state: FactorState) -> dict[str, object]:
    return {
        "value_after": state.current_value,
        "confidence_after": state.current_confidence,
        "status_after": state.inference_status,
    }


def infer(
    factor: Factor, state: FactorState, update: InferredUpdate, user_id: str, entry_id: str, now: datetime
) -> Transition:
    """Apply an extractor's (validated) reading, honouring user-backed values and the observation clock."""
    observed_at = update.observed_at or now
    common = {
        "kind": EntryKind.inferred,
        "source": Source.llm,
        "previous_value": state.current_value,
        "new_value": update.value,
        "change_rationale": update.rationale,
        "conversation_excerpt": update.conversation_excerpt,
        "confidence": update.confidence,
        "inferred_from": update.inferred_from,
        "session_id": update.session_id,
        "turn_id": update.turn_id,
        "observed_at": observed_at,
    }
    counted = state.model_copy(update={"evidence_count": state.evidence_count + 1, "last_updated": now})

    if state.observed_at is not None and observed_at < state.observed_at:
        # Late-arriving older observation: on the timeline at its own time, not current.
        entry = _entry(
            state,
            user_id,
            entry_id,
            now,
            applied=False,
            effective=True,
            value_after=update.value,
            confidence_after=update.confidence,
            status_after=InferenceStatus.unconfirmed,
            **common,
        )
        return Transition(counted, entry)

    if state.inference_status in USER_BACKED and state.current_value is not None:
        tolerance = CONFLICT_TOLERANCE * (factor.scale.max - factor.scale.min)
        if abs(update.value - state.current_value) <= tolerance:
            # Corroborates what the user said: evidence, not a change.
            entry = _entry(state, user_id, entry_id, now, applied=False, effective=False, **_timeline(state), **common)
            return Transition(counted, entry)
        conflict = Conflict(
            entry_id=entry_id,
            proposed_value=update.value,
            proposed_confidence=update.confidence,
            rationale=update.rationale,
            observed_at=observed_at,
            session_id=update.session_id,
        )
        entry = _entry(
            state,
            user_id,
            entry_id,
            now,
            applied=False,
            effective=False,
            **_timeline(state),
            **{**common, "kind": EntryKind.conflict},
        )
        return Transition(counted.model_copy(update={"open_conflict": conflict}), entry)

    new_state = counted.model_copy(
        update={
            "current_value": update.value,
            "current_confidence": update.confidence,
            "inference_status": InferenceStatus.unconfirmed,
            "observed_at": observed_at,
            "inferred_from": list(update.inferred_from),
            "last_entry_id": entry_id,
            "needs_recheck": False,
            "recheck_reason": None,
        }
    )
    entry = _entry(new_state, user_id, entry_id, now, applied=True, effective=True, **_timeline(new_state), **common)
    return Transition(new_state, entry)


def _user_change(
    state: FactorState,
    user_id: str,
    entry_id: str,
    now: datetime,
    *,
    kind: EntryKind,
    value: float | None,
    confidence: float,
    status: InferenceStatus,
    rationale: str,
    session_id: str | None,
    source: Source = Source.user,
    inferred_from: list[str] | None = None,
    excerpt: str = "",
    observed_at: datetime | None = None,
    turn_id: str | None = None,
) -> Transition:
    observed_at = observed_at or now
    new_state = state.model_copy(
        update={
            "current_value": value,
            "current_confidence": confidence,
            "inference_status": status,
            "observed_at": observed_at,
            "folded_through": observed_at,
            "folded_through_id": entry_id,
            "last_updated": now,
            "inferred_from": inferred_from or [],
            "last_entry_id": entry_id,
            "evidence_count": state.evidence_count + (1 if kind != EntryKind.retracted else 0),
            "needs_recheck": False,
            "recheck_reason": None,
            "open_conflict": None,
        }
    )
    entry = _entry(
        new_state,
        user_id,
        entry_id,
        now,
        kind=kind,
        source=source,
        previous_value=state.current_value,
        new_value=value,
        change_rationale=rationale,
        conversation_excerpt=excerpt,
        confidence=confidence,
        inferred_from=inferred_from or [],
        session_id=session_id,
        turn_id=turn_id,
        observed_at=observed_at,
        applied=True,
        effective=True,
        **_timeline(new_state),
    )
    return Transition(new_state, entry)


def _confirmed_confidence(confidence: float) -> float:
    """What a value the person confirmed is worth: their own evidence, at least as sure as a value they gave."""
    return round(max(USER_PROVIDED_CONFIDENCE, min(1.0, confidence + CONFIRMATION_BOOST)), 4)


def confirm(
    state: FactorState,
    user_id: str,
    entry_id: str,
    now: datetime,
    session_id: str | None,
    *,
    turn_id: str | None = None,
    excerpt: str = "",
) -> Transition:
    """The user confirms the current value: status confirmed, at the confidence of their own word (at least
    ``USER_PROVIDED_CONFIDENCE``; +0.1 above it, capped at 1).  ``turn_id`` and ``excerpt``: the answer and the
    words of it confirmed, when the confirmation was given in the conversation."""
    assert state.current_value is not None, "confirm needs an assessed factor"
    return _user_change(
        state,
        user_id,
        entry_id,
        now,
        kind=EntryKind.confirmed,
        value=state.current_value,
        confidence=_confirmed_confidence(state.current_confidence),
        status=InferenceStatus.confirmed,
        rationale="User confirmed the assessed value",
        session_id=session_id,
        inferred_from=state.inferred_from,
        turn_id=turn_id,
        excerpt=excerpt,
    )


def confirm_reading(
    factor: Factor,
    state: FactorState,
    user_id: str,
    entry_id: str,
    now: datetime,
    value: float,
    *,
    session_id: str | None,
    turn_id: str | None,
    excerpt: str,
) -> Transition:
    """The person says a reading shown to them (``value``) is right.  When the factor's current value agrees with
    it (``evidence.agrees``: the same band) that value is confirmed; when a later answer or the person moved it,
    the reading's value becomes the person's own, as a correction would make it (``corrected``); when the factor
    was withdrawn ("doesn't apply"), the reading is brought back as the person's own, journaled as ``restored``
    (the same state a correction would leave, but not called one: nothing was corrected)."""
    if state.current_value is None:
        return correct(
            state,
            user_id,
            entry_id,
            now,
            value,
            READING_RESTORED,
            session_id,
            turn_id=turn_id,
            excerpt=excerpt,
            kind=EntryKind.restored,
        )
    if agrees(factor.scale, state.current_value, value):
        return confirm(state, user_id, entry_id, now, session_id, turn_id=turn_id, excerpt=excerpt)
    return correct(
        state, user_id, entry_id, now, value, READING_CONFIRMED, session_id, turn_id=turn_id, excerpt=excerpt
    )


def correct(
    state: FactorState,
    user_id: str,
    entry_id: str,
    now: datetime,
    value: float,
    rationale: str,
    session_id: str | None,
    *,
    turn_id: str | None = None,
    excerpt: str = "",
    kind: EntryKind = EntryKind.corrected,
) -> Transition:
    """The user provides the value: status user_provided, confidence 0.95; journaled as ``kind`` (``corrected``,
    or ``restored`` when it brings back a reading the person had withdrawn)."""
    return _user_change(
        state,
        user_id,
        entry_id,
        now,
        kind=kind,
        value=value,
        confidence=USER_PROVIDED_CONFIDENCE,
        status=InferenceStatus.user_provided,
        rationale=rationale,
        session_id=session_id,
        turn_id=turn_id,
        excerpt=excerpt,
    )


def retract(
    state: FactorState,
    user_id: str,
    entry_id: str,
    now: datetime,
    rationale: str,
    source: Source,
    *,
    session_id: str | None = None,
    turn_id: str | None = None,
    excerpt: str = "",
) -> Transition:
    """Withdraw the value: the factor is unassessed again."""
    return _user_change(
        state,
        user_id,
        entry_id,
        now,
        kind=EntryKind.retracted,
        value=None,
        confidence=0.0,
        status=InferenceStatus.unassessed,
        rationale=rationale,
        session_id=session_id,
        source=source,
        turn_id=turn_id,
        excerpt=excerpt,
    )


def resolve_conflict(
    state: FactorState, user_id: str, entry_id: str, now: datetime, accept: bool, rationale: str
) -> Transition:
    """Accept the held inference (it becomes the confirmed value) or reject it (the value stays)."""
    conflict = state.open_conflict
    assert conflict is not None, "resolve_conflict needs an open conflict"
    value: float | None
    if accept:
        value = conflict.proposed_value
        confidence = _confirmed_confidence(conflict.proposed_confidence)
        status = InferenceStatus.confirmed
    else:
        value, confidence, status = (
            state.current_value,
            state.current_confidence,
            InferenceStatus(state.inference_status),
        )
    return _user_change(
        state,
        user_id,
        entry_id,
        now,
        kind=EntryKind.conflict_resolved,
        value=value,
        confidence=confidence,
        status=status,
        rationale=rationale,
        session_id=conflict.session_id,
    )


def composite_reading(
    catalog: Catalog, composite: Factor, states: dict[str, FactorState]
) -> tuple[float, float, list[str]] | None:
    """A composite's value (weighted mean of assessed components) and confidence.

    Confidence is the weighted mean of component confidences with unassessed
    components counting as zero, so a composite built on few components is
    honest about it.  None when no component is assessed.
    """
    weights = composite.composite or {}
    assessed = {fid: states[fid] for fid in weights if fid in states and states[fid].is_assessed}
    if not assessed:
        return None
    assessed_weight = sum(weights[fid] for fid in assessed)
    value = sum(weights[fid] * (state.current_value or 0.0) for fid, state in assessed.items()) / assessed_weight
    confidence = sum(weights[fid] * state.current_confidence for fid, state in assessed.items()) / sum(weights.values())
    return round(value, 2), round(confidence, 4), sorted(assessed)


def composite_state(
    catalog: Catalog, composite: Factor, blank: FactorState, states: dict[str, FactorState]
) -> FactorState:
    """A composite as its components' states make it (``blank`` when none is assessed): what it stood at
    whenever those were the components' states, whatever order they were said or recorded in."""
    reading = composite_reading(catalog, composite, states)
    if reading is None:
        return blank
    value, confidence, components = reading
    seen = [at for fid in components if (at := states[fid].observed_at) is not None]
    return blank.model_copy(
        update={
            "current_value": value,
            "current_confidence": confidence,
            "inference_status": InferenceStatus.unconfirmed,
            "observed_at": max(seen) if seen else None,
            "inferred_from": components,
            "evidence_count": len(components),
        }
    )


def derive(
    catalog: Catalog,
    composite: Factor,
    state: FactorState,
    states: dict[str, FactorState],
    user_id: str,
    entry_id: str,
    now: datetime,
    cause: str,
    observed_at: datetime | None = None,
) -> Transition | None:
    """Recompute a composite after a component changed; None when nothing moved.

    The composite's state depends only on its components' states: it is observed at the
    moment they moved it (``observed_at``; by default when the newest of them was), and
    counts one piece of evidence per assessed component.
    """
    reading = composite_reading(catalog, composite, states)
    value, confidence, components = reading if reading else (None, 0.0, [])
    if value == state.current_value and confidence == state.current_confidence and components == state.inferred_from:
        return None
    names = ", ".join(catalog.factor(fid).name for fid in components) if components else "no assessed components"
    seen = [at for fid in components if (at := states[fid].observed_at) is not None]
    change = _user_change(
        state,
        user_id,
        entry_id,
        now,
        kind=EntryKind.derived,
        value=value,
        confidence=confidence,
        status=InferenceStatus.unconfirmed if value is not None else InferenceStatus.unassessed,
        rationale=f"Recomputed from {names} after {cause} changed",
        session_id=None,
        source=Source.system,
        inferred_from=components,
        observed_at=observed_at or (max(seen) if seen else now),
    )
    return Transition(change.state.model_copy(update={"evidence_count": len(components)}), change.entry)
