"""Two readings of one turn that must agree before anything is stored (``GeminiSettings.readings = 2``).

A language model reads a turn the same way most times; at the edges (a plan that hints at today, another
organisation's practice beside ours, a partial picture between two bands) its reading flips from one answer to the
next.  Asking twice and keeping only what both readings say removes the flips:

* **what the turn is**: it is evidence only when both readings say so; when either sets it aside (another
  organisation, a hypothetical, a deferral, ...), nothing is stored and the turn is set aside as that reading says;
* **which factors**: a factor is stored only when both readings name it; a factor only one reading names is not
  stored (said in ``rejected``);
* **which band**: when both readings put a factor in the same band, it is stored at the mean of their values and
  confidences, with the first reading's rationale and quote; when they put it in different bands, nothing is stored
  for it and the person is asked which (a *torn* reading: both options, the first reading's first, as the embedded
  reader's torn readings are asked).

Pure: the readings come in as the model gave them (untrusted dictionaries), the decisions go out; screening what is
kept stays the pipeline's job (``output_checks``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from factor_journal.catalog import Catalog
from factor_journal.extraction.base import TurnKind


@dataclass(frozen=True)
class ModelReading:
    """One reading of a turn as the model gave it: what it said the turn is and its update entries (untrusted)."""

    kind: TurnKind
    updates: list[Any]


@dataclass
class Agreement:
    """What two readings agree on: the updates to store, the questions to ask instead (each two options of one
    factor in two bands), the reason the turn is set aside (a ``TurnKind`` value, or None for evidence) and what was
    left out and why."""

    updates: list[dict[str, Any]] = field(default_factory=list)
    torn: list[list[dict[str, Any]]] = field(default_factory=list)
    set_aside_as: str | None = None
    rejected: list[str] = field(default_factory=list)


def _readable(update: Any, catalog: Catalog) -> tuple[str, float] | None:
    """The (factor id, value) of an entry that names a catalog factor with a number, else None."""
    if not isinstance(update, dict):
        return None
    factor_id, value = update.get("factor_id"), update.get("value")
    if not isinstance(factor_id, str) or not catalog.has_factor(factor_id):
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return factor_id, float(value)


def _by_factor(reading: ModelReading, catalog: Catalog) -> dict[str, dict[str, Any]]:
    """A reading's readable entries by factor id, the first entry for a factor winning (as the pipeline keeps one
    reading per factor)."""
    entries: dict[str, dict[str, Any]] = {}
    for update in reading.updates:
        if _readable(update, catalog) is not None:
            entries.setdefault(update["factor_id"], update)
    return entries


def _mean(first: Any, second: Any) -> Any:
    """The mean of two numbers; the first value when either is not a number (the pipeline's checks judge it)."""
    numbers = [v for v in (first, second) if isinstance(v, int | float) and not isinstance(v, bool)]
    return round(sum(numbers) / 2, 2) if len(numbers) == 2 else first


def agree(first: ModelReading, second: ModelReading, catalog: Catalog) -> Agreement:
    """What ``first`` and ``second`` agree on, by the rules in the module doc.  ``updates`` keep the first reading's
    order; entries that do not name a catalog factor with a number are passed on from the first reading as they are,
    for the pipeline's checks to reject with their own reasons."""
    agreement = Agreement()
    if first.kind != TurnKind.evidence or second.kind != TurnKind.evidence:
        said = first.kind if first.kind != TurnKind.evidence else second.kind
        agreement.set_aside_as = said.value
        if first.kind == TurnKind.evidence and first.updates:
            agreement.rejected.append(f"the second reading says the turn is {said.value}: nothing stored")
        return agreement
    seconds = _by_factor(second, catalog)
    firsts = _by_factor(first, catalog)
    for update in first.updates:
        readable = _readable(update, catalog)
        if readable is None:
            agreement.updates.append(update)
            continue
        factor_id, value = readable
        if firsts[factor_id] is not update:
            continue  # a second entry for the same factor: the first one speaks for it
        other = seconds.get(factor_id)
        if other is None:
            agreement.rejected.append(f"{factor_id!r}: named by one reading only: not stored")
            continue
        other_value = float(other["value"])
        band, other_band = catalog.band(factor_id, value), catalog.band(factor_id, other_value)
        if band != other_band:
            agreement.rejected.append(
                f"{factor_id!r}: the readings differ on its band ({band} {value:g}, {other_band} {other_value:g}): "
                "asked instead"
            )
            agreement.torn.append([update, other])
            continue
        agreement.updates.append(
            {
                **update,
                "value": _mean(update["value"], other["value"]),
                "confidence": _mean(update.get("confidence"), other.get("confidence")),
            }
        )
    for factor_id in [f for f in seconds if f not in firsts]:
        agreement.rejected.append(f"{factor_id!r}: named by one reading only: not stored")
    return agreement
