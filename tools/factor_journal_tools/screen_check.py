"""Screen check: what the turns that must change nothing would write, end to end, without Firestore.

    python -m factor_journal_tools.screen_check [--extractor semantic] [--results eval/screening_results.json]
                                                 [CORPUS ...]

Each turn of a screening set (``eval/corpus/screening.jsonl``, the screen's development set, and
``screening_heldout.jsonl``, never used to write a rule) is read as a person's first answer to its question:
``pipeline.read_turn``, the pipeline's own reading (the screen, the candidates, the extractor, the output
screen), for a person with nothing assessed yet. Per kind it counts the turns the screen refused and the turns
that would still write an update (``accepted``): for the five kinds that must change nothing the target is 0;
for the look-alikes (``evidence``) the screen should refuse none.

Why beside ``make eval``: the screening sets carry no factor labels (a look-alike's band is not scored), and the
figure that matters for them, updates written, needs no emulator. The semantic reader is deterministic, so the
figures reproduce exactly.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from factor_journal import runtime
from factor_journal.catalog import load_catalog
from factor_journal.extraction.base import ExchangeTurn, ExtractionRequest, Extractor
from factor_journal.graph import FactorGraph
from factor_journal.pipeline import read_turn
from factor_journal_tools.corpus import CORPUS, LOOK_ALIKE, load_screening

SETS = (CORPUS / "screening.jsonl", CORPUS / "screening_heldout.jsonl")


def check(path: Path, extractor: Extractor) -> dict[str, dict[str, int]]:
    """Per kind of turn in the set: how many there are, how many the screen refused, how many would write."""
    catalog = load_catalog()
    graph = FactorGraph(catalog)
    counts: dict[str, Counter[str]] = {}
    for turn in load_screening(path):
        request = ExtractionRequest(
            user_id="screen-check",
            session_id="screen-check",
            turn_id=turn.id,
            text=turn.answer,
            recent=[ExchangeTurn(role="assistant", text=turn.question)] if turn.question else [],
        )
        reading = read_turn(extractor, catalog, graph, request, {})
        kind = counts.setdefault(turn.kind, Counter())
        kind["turns"] += 1
        kind["refused"] += reading.refused is not None
        kind["updated"] += bool(reading.checked.accepted)
    return {kind: dict(counter) for kind, counter in sorted(counts.items())}


def table(name: str, figures: dict[str, dict[str, int]]) -> str:
    rows = [f"{name}", "| kind | turns | refused by the screen | would write an update |", "|---|---|---|---|"]
    for kind, counts in figures.items():
        rows.append(f"| {kind} | {counts['turns']} | {counts.get('refused', 0)} | {counts.get('updated', 0)} |")
    must_not = [counts for kind, counts in figures.items() if kind != LOOK_ALIKE]
    updated = sum(counts.get("updated", 0) for counts in must_not)
    rows.append(f"\nMust change nothing: {updated} of {sum(c['turns'] for c in must_not)} would write an update.")
    return "\n".join(rows)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpora", nargs="*", type=Path, default=list(SETS))
    parser.add_argument("--extractor", default="semantic")
    parser.add_argument("--results", type=Path, default=None, help="write the figures as JSON here")
    args = parser.parse_args(argv)
    extractor = runtime.make_extractor(args.extractor)
    results = {}
    for path in args.corpora:
        results[path.name] = check(path, extractor)
        print(table(f"\n{path.name} · {extractor.name}", results[path.name]))
    if args.results is not None:
        args.results.write_text(json.dumps({"extractor": extractor.name, "sets": results}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
