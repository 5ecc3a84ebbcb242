"""Checks of untrusted extractor *output* (what is checked before a turn reaches an extractor, its *input*, is
``extraction.listening.screen_turn``).

Whatever an extractor returns is evidence to check, never a command.  Each
proposed update is parsed and checked against the catalog; bad ones are
dropped with a readable reason while the rest of the turn still applies, and
at most ``MAX_UPDATES_PER_TURN`` factors move per turn (the most confident
readings are kept) — a turn that "sets every factor to 100" moves a handful.
The move bound of a single reading is part of weighing evidence
(``evidence.bound_move``), applied when each reading is folded in.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from factor_journal.catalog import Catalog
from factor_journal.errors import FactorJournalError
from factor_journal.extraction.base import ProposedUpdate
from factor_journal.validation import checked_reading

MAX_UPDATES_PER_TURN = 6


@dataclass
class CheckedOutput:
    accepted: list[ProposedUpdate] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)  # one readable reason per dropped update
    guarded: list[str] = field(default_factory=list)  # one readable note per update the guard bounded


def _describe(raw: Any) -> str:
    if isinstance(raw, dict) and isinstance(raw.get("factor_id"), str):
        return repr(raw["factor_id"][:64])
    return "an update"


def check_output(raw_updates: Iterable[Any], catalog: Catalog, allowed: set[str] | None = None) -> CheckedOutput:
    """Accepted updates (parsed, on the catalog, on scale, at most the per-turn limit) and why others were
    dropped.  ``allowed`` limits updates to the factors the extractor was asked about (None: any catalog factor,
    for an extractor shown the whole catalog).  The move bound
    (``evidence.bound_move``) is applied later, when each reading is folded in at its place on the timeline.
    """
    result = CheckedOutput()
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
