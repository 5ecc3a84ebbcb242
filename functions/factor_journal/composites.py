"""Composite factors (a weighted mean of their components) and their journal, as pure functions.

A composite is never said: its value is what its components' values make it.  Its journal holds one
derived entry for each moment its components moved it, on the components' observation timeline:

* a change whose readings are newer than everything folded so far moves the composite once more, one
  entry appended (``derive_composites``);
* a reading that arrives late re-folds its factor (``folding.refold``), and the composites built on
  it are derived again from every component's timeline (``rederive_composite``): the entries from
  states that never held in observed order are replaced, so the composite's history, like every
  factor's, is the same whatever order the turns arrived in.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from itertools import groupby

from factor_journal import transitions
from factor_journal.catalog import Catalog
from factor_journal.folding import key_of
from factor_journal.graph import FactorGraph
from factor_journal.models import FactorState, JournalEntry
from factor_journal.transitions import Transition


def derived_entry_id(catalog: Catalog, composite_id: str, states: dict[str, FactorState]) -> str:
    """A derived entry's id follows from its components' states (the entries they stand at)."""
    components = sorted(catalog.factor(composite_id).composite or {})
    standing = [(fid, states[fid].last_entry_id) for fid in components if fid in states]
    basis = "|".join(f"{fid}:{entry_id}" for fid, entry_id in standing if entry_id)
    return hashlib.sha256(f"{composite_id}|{basis}".encode()).hexdigest()[:20]


def derive_composites(
    catalog: Catalog,
    graph: FactorGraph,
    user_id: str,
    states: dict[str, FactorState],
    moved: set[str],
    now: datetime,
    *,
    except_for: frozenset[str] = frozenset(),
) -> list[Transition]:
    """Composites built on a moved factor (but ``except_for``), recomputed from their components' states."""
    derived: list[Transition] = []
    for cid in sorted({c for fid in moved for c in graph.composites_of(fid)} - except_for):
        composite = catalog.factor(cid)
        causes = sorted(moved & set(composite.composite or {}))
        current = states.get(cid) or FactorState(factor_id=cid, category=composite.category)
        cause = ", ".join(graph.name(fid) for fid in causes)
        entry_id = derived_entry_id(catalog, cid, states)
        # the moment the components moved it: a retraction moves it then, not when the others were last said
        moment = max((at for fid in causes if (at := states[fid].observed_at) is not None), default=None)
        change = transitions.derive(
            catalog, composite, current, states, user_id, entry_id, now, cause=cause, observed_at=moment
        )
        if change is not None:
            states[cid] = change.state
            derived.append(change)
    return derived


def composites_to_rederive(
    catalog: Catalog,
    graph: FactorGraph,
    states: dict[str, FactorState],
    refolded: Iterable[str],
    said: Iterable[tuple[str, datetime]],
) -> frozenset[str]:
    """The composites a change must derive again along their components' timelines: those built on a factor
    folded again from its journal (a late reading, damage), and those a reading arrives late for (``said``:
    (factor id, observed at) of the change's readings), i.e. not after every moment already derived."""
    again = {c for fid in refolded if not catalog.factor(fid).is_composite for c in graph.composites_of(fid)}
    for fid, observed_at in said:
        for cid in graph.composites_of(fid):
            derived_through = states[cid].observed_at if cid in states else None
            if derived_through is not None and observed_at <= derived_through:
                again.add(cid)
    return frozenset(again)


def timeline_factors(catalog: Catalog, composites: Iterable[str]) -> set[str]:
    """Whose journals deriving ``composites`` again reads: theirs and all their components'."""
    return {fid for cid in composites for fid in [cid, *(catalog.factor(cid).composite or {})]}


@dataclass
class Rederived:
    """A composite derived again from its components' whole timelines."""

    state: FactorState
    written: list[JournalEntry] = field(default_factory=list)  # new entries, and entries whose content moved
    removed: list[str] = field(default_factory=list)  # ids of entries from states that never held


def _state_after(entry: JournalEntry, blank: FactorState) -> FactorState:
    """A component as its timeline stood right after ``entry``."""
    return blank.model_copy(
        update={
            "current_value": entry.value_after,
            "current_confidence": entry.confidence_after,
            "inference_status": entry.status_after,
            "observed_at": entry.observed_at,
            "last_entry_id": entry.entry_id,
        }
    )


def rederive_composite(
    catalog: Catalog,
    graph: FactorGraph,
    composite_id: str,
    user_id: str,
    timelines: dict[str, list[JournalEntry]],
    journal: list[JournalEntry],
    now: datetime,
) -> Rederived:
    """The composite derived again along its components' ``timelines`` (each component's whole journal), one
    entry per observation moment that moves it; ``journal`` is the composite's stored journal, whose entries
    are kept where unchanged (their recording time too), rewritten where moved and removed where no longer
    derived."""
    composite = catalog.factor(composite_id)
    components = {
        fid: FactorState(factor_id=fid, category=catalog.factor(fid).category) for fid in composite.composite or {}
    }
    effective = sorted((entry for fid in components for entry in timelines.get(fid, []) if entry.effective), key=key_of)
    stored = {entry.entry_id: entry for entry in journal}
    state = FactorState(factor_id=composite_id, category=composite.category)
    written: list[JournalEntry] = []
    derived: set[str] = set()
    for at, moment in groupby(effective, key=lambda entry: entry.observed_at):
        said = list(moment)
        for entry in said:
            components[entry.factor_id] = _state_after(entry, components[entry.factor_id])
        entry_id = derived_entry_id(catalog, composite_id, components)
        recorded = stored[entry_id].recorded_at if entry_id in stored else now
        cause = ", ".join(graph.name(fid) for fid in sorted({entry.factor_id for entry in said}))
        change = transitions.derive(
            catalog, composite, state, components, user_id, entry_id, recorded, cause=cause, observed_at=at
        )
        if change is None:
            continue
        state = change.state
        derived.add(entry_id)
        before = stored.get(entry_id)
        if before is None or before.to_document() != change.entry.to_document():
            written.append(change.entry)
    removed = sorted(entry_id for entry_id in stored if entry_id not in derived)
    return Rederived(state=state.model_copy(update={"last_updated": now}), written=written, removed=removed)
