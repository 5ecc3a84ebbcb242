"""Catalog check: factor pairs whose descriptions mean nearly the same thing, by the embedded model.

    python -m factor_journal_tools.catalog_check [--threshold 0.9] [--top 10]

Two factors a person cannot tell apart get each other's evidence (``ml_infrastructure`` vs
``mlops_maturity``).  Each factor is embedded from its name, description and rubric; pairs whose
cosine similarity reaches the threshold are flagged (exit status 1), and the closest pairs are
listed either way so a catalog editor sees what to disambiguate in the rubrics.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from factor_journal.catalog.models import Catalog, Factor, load_catalog
from factor_journal.extraction.embeddings import embed

THRESHOLD = 0.75  # near-duplicates; the packaged catalog's closest pair is far below (see docs/extraction.md)


def factor_text(factor: Factor) -> str:
    rubric = factor.rubric
    return f"{factor.name}. {factor.description} Low: {rubric.low} Mid: {rubric.mid} High: {rubric.high}"


def similar_pairs(catalog: Catalog, top: int | None = None) -> list[tuple[float, str, str]]:
    """(similarity, factor a, factor b) for every pair of assessable factors, most similar first."""
    factors = catalog.assessable_factors
    vectors = embed([factor_text(f) for f in factors])
    sims = vectors @ vectors.T
    pairs = [
        (round(float(sims[i, j]), 4), factors[i].id, factors[j].id)
        for i in range(len(factors))
        for j in range(i + 1, len(factors))
    ]
    pairs.sort(key=lambda p: -p[0])
    return pairs[:top] if top else pairs


def too_similar(catalog: Catalog, threshold: float = THRESHOLD) -> list[tuple[float, str, str]]:
    """The pairs at or above ``threshold``: the catalog should say what belongs where, or merge them."""
    return [pair for pair in similar_pairs(catalog) if pair[0] >= threshold]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m factor_journal_tools.catalog_check")
    parser.add_argument("--threshold", type=float, default=THRESHOLD)
    parser.add_argument("--top", type=int, default=10)
    args = parser.parse_args(argv)
    catalog = load_catalog()
    for similarity, a, b in similar_pairs(catalog, args.top):
        flag = "TOO SIMILAR" if similarity >= args.threshold else ""
        print(f"{similarity:.3f}  {a:32s} {b:32s} {flag}")
    flagged = too_similar(catalog, args.threshold)
    print(f"{len(flagged)} pair(s) at or above {args.threshold}")
    return 1 if flagged else 0


if __name__ == "__main__":
    sys.exit(main())
