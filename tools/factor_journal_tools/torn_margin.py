"""When the reader is torn: what each margin would turn into questions, scored on a split (issue 45, section 2).

The semantic reader is torn about a reading it would store when another reading of the same answer scores within a
margin of it (``extraction.semantic.torn_readings``: the same factor's second likeliest band, or the best reading
it did not store); it then asks instead of storing.  From every reading the reader made of each turn the screening
let through (``evaluate.TurnRecord.read``, abstained ones too), at each margin of ``MARGINS``:

* *misreadings asked*: stored readings with the wrong factor, or the right factor in the wrong band, that become
  questions; *offering the right reading*: of those, the questions whose options hold the expected factor in its
  expected band;
* *right readings asked*: right readings that become questions (asked about needlessly).

``choose_margin`` applies the rule written in eval/HISTORY.md ("When the reader is torn") before any margin was
scored: the largest margin at which at least as many misreadings as right readings become questions and at most
``MAX_NEEDLESS`` of the right readings are asked about; else 0 (never torn).  Chosen on validation.  Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from factor_journal.catalog.models import band_of

MARGINS = (0.025, 0.05, 0.075, 0.1, 0.125, 0.15, 0.2, 0.25)
MAX_NEEDLESS = 0.10  # of the right readings, at most this share asked about needlessly


def _right(reading: Any, expected: dict[str, float]) -> bool:
    """The reading has an expected factor in its expected band."""
    value = expected.get(reading.factor_id)
    return value is not None and band_of(reading.value) == band_of(value)


def torn_curve(records: Iterable[Any], threshold: float, margins: Sequence[float] = MARGINS) -> list[dict[str, Any]]:
    """Per margin, what would become a question among the readings stored at ``threshold`` (see the module);
    empty when no record holds the semantic reader's readings (another extractor)."""
    from factor_journal.extraction.semantic import torn_readings

    records = [r for r in records if not r.screened]
    if not any(r.read for r in records):
        return []
    stored = [(r, reading) for r in records for reading in r.read if reading.score >= threshold]
    right_total = sum(1 for record, reading in stored if _right(reading, record.expected))
    curve = []
    for margin in margins:
        asked = right_asked = misread_asked = offering = 0
        for record in records:
            for torn in torn_readings(record.read, threshold, margin).values():
                asked += 1
                if _right(torn.reading, record.expected):
                    right_asked += 1
                    continue
                misread_asked += 1
                offering += _right(torn.other, record.expected)
        curve.append(
            {
                "margin": margin,
                "questions": asked,
                "misreadings_asked": misread_asked,
                "offering_right": offering,
                "right_asked": right_asked,
                "stored": len(stored),
                "right": right_total,
                "misreadings": len(stored) - right_total,
            }
        )
    return curve


def choose_margin(curve: Sequence[dict[str, Any]], max_needless: float = MAX_NEEDLESS) -> dict[str, Any] | None:
    """The rule (eval/HISTORY.md): the largest margin at which misreadings asked >= right readings asked and right
    readings asked <= ``max_needless`` of the right readings; 0 when none qualifies.  None without a curve."""
    if not curve:
        return None
    rule = f"largest margin with misreadings asked >= right readings asked <= {max_needless:.0%} of right readings"
    fit = [
        row
        for row in curve
        if row["misreadings_asked"] >= row["right_asked"] and row["right_asked"] <= max_needless * row["right"]
    ]
    return {"margin": max((row["margin"] for row in fit), default=0.0), "rule": rule}


def torn_section(extractors: dict[str, Any]) -> list[str]:
    """The report's section: each split's curve and the margin its rule picks."""
    lines: list[str] = []
    for name, splits in sorted(extractors.items()):
        for split, figures in splits["splits"].items():
            curve = figures.get("torn_curve") or []
            if not curve:
                continue
            choice = figures.get("torn_choice") or {}
            first = curve[0]
            lines += [
                "",
                f"## When the reader is torn · {name} · {split}",
                "",
                f"Of the {first['stored']} readings the reader would store at its threshold, {first['right']} are",
                f"right and {first['misreadings']} misreadings (wrong factor, or wrong band). At each margin, what",
                "becomes a question instead: two bands of one factor, or two factors, scored within the margin",
                '(eval/HISTORY.md, "When the reader is torn"). Picked here by the rule '
                f"({choice.get('rule')}): **{choice.get('margin')}**.",
                "",
                "| margin | questions | misreadings asked | of them offering the right reading | right readings asked "
                "| share of right readings asked |",
                "|---|---|---|---|---|---|",
            ]
            for row in curve:
                share = row["right_asked"] / row["right"] if row["right"] else None
                lines.append(
                    f"| {row['margin']} | {row['questions']} | {row['misreadings_asked']} | {row['offering_right']} "
                    f"| {row['right_asked']} | {'–' if share is None else f'{100 * share:.1f}%'} |"
                )
    return lines
