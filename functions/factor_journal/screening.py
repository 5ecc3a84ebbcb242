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

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import ValidationError

from factor_journal.catalog import Catalog
from factor_journal.errors import FactorJournalError
from factor_journal.extraction.base import ProposedUpdate
from factor_journal.models import FactorState
from factor_journal.validation import checked_reading

U = TypeVar("U", bound=Any)

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


def screen(raw_updates: Iterable[Any], catalog: Catalog, allowed: set[str] | None = None) -> Screened:
    """Accepted updates (parsed, on the catalog, on scale, at most the per-turn limit) and why others were
    dropped.  ``allowed`` limits updates to the factors the extractor was asked about.  The move bound
    (``bound_move``) is applied later, when each reading is folded in at its place on the timeline.
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
        known_sources = [s for s in update.inferred_from if catalog.has_factor(s)]
        try:
            fid, value, confidence, rationale, sources = checked_reading(
                catalog, update.factor_id, update.value, update.confidence, update.rationale, known_sources
            )
        except FactorJournalError as error:
            result.rejected.append(f"{update.factor_id[:64]!r}: {error}"[:300])
            continue
        if allowed is not None and fid not in allowed:
            result.rejected.append(f"{fid!r}: not among the factors asked about")
            continue
        update = update.model_copy(
            update={"value": value, "confidence": confidence, "rationale": rationale, "inferred_from": sources}
        )
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
    result.accepted.extend(ranked[:MAX_UPDATES_PER_TURN])
    return result


def bound_move(update: U, catalog: Catalog, state: FactorState | None, notes: list[str]) -> U:
    """The reading with its move from a confidently known value bounded (see module doc).

    Applied when the reading is folded into the factor's evidence, against the state
    just before it on the observation timeline, so the bound is the same whatever
    order turns arrive in.  ``update`` is any reading with factor_id, value and confidence.
    """
    if state is None or state.current_value is None or state.current_confidence < CONFIDENT:
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
