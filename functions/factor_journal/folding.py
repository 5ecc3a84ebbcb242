"""A factor's state as a function of the set of its observations, whatever order they arrived in.

Every journal entry of a factor is an observation at ``observed_at`` (ties broken
by entry id).  Folding them oldest first gives the factor's state:

* an extractor's reading is bounded against the state just before it
  (``evidence.bound_move``), weighed with the earlier evidence
  (``evidence.synthesise``) and applied by ``transitions.infer`` (user-backed
  values are never overwritten: a disagreeing reading becomes a conflict);
* a person's decision (confirm, correct, retract, resolve) and a system
  derivation stand as they were decided: the state they recorded.

A reading newer than everything folded so far is one more fold step
(``fold_reading``); one that sorts before it arrived late, and the factor is
folded again from its journal (``refold``): bounded by that factor's journal,
never the user's.  Both paths run the same step, so delivery order, duplicate
deliveries and recovered failures cannot change the result.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from factor_journal import transitions
from factor_journal.catalog import Catalog
from factor_journal.evidence import bound_move, synthesise
from factor_journal.models import EntryKind, FactorState, InferredUpdate, JournalEntry, Source
from factor_journal.transitions import Transition

ObservationKey = tuple[datetime, str]
COMBINED_MARK = " (combined with "


def key_of(entry: JournalEntry) -> ObservationKey:
    return (entry.observed_at, entry.entry_id)


def folded_key(state: FactorState) -> ObservationKey | None:
    if state.folded_through is None:
        return None
    return (state.folded_through, state.folded_through_id or "")


def arrives_late(state: FactorState, observed_at: datetime, entry_id: str) -> bool:
    """True when an observation does not sort after everything already folded into ``state``."""
    folded = folded_key(state)
    return folded is not None and (observed_at, entry_id) <= folded


@dataclass(frozen=True)
class Reading:
    """One extractor reading of one factor, as screened (before the move bound and synthesis)."""

    update: InferredUpdate  # value/confidence/rationale are the extractor's own
    entry_id: str
    weigh: bool = True  # bound the move and weigh with earlier evidence; False: the value as stated

    @property
    def key(self) -> ObservationKey:
        assert self.update.observed_at is not None
        return (self.update.observed_at, self.entry_id)


def _reading_of(entry: JournalEntry) -> Reading:
    """The reading an extractor's journal entry was made from (older entries: its recorded value)."""
    rationale = entry.reading_rationale
    if rationale is None:
        rationale = entry.change_rationale.split(COMBINED_MARK, 1)[0]
    value = entry.reading_value if entry.reading_value is not None else entry.new_value
    confidence = entry.reading_confidence if entry.reading_confidence is not None else entry.confidence
    update = InferredUpdate(
        factor_id=entry.factor_id,
        value=value if value is not None else 0.0,
        confidence=confidence,
        rationale=rationale,
        conversation_excerpt=entry.conversation_excerpt,
        inferred_from=entry.inferred_from,
        session_id=entry.session_id,
        turn_id=entry.turn_id,
        observed_at=entry.observed_at,
    )
    return Reading(update=update, entry_id=entry.entry_id, weigh=bool(entry.weighed))


def _is_reading(entry: JournalEntry) -> bool:
    return entry.source == Source.llm and entry.kind in (EntryKind.inferred, EntryKind.conflict)


def fold_reading(
    catalog: Catalog, state: FactorState, reading: Reading, user_id: str, recorded_at: datetime, notes: list[str]
) -> Transition:
    """One fold step: the reading bounded, weighed with earlier evidence and applied to ``state``."""
    factor = catalog.factor(reading.update.factor_id)
    applied = reading.update
    if reading.weigh:
        bounded = bound_move(reading.update, catalog, state, notes)
        applied = synthesise(state, bounded, factor.scale)
    change = transitions.infer(factor, state, applied, user_id, reading.entry_id, recorded_at)
    raw = reading.update
    entry = change.entry.model_copy(
        update={
            "reading_value": raw.value,
            "reading_confidence": raw.confidence,
            "reading_rationale": raw.rationale,
            "weighed": reading.weigh,
        }
    )
    observed_at, entry_id = reading.key
    return Transition(
        change.state.model_copy(update={"folded_through": observed_at, "folded_through_id": entry_id}), entry
    )


def stand(state: FactorState, entry: JournalEntry) -> Transition:
    """A person's decision or a derivation, folded as the state it recorded (a derivation counts one piece of
    evidence per component it was derived from, as ``transitions.derive`` does)."""
    if entry.kind == EntryKind.derived:
        counted = len(entry.inferred_from)
    else:
        counted = state.evidence_count + (0 if entry.kind == EntryKind.retracted else 1)
    new_state = state.model_copy(
        update={
            "current_value": entry.value_after,
            "current_confidence": entry.confidence_after,
            "inference_status": entry.status_after,
            "observed_at": entry.observed_at,
            "inferred_from": list(entry.inferred_from),
            "last_entry_id": entry.entry_id,
            "evidence_count": counted,
            "needs_recheck": False,
            "recheck_reason": None,
            "open_conflict": None,
            "folded_through": entry.observed_at,
            "folded_through_id": entry.entry_id,
        }
    )
    return Transition(new_state, entry.model_copy(update={"previous_value": state.current_value}))


def refold(
    catalog: Catalog,
    current: FactorState,
    journal: list[JournalEntry],
    readings: list[Reading],
    user_id: str,
    now: datetime,
    notes: list[str],
) -> tuple[FactorState, list[JournalEntry]]:
    """The factor folded again from its whole journal plus new ``readings``.

    Returns the new state and every entry whose document changes (the new readings'
    entries and older entries whose place on the timeline moved).  Re-check flags
    set by other factors' corrections are kept from ``current``.
    """
    observations: dict[str, JournalEntry | Reading] = {entry.entry_id: entry for entry in journal}
    for reading in readings:
        observations[reading.entry_id] = reading
    ordered = sorted(observations.values(), key=lambda o: o.key if isinstance(o, Reading) else key_of(o))
    state = FactorState(factor_id=current.factor_id, category=current.category)
    original = {entry.entry_id: entry for entry in journal}
    changed: list[JournalEntry] = []
    for observation in ordered:
        if isinstance(observation, Reading):
            change = fold_reading(catalog, state, observation, user_id, now, notes)
        elif _is_reading(observation):
            change = fold_reading(catalog, state, _reading_of(observation), user_id, observation.recorded_at, notes)
        else:
            change = stand(state, observation)
        state = change.state
        before = original.get(change.entry.entry_id)
        if before is None or before.to_document() != change.entry.to_document():
            changed.append(change.entry)
    state = state.model_copy(
        update={"needs_recheck": current.needs_recheck, "recheck_reason": current.recheck_reason, "last_updated": now}
    )
    return state, changed


def refold_damaged(
    catalog: Catalog,
    factor_id: str,
    journal: list[JournalEntry],
    kept: FactorState | None,
    user_id: str,
    now: datetime,
) -> FactorState | None:
    """The state of a factor whose document is damaged: its whole journal folded again, dated when that journal
    was last written (``now`` when it is empty), with the re-check flag of ``kept`` (the summary's copy: another
    factor's correction set it, not this journal); ``None`` when ``factor_id`` is not a catalog factor's."""
    if not catalog.has_factor(factor_id):
        return None
    blank = FactorState(factor_id=factor_id, category=catalog.factor(factor_id).category)
    dated = max((e.recorded_at for e in journal), default=None) or now
    return refold(catalog, kept or blank, journal, [], user_id, dated, [])[0]
