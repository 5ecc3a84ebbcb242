"""Screening of untrusted extractor output, and the plausibility guard.

Whatever an extractor returns is evidence to check, never a command.  Each
proposed update is parsed and checked against the catalog; bad ones are
dropped with a readable reason while the rest of the turn still applies.  The
plausibility guard then bounds what one turn can do:

* at most ``MAX_UPDATES_PER_TURN`` factors move per turn (the most confident
  readings are kept) — a turn that "sets every factor to 100" moves a handful;
* a single uncorroborated turn moves a confidently known value by at most
  ``MAX_UNCORROBORATED_MOVE`` points (of 100), and such a reading's confidence
  is capped at ``MOVED_CONFIDENCE_CAP``, so only repeated evidence shifts it far.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from factor_journal.catalog import Catalog
from factor_journal.extraction.base import ProposedUpdate
from factor_journal.models import FactorState

MAX_UPDATES_PER_TURN = 6
CONFIDENT = 0.6
MAX_UNCORROBORATED_MOVE = 25.0
MOVED_CONFIDENCE_CAP = 0.5


@dataclass
class Screened:
    accepted: list[ProposedUpdate] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)  # one readable reason per dropped update
    guarded: list[str] = field(default_factory=list)  # one readable note per update the guard bounded


def _describe(raw: Any) -> str:
    if isinstance(raw, dict) and isinstance(raw.get("factor_id"), str):
        return repr(raw["factor_id"][:64])
    return "an update"


def screen(
    raw_updates: Iterable[Any],
    catalog: Catalog,
    states: Mapping[str, FactorState],
    allowed: set[str] | None = None,
    observed_at: datetime | None = None,
) -> Screened:
    """Accepted updates (parsed, on the catalog, on scale, within the guard) and why others were dropped.

    ``allowed`` limits updates to the factors the extractor was asked about;
    ``observed_at`` is when the turn was said (an older observation than a
    factor's current one never moves it, so the guard leaves it alone).
    """
    result = Screened()
    best: dict[str, ProposedUpdate] = {}
    for raw in raw_updates:
        try:
            update = ProposedUpdate.model_validate(raw)
        except ValidationError as error:
            problem = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'update'}: {e['msg']}" for e in error.errors())
            result.rejected.append(f"{_describe(raw)} malformed: {problem}"[:300])
            continue
        fid = update.factor_id
        if not catalog.has_factor(fid):
            result.rejected.append(f"{fid[:64]!r}: unknown factor")
            continue
        factor = catalog.factor(fid)
        if factor.is_composite:
            result.rejected.append(f"{fid!r}: derived factor, not inferable")
            continue
        if allowed is not None and fid not in allowed:
            result.rejected.append(f"{fid!r}: not among the factors asked about")
            continue
        if not factor.scale.contains(update.value) or update.value != update.value:
            result.rejected.append(f"{fid!r}: value {update.value} off the scale {factor.scale.min:g}-{factor.scale.max:g}")
            continue
        if not 0 <= update.confidence <= 1:
            result.rejected.append(f"{fid!r}: confidence {update.confidence} outside 0-1")
            continue
        if not update.rationale.strip():
            result.rejected.append(f"{fid!r}: no rationale")
            continue
        sources = [s for s in update.inferred_from if catalog.has_factor(s) and s != fid]
        update = update.model_copy(update={"inferred_from": sources})
        if fid in best:
            result.rejected.append(f"{fid!r}: proposed twice in one turn, kept the more confident reading")
            if update.confidence <= best[fid].confidence:
                continue
        best[fid] = update

    ranked = sorted(best.values(), key=lambda u: (-u.confidence, u.factor_id))
    for dropped in ranked[MAX_UPDATES_PER_TURN:]:
        result.rejected.append(
            f"{dropped.factor_id!r}: over the limit of {MAX_UPDATES_PER_TURN} factors one turn may move"
        )
    for update in ranked[:MAX_UPDATES_PER_TURN]:
        result.accepted.append(_bounded(update, catalog, states.get(update.factor_id), observed_at, result.guarded))
    return result


def _bounded(
    update: ProposedUpdate, catalog: Catalog, state: FactorState | None, observed_at: datetime | None, notes: list[str]
) -> ProposedUpdate:
    """The update with its move from a confidently known value bounded (see module doc)."""
    if state is None or state.current_value is None or state.current_confidence < CONFIDENT:
        return update
    if observed_at is not None and state.observed_at is not None and observed_at < state.observed_at:
        return update
    scale = catalog.factor(update.factor_id).scale
    limit = MAX_UNCORROBORATED_MOVE * (scale.max - scale.min) / 100
    move = update.value - state.current_value
    if abs(move) <= limit:
        return update
    bounded_value = state.current_value + (limit if move > 0 else -limit)
    notes.append(
        f"{update.factor_id!r}: a single turn moved a confident value {state.current_value:g} → {update.value:g}; "
        f"bounded to {bounded_value:g} at confidence ≤ {MOVED_CONFIDENCE_CAP}"
    )
    return update.model_copy(
        update={"value": bounded_value, "confidence": min(update.confidence, MOVED_CONFIDENCE_CAP)}
    )
