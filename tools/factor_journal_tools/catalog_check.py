"""Catalog check: factor pairs a reader could mistake for each other, by the words their texts share.

    python -m factor_journal_tools.catalog_check [--threshold 0.25] [--top 10] [--catalog PATH]

Two factors whose texts say the same thing in the same words get each other's evidence, from a person
reading the rubric and from the extractors that read it (the semantic reader embeds the descriptions and
level texts; the Gemini prompt quotes them). For every pair of assessable factors the check scores their
descriptions against each other, and their low, mid and high texts band by band, by TF-IDF cosine over
content words (``lexical.content_words``: stop words dropped, plurals folded), the inverse document
frequency taken over the catalog's own texts, so a word most factors use ("data", "AI") weighs little and a
word two texts share alone weighs a lot. A pair at or above ``THRESHOLD`` in any of the four fails (exit
status 1) and is printed with both texts.

Why word overlap and why 0.25 (issue 35; the figures are in ``eval/HISTORY.md``, "Catalog boundaries").
The embedded model's cosine could not justify a threshold: pairs a person confuses scored 0.05-0.45 while
unrelated pairs reached 0.55. Word overlap is what a reader trips on when two level texts sit side by side
("Some capacity can be found for pilots" / "Time can be found for a focused pilot", 0.55). Before the
boundaries were written, 19 factor pairs scored 0.25 or more (21 text pairs), among them
``ml_infrastructure`` / ``mlops_maturity`` (mid 0.41: "deployment is manual" / "Manual deployment"); below
0.25 the pairs share one ordinary word ("a course now and then" / "a model's accuracy now and then", "a
structured process" / "a structured programme"), which nobody confuses. After the rewrite no pair reaches
0.24. What no word measure can see: five of the ten pairs the issue names share no content word at all or
almost none (``it_integration`` / ``automation_maturity``: re-keying an order is both "data is re-typed"
and "order entry is manual"; ``ai_strategy`` / ``use_case_clarity``); they are confused by meaning, and the
catalog's two-way ``boundaries`` (validated by ``catalog.models``) are what separate them.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import Counter
from collections.abc import Sequence
from itertools import combinations
from pathlib import Path
from typing import NamedTuple

import numpy as np

from factor_journal.catalog.models import Catalog, Factor, load_catalog
from factor_journal.extraction.lexical import content_words

THRESHOLD = 0.25  # see the module docstring: the figures before and after are in eval/HISTORY.md
FIELDS = ("description", "low", "mid", "high")


class ClosePair(NamedTuple):
    """Two factors' texts in one field (``description`` or a band) and how much of their weighted words they share."""

    score: float
    field: str
    a: str
    b: str


def field_text(factor: Factor, field: str) -> str:
    """The factor's description, or its rubric text for the band ``field``."""
    return factor.description if field == "description" else str(getattr(factor.rubric, field))


def _vectors(texts: Sequence[str]) -> np.ndarray:
    """Unit TF-IDF rows (sublinear term frequency, smoothed idf over ``texts``), one per text."""
    counts = [Counter(content_words(text)) for text in texts]
    used_by = Counter(word for count in counts for word in count)
    columns = {word: column for column, word in enumerate(sorted(used_by))}
    matrix = np.zeros((len(texts), len(columns)))
    for row, count in enumerate(counts):
        for word, n in count.items():
            matrix[row, columns[word]] = (1.0 + math.log(n)) * (math.log((1 + len(texts)) / (1 + used_by[word])) + 1.0)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


def similar_pairs(catalog: Catalog, top: int | None = None) -> list[ClosePair]:
    """Every pair of assessable factors in every field (description, low, mid, high), closest first."""
    factors = catalog.assessable_factors
    vectors = _vectors([field_text(f, field) for field in FIELDS for f in factors]).reshape(
        len(FIELDS), len(factors), -1
    )
    pairs = [
        ClosePair(round(float(vectors[k, i] @ vectors[k, j]), 4), field, factors[i].id, factors[j].id)
        for k, field in enumerate(FIELDS)
        for i, j in combinations(range(len(factors)), 2)
    ]
    pairs.sort(key=lambda pair: (-pair.score, pair.field, pair.a, pair.b))
    return pairs[:top] if top else pairs


def too_similar(catalog: Catalog, threshold: float = THRESHOLD) -> list[ClosePair]:
    """The pairs at or above ``threshold``: their texts must be reworded apart, or the factors merged."""
    return [pair for pair in similar_pairs(catalog) if pair.score >= threshold]


def distribution(pairs: Sequence[ClosePair]) -> dict[str, dict[str, float]]:
    """Per field: how many pairs, the median, 90th and 99th percentile and the highest score."""
    found = {}
    for field in FIELDS:
        scores = np.array([pair.score for pair in pairs if pair.field == field])
        found[field] = {
            "pairs": float(len(scores)),
            **{f"p{q}": round(float(np.percentile(scores, q)), 3) for q in (50, 90, 99)},
            "max": round(float(scores.max()), 3),
        }
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m factor_journal_tools.catalog_check")
    parser.add_argument("--threshold", type=float, default=THRESHOLD)
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--catalog", type=Path, default=None, help="a catalog file (default: the packaged one)")
    args = parser.parse_args(argv)
    catalog = load_catalog(args.catalog) if args.catalog else load_catalog()
    pairs = similar_pairs(catalog)
    for field, figures in distribution(pairs).items():
        print(f"{field:11s} " + "  ".join(f"{k} {v:g}" for k, v in figures.items()))
    for pair in pairs[: args.top]:
        flag = "TOO CLOSE" if pair.score >= args.threshold else ""
        print(f"{pair.score:.3f}  {pair.field:11s} {pair.a:30s} {pair.b:30s} {flag}")
    flagged = [pair for pair in pairs if pair.score >= args.threshold]
    for pair in flagged:
        a, b = catalog.factor(pair.a), catalog.factor(pair.b)
        print(f"too close ({pair.field}, {pair.score:.3f}): {pair.a} {field_text(a, pair.field)!r}")
        print(f"{'':>30s}{pair.b} {field_text(b, pair.field)!r}")
    print(f"{len(flagged)} pair(s) at or above {args.threshold}")
    return 1 if flagged else 0


if __name__ == "__main__":
    sys.exit(main())
