"""The labelled corpus (``eval/corpus/<split>.jsonl``): its turns, read and checked against the catalog.

Each line is one turn: the assistant's question, the person's answer, the factors and values it is evidence of
(``expected``), its ``kind`` (``factor``, ``off_topic`` or ``hostile``) and ``tags``.  Read by ``make eval``, the
training and the seat's tools (which never put any of it but the question and the answer into a request).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factor_journal.catalog.models import Catalog, load_catalog

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "eval" / "corpus"
SPLITS = ("dev", "validation", "test")  # train on dev; validate model choices on validation; only score test
KINDS = ("factor", "off_topic", "hostile")


class CorpusError(ValueError):
    """A corpus file is unreadable or a record is invalid against the catalog."""


@dataclass(frozen=True)
class CorpusTurn:
    id: str
    question: str
    answer: str
    expected: dict[str, float]
    kind: str
    tags: tuple[str, ...] = ()


def _read_turns(
    path: Path, what: str, to_turn: Callable[[dict[str, Any]], CorpusTurn], faults: Callable[[CorpusTurn], list[str]]
) -> list[CorpusTurn]:
    """Every non-empty line of ``path`` made a turn by ``to_turn``; a line that is no such record (``what``), a
    duplicate id, an empty answer and whatever ``faults`` finds in a turn are named with their line, all of them in
    one ``CorpusError``."""
    turns, problems, seen = [], [], set()
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise CorpusError(f"cannot read {path}: {error}") from error
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path.name}:{number}"
        try:
            turn = to_turn(json.loads(line))
        except (ValueError, KeyError, TypeError) as error:
            problems.append(f"{where}: not a {what} record ({error})")
            continue
        if turn.id in seen:
            problems.append(f"{where}: duplicate id {turn.id!r}")
        seen.add(turn.id)
        if not turn.answer.strip():
            problems.append(f"{where}: empty answer")
        problems.extend(f"{where}: {fault}" for fault in faults(turn))
        turns.append(turn)
    if problems:
        raise CorpusError("; ".join(problems[:20]) + (f" (+{len(problems) - 20} more)" if len(problems) > 20 else ""))
    return turns


def load_corpus(path: Path, catalog: Catalog | None = None) -> list[CorpusTurn]:
    """The split's turns, each checked against the catalog; ``CorpusError`` names every bad line."""
    catalog = catalog if catalog is not None else load_catalog()

    def to_turn(record: dict[str, Any]) -> CorpusTurn:
        return CorpusTurn(
            id=str(record["id"]),
            question=str(record.get("question") or ""),
            answer=str(record["answer"]),
            expected={str(e["factor_id"]): float(e["value"]) for e in record.get("expected") or []},
            kind=str(record["kind"]),
            tags=tuple(record.get("tags") or ()),
        )

    def faults(turn: CorpusTurn) -> list[str]:
        found = []
        if turn.kind not in KINDS:
            found.append(f"kind {turn.kind!r} is not one of {KINDS}")
        if turn.kind != "factor" and turn.expected:
            found.append(f"a {turn.kind} turn must expect no update")
        if turn.kind == "factor" and not turn.expected:
            found.append("a factor turn must expect at least one factor")
        for fid, value in turn.expected.items():
            if not catalog.has_factor(fid) or catalog.factor(fid).is_composite:
                found.append(f"{fid!r} is not an assessable catalog factor")
            elif not catalog.factor(fid).scale.contains(value):
                found.append(f"{fid!r} value {value} is off its scale")
        return found

    return _read_turns(path, "corpus", to_turn, faults)


# the screening sets' kinds (README): five that must change nothing, and the look-alikes that are evidence
MUST_CHANGE_NOTHING_KINDS = ("other_organisation", "hypothetical", "deferral", "question_back", "pause")
LOOK_ALIKE = "evidence"
SCREENING_KINDS = (*MUST_CHANGE_NOTHING_KINDS, LOOK_ALIKE)


def load_screening(path: Path) -> list[CorpusTurn]:
    """A screening set's turns (``screening.jsonl``, ``screening_heldout.jsonl``: no factor labels) as corpus turns
    that expect nothing, each keeping its kind (one of ``SCREENING_KINDS``; ``evidence`` for a look-alike) as kind
    and tag; ``CorpusError`` names every bad line."""

    def to_turn(record: dict[str, Any]) -> CorpusTurn:
        kind, question = str(record["kind"]), str(record.get("question") or "")
        return CorpusTurn(str(record["id"]), question, str(record["answer"]), {}, kind, (kind,))

    def faults(turn: CorpusTurn) -> list[str]:
        return [] if turn.kind in SCREENING_KINDS else [f"kind {turn.kind!r} is not one of {SCREENING_KINDS}"]

    return _read_turns(path, "screening", to_turn, faults)


def available_splits() -> list[str]:
    return [split for split in SPLITS if (CORPUS / f"{split}.jsonl").exists()]
