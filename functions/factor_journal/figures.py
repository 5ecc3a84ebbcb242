"""The organisation's figures as counters, kept exact with the rows they count (pure).

Every figure the team pages show is a sum over people: how many are in each decision tier, how much of each
category they mapped, what blocks them, how many answers are due, who went quiet, their aged confidence.  A
person's row *contributes* a set of counters (``contribution``, a function of the row document alone); the
organisation's figures are the sum of every row's contribution.  A change of a row moves the figures by
``delta(old, new)``, written with the row in the same transaction as increments of the person's figures shard
(``rollup.shard_of``): so a figure never disagrees with its rows, and no document takes every person's writes.
``rebuild`` sums rows from scratch: the nightly check compares the two and repairs any drift.

Counters are named ``kind|cell|...``, where the cell (``rollup.cell_of``) is the person's aged tier, whether
they went quiet and their re-check band: a page filtered by tier, quiet or re-check sums the cells it selects.

=====================  =========================================================================
``n|cell``             people
``s|cell``             people who assessed something
``m|cell``             completeness, summed in ten-thousandths (an integer: sums stay exact)
``a|cell``             answers given
``d|cell``             answers due for a re-check
``b|cell|cat|k``       people whose category ``cat`` is mapped to bucket ``k`` (1-4; 0 is the rest)
``h|cell|factor``      people the factor holds back from at least one capability
``p|factor``           (person, capability) pairs the factor blocks (everyone's: the Blockers page's measure)
``x|archetype``        people the capability is blocked for
``y|archetype|factor`` people for whom the factor blocks that capability
``t``                  turns needing attention
``k|half-life``        the aged confidence's terms (``rollup.confidence_terms``), ``k|-`` those that do not age
=====================  =========================================================================
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

from pydantic import BaseModel

from factor_journal.catalog import Catalog
from factor_journal.rollup import PersonRow, aged_confidence_at, parse_cell

MAPPED_BUCKETS = ("0–19%", "20–39%", "40–59%", "60–79%", "80–100%")
Counters = dict[str, float]
FLOAT_TOLERANCE = 1e-9  # relative: two confidence sums this close are the same figure (float increments)


def bucket_of(completeness: float) -> int:
    """The ``MAPPED_BUCKETS`` index of a category mapped to ``completeness``."""
    return min(len(MAPPED_BUCKETS) - 1, int(completeness * 100 + 1e-9) // 20)


def contribution(row: PersonRow | None) -> Counters:
    """What the row adds to its organisation's figures (nothing for no row or a manager's own row)."""
    if row is None or not row.listed or not row.cell:
        return {}
    cell = row.cell
    counts: Counters = {f"n|{cell}": 1, f"m|{cell}": round(row.completeness * 10000)}
    if row.assessed > 0:
        counts[f"s|{cell}"] = 1
        counts[f"a|{cell}"] = row.assessed
    if row.due:
        counts[f"d|{cell}"] = row.due
    if row.needs_attention:
        counts["t"] = row.needs_attention
    for category, mapped in row.categories.items():
        bucket = bucket_of(mapped)
        if bucket:
            counts[f"b|{cell}|{category}|{bucket}"] = 1
    pairs: Counter[str] = Counter()
    for blocked in row.blocked:
        counts[f"x|{blocked.archetype_id}"] = 1
        for factor in set(blocked.blockers):
            counts[f"y|{blocked.archetype_id}|{factor}"] = 1
        pairs.update(blocked.blockers)
    for factor, times in pairs.items():
        counts[f"h|{cell}|{factor}"] = 1
        counts[f"p|{factor}"] = times
    for half_life, term in row.confidence_terms.items():
        counts[f"k|{half_life}"] = term
    return counts


def delta(old: PersonRow | None, new: PersonRow | None) -> Counters:
    """How the figures move when ``old`` becomes ``new`` (None: no row): only the counters that change."""
    before, after = contribution(old), contribution(new)
    moved = {key: after.get(key, 0) - before.get(key, 0) for key in before.keys() | after.keys()}
    return {key: value for key, value in moved.items() if value}


def add(figures: Counters, change: Mapping[str, float]) -> Counters:
    """``figures`` moved by ``change`` (a new mapping; counters that reach zero are dropped)."""
    summed = dict(figures)
    for key, value in change.items():
        summed[key] = summed.get(key, 0) + value
        if summed[key] == 0:
            del summed[key]
    return summed


def rebuild(rows: Iterable[PersonRow]) -> Counters:
    """The figures of ``rows``, summed from scratch (the nightly check's reference)."""
    figures: Counters = {}
    for row in rows:
        figures = add(figures, contribution(row))
    return figures


def _same(a: float, b: float) -> bool:
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    return math.isclose(a, b, rel_tol=FLOAT_TOLERANCE, abs_tol=FLOAT_TOLERANCE)


def drift(stored: Mapping[str, float], rebuilt: Mapping[str, float]) -> Counters:
    """What must be added to ``stored`` to make it ``rebuilt`` (empty when they agree; a confidence term agrees
    within ``FLOAT_TOLERANCE``, since increments of a float may round differently from a fresh sum)."""
    keys = stored.keys() | rebuilt.keys()
    return {
        key: rebuilt.get(key, 0) - stored.get(key, 0)
        for key in sorted(keys)
        if not _same(stored.get(key, 0), rebuilt.get(key, 0))
    }


class TeamChoice(BaseModel):
    """The cells a team filter selects: tiers (empty: all), only those gone quiet, only those whose answers
    to re-check reach ``min_band`` (0: no condition)."""

    tiers: frozenset[str] = frozenset()
    quiet_only: bool = False
    min_band: int = 0

    def selects(self, cell: str) -> bool:
        tier, quiet, band = parse_cell(cell)
        return (
            (not self.tiers or tier in self.tiers)
            and (quiet or not self.quiet_only)
            and (band >= self.min_band if self.min_band else True)
        )


class OrgFigures:
    """The organisation's figures, summed over its shards, read as the team pages show them (``cells``: the
    cells a filter selects, default every one)."""

    def __init__(self, counters: Mapping[str, float], catalog: Catalog) -> None:
        self.counters = dict(counters)
        self.catalog = catalog
        self._cells: dict[str, dict[str, float]] = {}
        for key, value in self.counters.items():
            kind, _, rest = key.partition("|")
            if kind in "nsmadbh" and rest:
                cell, _, tail = rest.partition("|")
                self._cells.setdefault(cell, {})[f"{kind}|{tail}"] = value

    @property
    def cells(self) -> list[str]:
        """Every cell someone counts in."""
        return sorted(cell for cell, counts in self._cells.items() if counts.get("n|"))

    def choose(self, choice: TeamChoice) -> list[str]:
        return [cell for cell in self.cells if choice.selects(cell)]

    def _sum(self, name: str, cells: Sequence[str] | None) -> float:
        return sum(self._cells[cell].get(name, 0) for cell in (self.cells if cells is None else cells))

    def people(self, cells: Sequence[str] | None = None) -> int:
        return int(self._sum("n|", cells))

    def started(self, cells: Sequence[str] | None = None) -> int:
        return int(self._sum("s|", cells))

    def assessed(self, cells: Sequence[str] | None = None) -> int:
        return int(self._sum("a|", cells))

    def due(self, cells: Sequence[str] | None = None) -> int:
        return int(self._sum("d|", cells))

    def avg_completeness(self, cells: Sequence[str] | None = None) -> float:
        people = self.people(cells)
        return round(self._sum("m|", cells) / 10000 / people, 4) if people else 0.0

    def stale_share(self, cells: Sequence[str] | None = None) -> float | None:
        """Of every answer the people gave, the share due for a re-check (None: none given)."""
        given = self.assessed(cells)
        return round(self.due(cells) / given, 4) if given else None

    def quiet(self) -> int:
        return self.people([cell for cell in self.cells if parse_cell(cell)[1]])

    def stale_people(self) -> int:
        return self.people([cell for cell in self.cells if parse_cell(cell)[2] > 0])

    def attention(self) -> int:
        return int(self.counters.get("t", 0))

    def avg_confidence(self, at: datetime) -> float | None:
        """The aged average confidence at ``at`` of the people who assessed something (None: nobody has)."""
        started = self.started()
        if not started:
            return None
        terms = {key[2:]: value for key, value in self.counters.items() if key.startswith("k|")}
        return round(max(0.0, aged_confidence_at(terms, at)) / started, 4)

    def tier_distribution(self, cells: Sequence[str] | None = None) -> dict[str, int]:
        """How many people each decision tier holds: every catalog tier in order (none: 0), then any tier the
        catalog no longer has."""
        counts: Counter[str] = Counter()
        for cell in self.cells if cells is None else cells:
            counts[parse_cell(cell)[0]] += int(self._cells[cell].get("n|", 0))
        tiers = [tier.id for tier in self.catalog.decision_tiers]
        return {tier: counts.pop(tier, 0) for tier in tiers} | {tier: n for tier, n in counts.items() if n}

    def mapped_distribution(self, cells: Sequence[str] | None = None) -> dict[str, list[int]]:
        """Per category id (catalog order): how many people have mapped it to each of ``MAPPED_BUCKETS``."""
        chosen = self.cells if cells is None else cells
        people = self.people(chosen)
        distribution = {}
        for category in self.catalog.categories:
            upper = [int(self._sum(f"b|{category.id}|{k}", chosen)) for k in range(1, len(MAPPED_BUCKETS))]
            distribution[category.id] = [people - sum(upper), *upper]
        return distribution

    def pairs(self) -> dict[str, int]:
        """Per blocking factor, the (person, capability) pairs it blocks, over everyone."""
        return {key[2:]: int(value) for key, value in self.counters.items() if key.startswith("p|") and value}

    def held_back(self, cells: Sequence[str] | None = None) -> list[tuple[str, int]]:
        """Blocking factor id -> how many people it holds back from at least one capability, most first; among
        factors holding back as many, the one blocking the most (person, capability) pairs over everyone (the
        Blockers page's measure and order) first, then by id."""
        people: Counter[str] = Counter()
        for cell in self.cells if cells is None else cells:
            for key, value in self._cells[cell].items():
                if key.startswith("h|"):
                    people[key[2:]] += int(value)
        pairs = self.pairs()
        return sorted(
            ((f, n) for f, n in people.items() if n), key=lambda item: (-item[1], -pairs.get(item[0], 0), item[0])
        )

    def blocked(self) -> tuple[dict[str, int], dict[str, dict[str, int]], list[tuple[str, int]]]:
        """(people blocked per capability, per capability the people each factor blocks it for, and the
        (person, capability) pairs per factor, most first, then by id), over everyone."""
        people: dict[str, int] = {}
        by_archetype: dict[str, dict[str, int]] = {}
        for key, value in self.counters.items():
            kind, _, rest = key.partition("|")
            if kind == "x" and value:
                people[rest] = int(value)
            elif kind == "y" and value:
                archetype, _, factor = rest.partition("|")
                by_archetype.setdefault(archetype, {})[factor] = int(value)
        factors = sorted(self.pairs().items(), key=lambda item: (-item[1], item[0]))
        return people, by_archetype, factors
