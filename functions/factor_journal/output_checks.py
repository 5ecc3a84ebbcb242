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
MAX_TORN_PER_TURN = 2  # questions a turn may ask back about what it was about
MAX_TORN_OPTIONS = 3


@dataclass
class CheckedOutput:
    accepted: list[ProposedUpdate] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)  # one readable reason per dropped update
    guarded: list[str] = field(default_factory=list)  # one readable note per update the guard bounded


def _describe(raw: Any) -> str:
    if isinstance(raw, dict) and isinstance(raw.get("factor_id"), str):
        return repr(raw["factor_id"][:64])
    return "an update"


def _checked(raw: Any, catalog: Catalog, allowed: set[str] | None) -> tuple[ProposedUpdate | None, str | None]:
    """One untrusted reading parsed and checked against the catalog (and ``allowed``): (update, None), or (None, why
    it was dropped)."""
    try:
        update = ProposedUpdate.model_validate(raw)
    except ValidationError as error:
        problem = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'update'}: {e['msg']}" for e in error.errors())
        return None, f"{_describe(raw)} malformed: {problem}"[:300]
    known_sources = [s for s in update.inferred_from if catalog.has_factor(s)]
    try:
        fid, value, confidence, rationale, sources = checked_reading(
            catalog, update.factor_id, update.value, update.confidence, update.rationale, known_sources
        )
    except FactorJournalError as error:
        return None, f"{update.factor_id[:64]!r}: {error}"[:300]
    if allowed is not None and fid not in allowed:
        return None, f"{fid!r}: not among the factors asked about"
    return update.model_copy(
        update={"value": value, "confidence": confidence, "rationale": rationale, "inferred_from": sources}
    ), None


def check_output(raw_updates: Iterable[Any], catalog: Catalog, allowed: set[str] | None = None) -> CheckedOutput:
    """Accepted updates (parsed, on the catalog, on scale, at most the per-turn limit) and why others were
    dropped.  ``allowed`` limits updates to the factors the extractor was asked about (None: any catalog factor,
    for an extractor shown the whole catalog).  The move bound
    (``evidence.bound_move``) is applied later, when each reading is folded in at its place on the timeline.
    """
    result = CheckedOutput()
    best: dict[str, ProposedUpdate] = {}
    for raw in raw_updates:
        update, why = _checked(raw, catalog, allowed)
        if update is None:
            result.rejected.append(why or "an update: dropped")
            continue
        fid = update.factor_id
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


def check_torn(
    raw_torn: Iterable[Any], catalog: Catalog, accepted: Iterable[ProposedUpdate], allowed: set[str] | None = None
) -> tuple[list[list[ProposedUpdate]], list[str]]:
    """The readings an extractor could not choose between (``ExtractionResult.torn``), each option checked as an
    update is (``check_output``), and why others were dropped.  A question keeps its distinct options (a factor in a
    band: two options in one band of one factor are one), at most ``MAX_TORN_OPTIONS``; it is dropped when fewer
    than two are left, or when it speaks of a factor the turn's ``accepted`` updates store (that factor is read
    already).  At most ``MAX_TORN_PER_TURN`` questions."""
    stored = {update.factor_id for update in accepted}
    kept: list[list[ProposedUpdate]] = []
    rejected: list[str] = []
    for raw in raw_torn:
        options: list[ProposedUpdate] = []
        seen: set[tuple[str, str]] = set()
        for raw_option in raw if isinstance(raw, list) else []:
            option, why = _checked(raw_option, catalog, allowed)
            if option is None:
                rejected.append(f"torn: {why}")
                continue
            key = (option.factor_id, str(catalog.band(option.factor_id, option.value)))
            if key not in seen:
                seen.add(key)
                options.append(option)
        options = options[:MAX_TORN_OPTIONS]
        if len(options) < 2:
            rejected.append("torn: fewer than two distinct readings to choose between")
        elif stored & {option.factor_id for option in options}:
            rejected.append("torn: about a factor the turn reads already")
        elif len(kept) >= MAX_TORN_PER_TURN:
            rejected.append(f"torn: over the limit of {MAX_TORN_PER_TURN} questions a turn may ask")
        else:
            kept.append(options)
    return kept, rejected
