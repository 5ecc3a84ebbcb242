"""The team table as CSV (pure): one row per person, streamed line by line; names and addresses are data, never
formulas, when the file is opened in a spreadsheet."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator

from factor_journal.rollup import PersonRow

CSV_COLUMNS = [
    "user_id",
    "display_name",
    "email",
    "completeness",
    "avg_confidence",
    "assessed",
    "total",
    "decision_tier",
    "unconfirmed",
    "conflicts",
    "needs_attention",
    "last_active",
    "to_recheck",
    "to_recheck_share",
]

# A spreadsheet evaluates a cell that starts with one of these as a formula (CSV injection).
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _as_cell(value: object) -> object:
    """A text cell that a spreadsheet would read as a formula, as text (a leading apostrophe)."""
    return f"'{value}" if isinstance(value, str) and value.startswith(_FORMULA_START) else value


def csv_lines(people: Iterable[PersonRow]) -> Iterator[str]:
    """The team table as CSV, line by line (one row per person, ISO dates, fractions as 0-1; confidence and
    tier as the answers counted when the row was last aged, with the answers due for a re-check); names and
    addresses are data, never formulas, when the file is opened in a spreadsheet."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in people:
        fresh = row.fresh
        data = row.model_dump() | {
            "avg_confidence": fresh.avg_confidence,
            "decision_tier": fresh.decision_tier,
            "to_recheck": fresh.due,
            "to_recheck_share": fresh.share,
            "last_active": row.last_active.isoformat() if row.last_active else "",
        }
        writer.writerow({key: _as_cell(value) for key, value in data.items()})
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()


def team_csv(people: Iterable[PersonRow]) -> str:
    """The whole CSV of ``people`` (``csv_lines``)."""
    return "".join(csv_lines(people))
