"""Human labels for domain values: what a person reads instead of ids, enums and ``None``.

Pure functions over the catalog (no Streamlit, no Firestore), unit-tested in
``tests/dashboard/test_labels.py``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime

from factor_journal.catalog import Catalog
from factor_journal.models import CategoryProgress, status_words
from factor_journal.organisation import OrgDay
from factor_journal.page_models import shown_value
from factor_journal.rollup import PersonRow

NOT_YET = "not yet"

KIND_LABELS = {
    "inferred": "inferred from the conversation",
    "confirmed": "confirmed by you",
    "corrected": "corrected by you",
    "retracted": "withdrawn",
    "restored": "restored by you",
    "conflict": "a disagreeing reading, held for you",
    "conflict_resolved": "disagreement settled by you",
    "derived": "recomputed from its parts",
}


def kind_label(kind: object, read_only: bool) -> str:
    """What a journal entry is, in words, for its person ("confirmed by you") or for a reader such as their
    manager ("confirmed by them")."""
    label = KIND_LABELS.get(str(kind), str(kind))
    return label.replace("by you", "by them").replace("for you", "for them") if read_only else label


def confirm_label(factor_name: str, band: str) -> str:
    """The "That's right" button of a say-back line, naming what it agrees with ("That's right: Data quality is
    low"): a button's accessible name is its label (Streamlit's ``help`` tooltip adds none), so two readings under
    one answer give a screen reader two buttons it can tell apart, and the eye reads what the click says."""
    return f"That's right: {factor_name} is {band}"


def correct_label(factor_name: str) -> str:
    """The "Not quite" button of a say-back line, naming the factor it opens the choice for ("Not quite: Data
    quality"), for the same reason as ``confirm_label``."""
    return f"Not quite: {factor_name}"


# The controls a page repeats once per factor, each naming its factor ("Confirm Data quality"), for the same reason
# as ``confirm_label``: six "Confirm" buttons read to a screen reader as six identical buttons.
FACTOR_CONTROLS = {
    "confirm": "Confirm {factor}",
    "value": "Correct value for {factor}",
    "reason": "Why correct {factor}? (a short reason)",
    "save": "Save correction to {factor}",
    "keep": "Keep my value for {factor}",
    "take": "Use the new value for {factor}",
    "holds": "{factor} still holds",
    "talk": "Talk about {factor}",
}


def factor_control(control: str, factor_name: str) -> str:
    """The label of a control repeated once per factor on a page (``FACTOR_CONTROLS``), naming its factor: the
    words the eye reads and the name a screen reader says."""
    return FACTOR_CONTROLS[control].format(factor=factor_name)


# What the conversation page says about an answer, by the pipeline's ``extraction.status`` on its turn.
TURN_STATUS_MESSAGES = {
    "processing": "Being analysed…",
    "processed": "Noted: your assessment has been updated.",
    "no_update": "Noted. This answer did not change the assessment.",
    "failed": "Saved. Analysing it failed for a moment; it will be retried automatically.",
    "needs_attention": "Saved, but it could not be analysed after several tries. The team will look at it.",
    "invalid": "Saved, but this text could not be analysed, so it will not change the assessment.",
    "rate_limited": "Saved, but not analysed: you have sent many answers in a short time. Take a short break.",
    None: "Saved: the assessment will update in a moment.",
}


def turn_status_message(status: str | None, next_attempt_at: datetime | None = None) -> str:
    """The sentence shown for a turn's analysis status (any unknown status reads as 'saved, pending')."""
    message = TURN_STATUS_MESSAGES.get(status, TURN_STATUS_MESSAGES[None])
    if status == "failed" and next_attempt_at is not None:
        message = message.removesuffix(".") + f" (next try around {next_attempt_at.astimezone(UTC):%H:%M} UTC)."
    return message


def of_person(thing: str, name: str, *, start: bool = False) -> str:
    """``thing`` belonging to the person called ``name``, as it reads in a sentence: "Anna Berg's pages"; "the
    pages of Anna Berg (Head of Data)" when the name ends in a parenthesis, or anything else a possessive cannot
    follow ("Anna Berg (Head of Data)'s pages"); ``start``: at the start of a sentence ("The pages of …")."""
    if name[-1:].isalnum():
        return f"{name}'s {thing}"
    phrase = f"the {thing} of {name}"
    return phrase[:1].upper() + phrase[1:] if start else phrase


def open_pages_label(name: str) -> str:
    """The button that opens a person's pages read-only, naming them: "Open Anna Berg's pages", "Open the pages of
    Anna Berg (Head of Data)"."""
    return f"Open {of_person('pages', name)}"


def count(number: int, thing: str, plural: str | None = None) -> str:
    """``number`` (thousands separated) with ``thing`` in the singular or plural (``plural``, else ``thing`` + "s"):
    "1 project type", "3 project types", "1 person", "2,000 people"."""
    return f"{number:,} {thing if number == 1 else plural or thing + 's'}"


def tier_name(catalog: Catalog, tier_id: str | None) -> str:
    """A decision tier's name ('Low-risk pilots'), or the id made readable when the catalog lacks it."""
    for tier in catalog.decision_tiers:
        if tier.id == tier_id:
            return tier.name
    return (tier_id or NOT_YET).replace("_", " ")


def status_label(status: object, read_only: bool = False) -> str:
    """Who stands behind an answer, in words: "yours" to its person, "given by them" to a reader (a manager)."""
    if read_only and str(status) == "user_provided":
        return "given by them"
    return status_words(status)


def band(catalog: Catalog, factor_id: str, value: float) -> str:
    """low / mid / high: the band the value falls in on the factor's scale (the catalog's one definition)."""
    return str(catalog.band(factor_id, value))


def amount(value: float) -> str:
    """A value as a person reads it: at most one decimal, cut rather than rounded, so the number shown never
    sits across a band edge from its band ("39.9", never "40" for a low 39.96)."""
    return f"{shown_value(value):g}"


def day(moment: datetime | date | None, empty: str = NOT_YET) -> str:
    """'12 Nov 2026', or ``empty`` (default 'not yet') for nothing."""
    return empty if moment is None else f"{moment:%d %b %Y}"


def ago(moment: datetime | None, now: datetime, empty: str = "never active yet") -> str:
    """'today', '1 day ago', '12 days ago'; ``empty`` for nothing."""
    if moment is None:
        return empty
    days = (now - moment).days
    return "today" if days <= 0 else ("1 day ago" if days == 1 else f"{days} days ago")


def age(moment: datetime | None, now: datetime) -> str:
    """How long ago, in the unit a person would use: 'today', '5 days ago', '3 weeks ago', '14 months ago'."""
    if moment is None:
        return "long ago"
    days = (now - moment).days
    if days < 14:
        return ago(moment, now)
    if days < 61:
        return f"{days // 7} weeks ago"
    months = round(days / (365.25 / 12))
    return f"{months} months ago" if months < 24 else f"{days / 365.25:.0f} years ago"


_IDENTIFIER = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")


def names_in(text: str, names: Mapping[str, str]) -> str:
    """``text`` with every known factor id (``data_governance``) replaced by its name ('Data governance').

    Only whole snake_case words that are ids in ``names`` change; all other text is left as it is.
    """
    return _IDENTIFIER.sub(lambda match: names.get(match.group(0), match.group(0)), text)


_USER_DID = re.compile(r"\bUser (said|answered|corrected|confirmed|restored|kept|accepted|gave|set|withdrew)\b")
_READS_AS = re.compile(r": reads as (low|mid|high) \(P=(0(?:\.\d+)?|1(?:\.0+)?)\)")
_THEIR_OWN = re.compile(r"^(You [^\"“]*?)\btheir (answer|value)\b")
_COMBINED = re.compile(r" \(combined with (\d+) earlier observations?: [-\d.]+ → [-\d.]+\)")


def in_plain_words(text: str, names: Mapping[str, str]) -> str:
    """A journal rationale as its person is told it: factor ids as names (``names_in``), "User said" as "You said",
    the reader's band probability as how sure it was ("read as low, fairly sure") and the evidence arithmetic as
    what it means ("weighed with 2 earlier answers").  The person's quoted words are left exactly as they are.
    Pure."""

    def sure(match: re.Match[str]) -> str:
        chance = float(match.group(2))
        how = "quite sure" if chance >= 0.8 else "fairly sure" if chance >= 0.6 else "not very sure"
        return f": read as {match.group(1)}, {how}"

    def combined(match: re.Match[str]) -> str:
        count = int(match.group(1))
        return f" (weighed with {count} earlier answer{'s' if count != 1 else ''})"

    text = _USER_DID.sub(lambda match: f"You {match.group(1)}", names_in(text, names))
    text = _THEIR_OWN.sub(r"\1your \2", text)  # "You kept their value": the person's own, said to them
    return _COMBINED.sub(combined, _READS_AS.sub(sure, text))


def factor_names(catalog: Catalog) -> dict[str, str]:
    return {factor.id: factor.name for factor in catalog.factors}


def shortfall(missing: list[str]) -> str:
    """What a prerequisite lacks, in words: 'not assessed yet', 'value too low', 'value and confidence too low'."""
    if "unassessed" in missing:
        return "not assessed yet"
    parts = [part for part in ("value", "confidence") if part in missing]
    return f"{' and '.join(parts)} too low" if parts else "met"


# Under the overview's metrics when today's confidence differs from the one stored: why (the metric's help tooltip,
# which a screen reader cannot reach).
CONFIDENCE_TODAY = "Confidence is how sure we are today: what was said long ago counts for less."


def category_rows(categories: list[CategoryProgress]) -> list[dict[str, str]]:
    """The "Progress by category" chart as text, one row per category in the chart's order: how many of its
    factors are mapped (as the bar's label, and the bar's length) and its average confidence."""
    return [
        {
            "Category": category.name,
            "Mapped": f"{category.factor_count} of {category.total_factors} ({category.completeness:.0%})",
            "Confidence": f"{category.avg_confidence:.0%}",
        }
        for category in categories
    ]


# The team table's cell for someone who has assessed nothing: no confidence, nothing to re-check (an empty cell
# reads as nothing to a screen reader, and a 0% would be a figure they do not have).
NO_ANSWERS = "no answers yet"
TEAM_COLUMNS = [
    "Person",
    "Mapped",
    "Confidence",
    "Tier",
    "To re-check",
    "Unconfirmed",
    "Needs attention",
    "Last active",
]


TABLE_CHAR_PX, TABLE_CELL_PX = 7, 16  # the grid's text (a little over its average character) and a cell's padding


def table_width(table) -> int:
    """The width in px the team grid draws ``table`` (a DataFrame of ``team_rows``) at, erring wide: each column
    as wide as its longest text, header or cell, plus padding; the sideways cue shows below it."""
    return sum(
        TABLE_CELL_PX + TABLE_CHAR_PX * max([len(str(column)), *(len(str(cell)) for cell in table[column])])
        for column in table.columns
    )


def sideways_cue(columns: Sequence[str]) -> str:
    """The team table's cue where it is wider than the page, naming every column after the person's (a phone shows
    three, a laptop with the sidebar open all but the last): 'The table scrolls sideways, the names staying in
    place: Mapped, Confidence, Tier, To re-check, Unconfirmed and Last active.'"""
    rest = list(columns[1:])
    listed = ", ".join(rest[:-1]) + f" and {rest[-1]}" if len(rest) > 1 else "".join(rest)
    return f"The table scrolls sideways, the names staying in place: {listed}."


def team_rows(catalog: Catalog, people: Sequence[PersonRow]) -> list[dict[str, str | int]]:
    """The team table as it is read, by eye and by a screen reader alike: whole percents (what a progress bar's
    format showed, where the grid's text was the raw float), confidence and tier as the aged answers support them
    (as the row was last aged), and words where there is no figure.  The CSV export keeps the unrounded
    fractions."""
    rows: list[dict[str, str | int]] = []
    for person in people:
        fresh = person.fresh
        rows.append(
            {
                "Person": person.display_name or person.user_id,
                "Mapped": f"{person.completeness:.0%}",
                "Confidence": f"{fresh.avg_confidence:.0%}" if person.assessed else NO_ANSWERS,
                "Tier": tier_name(catalog, fresh.decision_tier),
                "To re-check": f"{fresh.share:.0%}" if person.assessed else NO_ANSWERS,
                "Unconfirmed": person.unconfirmed,
                "Needs attention": person.needs_attention,
                "Last active": day(person.last_active),
            }
        )
    return rows


def today_label(at: datetime) -> str:
    """How the team page names its live figures in the progress over time: 'Today, 14:05 UTC (as above)'."""
    return f"Today, {at.astimezone(UTC):%H:%M} UTC (as above)"


def progress_rows(days: Sequence[OrgDay], at: datetime) -> list[dict[str, str]]:
    """The "Progress over time" chart as text (``organisation.progress``: nightly days, then today's live figures,
    named ``today_label(at)``): per day, average mapped, average confidence (words when nobody had answered) and
    how many people were counted."""
    rows = []
    for index, figures in enumerate(days):
        live = index == len(days) - 1
        rows.append(
            {
                "Day": today_label(at) if live else day(date.fromisoformat(figures.date)),
                "Mapped on average": f"{figures.avg_completeness:.0%}",
                "Average confidence": NO_ANSWERS if figures.avg_confidence is None else f"{figures.avg_confidence:.0%}",
                "People": f"{figures.people:,}",
            }
        )
    return rows


TIED_NAMED = 12  # factors a tie note names before "and N more"


def tied_note(names: Sequence[str], level: int, *, times: bool = False) -> str:
    """The sentence under a top-ten chart cut through a tie, naming the factors left out that stand level with its
    last bar (at ``level``): 'Also holding back 4 people each, as many as the last bar: Privacy protection and
    Skills.' (people), 'Also blocking 3 times each, as often as the last bar: …' (``times``: person × project
    type)."""
    listed = list(names[:TIED_NAMED])
    if len(names) > TIED_NAMED:
        listed.append(f"{len(names) - TIED_NAMED:,} more")
    words = ", ".join(listed[:-1]) + f" and {listed[-1]}" if len(listed) > 1 else listed[0]
    if times:
        return f"Also blocking {count(level, 'time')} each, as often as the last bar: {words}."
    return f"Also holding back {count(level, 'person', 'people')} each, as many as the last bar: {words}."


def count_rows(items: Sequence[tuple[str, int]], name: str, count: str) -> list[dict[str, str]]:
    """A bar chart of counts as text (for its "The chart as a table"), one row per bar in the chart's order."""
    return [{name: label, count: f"{value:,}"} for label, value in items]


def bucket_rows(
    categories: Sequence[str], buckets: Sequence[str], counts: Sequence[Sequence[int]]
) -> list[dict[str, str]]:
    """The "Mapped by category" chart as text: per category, how many people have mapped it to each bucket (the
    bucket's range spelled out as its column, where the chart tells them apart by shade)."""
    return [
        {"Category": category, **{f"{bucket} mapped": f"{n:,}" for bucket, n in zip(buckets, row, strict=True)}}
        for category, row in zip(categories, counts, strict=True)
    ]
