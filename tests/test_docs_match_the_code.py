"""Facts the docs state that the code also holds are checked against the code, so a doc can't go stale quietly:
docs/freshness.md's half-life table is the catalog's, and no doc writes a count of the catalog by hand."""

from __future__ import annotations

import re
from pathlib import Path

from factor_journal.catalog import Catalog, load_catalog

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_ROW = "a category naming none"


def half_life_table(markdown: str) -> dict[str, str]:
    """The rows of the ``| category or factor | half-life | why |`` table: each name on a row (a row may name
    several, comma-separated; a factor's own row starts with "— ") → its half-life as written."""
    rows: dict[str, str] = {}
    inside = False
    for line in markdown.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if cells[:2] == ["category or factor", "half-life"]:
            inside = True
            continue
        if not inside or set(cells[0]) <= {"-"}:
            continue
        if not line.strip().startswith("|"):
            break
        for name in cells[0].split(", "):
            rows[name] = cells[1]
    return rows


def catalog_half_lives(catalog: Catalog) -> dict[str, str]:
    """What the table must say: every category's half-life, every factor's own (as "— name"), and the default."""
    expected = {category.name: category.half_life.text for category in catalog.categories if category.half_life}
    expected.update({f"— {f.name}": f.half_life.text for f in catalog.factors if f.half_life is not None})
    expected[DEFAULT_ROW] = catalog.freshness.default_half_life.text
    return expected


def test_the_freshness_docs_table_is_the_catalogs_half_lives():
    table = half_life_table((ROOT / "docs" / "freshness.md").read_text())
    assert table == catalog_half_lives(load_catalog())


def test_the_table_reader_reads_a_row_naming_several_and_a_factors_own_row():
    markdown = (
        "| category or factor | half-life | why |\n|---|---|---|\n"
        "| People, Data | 6 months | x |\n| — Cloud | never | y |\n\nafter the table\n"
    )
    assert half_life_table(markdown) == {"People": "6 months", "Data": "6 months", "— Cloud": "never"}


# a hand count of the catalog, as in "52 factors and a composite, 7 categories, 11 archetypes"
COUNT_OF_THE_CATALOG = re.compile(r"\b\d+ (?:factors and a composite|categories|archetypes)\b")


def test_no_doc_counts_the_catalog_by_hand():
    """ "52 factors" goes stale with the next factor added: the catalog says how many it has."""
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        assert not COUNT_OF_THE_CATALOG.search(path.read_text()), path.name
