"""A second reading of a turn that can veto what the first would store (``GeminiSettings.readings = 2``).

A language model reads a turn the same way most times; at the edges (a plan that hints at today, another
organisation's practice told beside ours, a factor only brushed in passing) its reading flips from one answer to the
next.  Asking twice and storing only what the second reading confirms removes those flips:

* **what the turn is**: it is evidence only when both readings say so; when either sets it aside (another
  organisation, a hypothetical, a deferral, ...), nothing is stored and the turn is set aside as that reading says
  (the first reading's reason when both do);
* **which factors**: a factor of the first reading is stored only when the second names it too; a factor only one
  reading names is not stored (said in ``rejected``).

What is stored is the first reading's entry as it gave it (value, confidence, rationale, quote): the second reading
only vetoes, it never moves a value.  Where the two differ on a factor's band, the first reading's stands: measured on
dev, a question asked there was more often about a reading the first had right than one it had wrong
(``eval/HISTORY.md``, "Two readings").

Pure: the readings come in as the model gave them (untrusted dictionaries), the decisions go out; screening what is
kept stays the pipeline's job (``output_checks``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from factor_journal.extraction.base import TurnKind


@dataclass(frozen=True)
class ModelReading:
    """One reading of a turn as the model gave it: what it said the turn is and its update entries (untrusted)."""

    kind: TurnKind
    updates: list[Any]


@dataclass
class Agreement:
    """What the second reading leaves of the first: the updates to store, the reason the turn is set aside (a
    ``TurnKind`` value, or None for evidence) and what was vetoed and why."""

    updates: list[Any] = field(default_factory=list)
    set_aside_as: str | None = None
    rejected: list[str] = field(default_factory=list)


def _factor_id(update: Any) -> str | None:
    """The factor an entry names, or None when it names none (the pipeline's checks reject such an entry)."""
    factor_id = update.get("factor_id") if isinstance(update, dict) else None
    return factor_id if isinstance(factor_id, str) else None


def agree(first: ModelReading, second: ModelReading) -> Agreement:
    """What ``second`` confirms of ``first``, by the rules in the module doc.  ``updates`` are the first reading's
    entries in its order; an entry that names no factor is passed on as it is, for the pipeline's checks to reject
    with their own reasons."""
    agreement = Agreement()
    if first.kind != TurnKind.evidence or second.kind != TurnKind.evidence:
        said = first.kind if first.kind != TurnKind.evidence else second.kind
        agreement.set_aside_as = said.value
        if first.kind == TurnKind.evidence and first.updates:
            agreement.rejected.append(f"the second reading says the turn is {said.value}: nothing stored")
        return agreement
    confirmed = {_factor_id(update) for update in second.updates} - {None}
    for update in first.updates:
        factor_id = _factor_id(update)
        if factor_id is None or factor_id in confirmed:
            agreement.updates.append(update)
            continue
        reason = f"{factor_id!r}: named by the first reading only: not stored"
        if reason not in agreement.rejected:  # one reason per factor, however many entries name it
            agreement.rejected.append(reason)
    return agreement
