"""Plotly figures built from domain values (pure: no Streamlit, no Firestore).

Time axes are by day of observation (never hours or milliseconds); count axes have whole numbers only.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from datetime import date, datetime, timedelta

import plotly.graph_objects as go

from dashboard.safe_text import plot
from factor_journal.models import BlockedCapability, JournalEntry
from factor_journal.page_models import day_ends

PLOT_CONFIG = {"displayModeBar": False}  # a reading view: no zoom/pan toolbar over the charts
PALETTE = {"value": "#2563eb", "confidence": "#f59e0b", "gap": "#ef4444", "met": "#10b981", "muted": "#cbd5e1"}


def capability_gaps(capability: BlockedCapability) -> go.Figure:
    """Each blocking factor's value against the threshold it misses (value bar, threshold marker)."""
    names = [b.factor_name for b in capability.blockers]
    values = [b.value or 0 for b in capability.blockers]
    figure = go.Figure()
    figure.add_bar(
        y=names,
        x=values,
        orientation="h",
        name="Now",
        marker_color=PALETTE["value"],
        text=["not assessed" if b.value is None else f"{b.value:g} @ {b.confidence:.0%}" for b in capability.blockers],
        textposition="auto",
    )
    figure.add_scatter(
        y=names,
        x=[b.min_value for b in capability.blockers],
        mode="markers",
        name="Needed",
        marker={"symbol": "line-ns-open", "size": 26, "line": {"width": 3}, "color": PALETTE["gap"]},
        text=[f"needs {b.min_value:g} @ {b.min_confidence:.0%}" for b in capability.blockers],
        hoverinfo="text",
    )
    figure.update_layout(
        height=50 + 45 * len(names),
        margin={"l": 10, "r": 10, "t": 10, "b": 10},
        showlegend=False,
        xaxis={"range": [0, 100], "autorange": False},
        yaxis={"autorange": "reversed"},
    )
    return figure


DAY_MS = 86_400_000


def day_axis(days: Sequence[date]) -> dict:
    """An x axis for values by day: ticks on whole days (or weeks, months), never hours or milliseconds, each label
    drawn whole (the chart's margin grows for one at its edge, rather than the label being left out)."""
    first, last = min(days), max(days)
    span = (last - first).days
    if span <= 14:
        step: int | str = DAY_MS
    elif span <= 120:
        step = 7 * DAY_MS
    else:
        step = "M1"
    pad = timedelta(hours=12)
    return {
        "type": "date",
        "tickformat": "%d %b %Y" if span > 120 else "%d %b",
        "dtick": step,
        # every day's label drawn whole: plotly hides a label that runs past the chart (on a phone, a week's labels
        # lie slanted and the last day's ran past the right edge); drawn, the margin grows to hold it
        "ticklabeloverflow": "allow",
        "automargin": True,
        "range": [
            datetime.combine(first, datetime.min.time()) - pad,
            datetime.combine(last, datetime.min.time()) + pad,
        ],
    }


def count_axis(largest: int) -> dict:
    """An axis for counts of people: whole-number ticks only, from zero."""
    step = max(1, math.ceil(largest / 6))
    return {"tickformat": ",d", "dtick": step, "rangemode": "tozero", "range": [0, max(1, largest) * 1.08]}


def factor_timeline(
    entries: Sequence[JournalEntry],
    describe: Callable[[str], str] | None = None,
    aged: Sequence[tuple[datetime, float]] = (),
) -> go.Figure:
    """Value and confidence of one factor by day of observation (the last state of each day), and ``aged``:
    the current answer's confidence as time wears it down since it was last said (freshness), to today.

    ``describe`` turns a rationale into display text (ids into names) for a hover text that says why; the
    rationale quotes the person, so without it (a manager's read-only view) the chart carries no words at
    all, not even in the figure sent to the browser.  Words are shown as text, never as Plotly markup."""
    timeline = day_ends(entries)
    days = [e.observed_at.date() for e in timeline]
    figure = go.Figure()
    words = (
        {}
        if describe is None
        else {
            "text": [plot(describe(e.change_rationale)) for e in timeline],
            "hovertemplate": "%{x|%d %b %Y}: %{y}<br>%{text}<extra></extra>",
        }
    )
    figure.add_scatter(
        x=days,
        y=[e.value_after for e in timeline],
        mode="lines+markers",
        name="Value",
        line={"shape": "hv", "color": PALETTE["value"]},
        marker={"size": 9},
        **({"hovertemplate": "%{x|%d %b %Y}: %{y}<extra></extra>"} | words),
    )
    figure.add_scatter(
        x=days,
        y=[e.confidence_after * 100 for e in timeline],
        mode="lines+markers",
        name="Confidence %",
        yaxis="y2",
        line={"shape": "hv", "dash": "dot", "color": PALETTE["confidence"]},
    )
    if aged:
        figure.add_scatter(
            x=[at for at, _ in aged],
            y=[confidence * 100 for _, confidence in aged],
            mode="lines",
            name="Confidence as it ages %",
            yaxis="y2",
            line={"color": PALETTE["gap"], "dash": "dash"},
            hovertemplate="%{x|%d %b %Y}: %{y:.0f}%<extra></extra>",
        )
        days = [*days, aged[-1][0].date()]
    figure.update_layout(
        height=320,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        legend={"orientation": "h", "y": 1.12},
        yaxis={"range": [0, 100], "title": "value"},
        yaxis2={"range": [0, 100], "overlaying": "y", "side": "right", "title": "confidence %"},
        xaxis=day_axis(days) if days else {},
    )
    return figure


def with_gaps(days: Sequence[tuple[date, float, float | None]]) -> list[tuple[date, float | None, float | None]]:
    """``days`` (oldest first) with a point of no figures the day after each recorded day the next one does not
    follow: a line drawn through them breaks where no figures were recorded (a day the nightly job did not run)
    instead of joining the days either side as if it had."""
    shown: list[tuple[date, float | None, float | None]] = []
    for index, (day, mapped, confidence) in enumerate(days):
        shown.append((day, mapped, confidence))
        following = days[index + 1][0] if index + 1 < len(days) else None
        if following is not None and following - day > timedelta(days=1):
            shown.append((day + timedelta(days=1), None, None))
    return shown


def progress_over_time(days: Sequence[tuple[date, float, float | None]]) -> go.Figure:
    """The organisation's average mapped % and confidence % per day: (day, mapped 0-1, confidence 0-1, or None
    on a day nobody had assessed anything: a gap in the line, not a 0%), oldest first; days with no figures
    recorded are a gap in both lines (``with_gaps``)."""
    figure = go.Figure()
    points = with_gaps(days)
    x = [d for d, _, _ in points]
    figure.add_scatter(
        x=x,
        y=[None if m is None else m * 100 for _, m, _ in points],
        mode="lines+markers",
        name="Mapped %",
        line={"color": PALETTE["value"]},
    )
    figure.add_scatter(
        x=x,
        y=[None if c is None else c * 100 for _, _, c in points],
        mode="lines+markers",
        name="Confidence %",
        line={"color": PALETTE["confidence"], "dash": "dot"},
    )
    figure.update_layout(
        height=300,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        legend={"orientation": "h", "y": 1.12},
        yaxis={"range": [0, 100], "ticksuffix": "%"},
        xaxis=day_axis(x) if x else {},
    )
    return figure


def tier_distribution(counts: Mapping[str, int]) -> go.Figure:
    """People per decision tier (tier names as labels); the count axis has whole numbers only."""
    figure = go.Figure(
        go.Bar(
            x=list(counts),
            y=list(counts.values()),
            marker_color=PALETTE["value"],
            text=list(counts.values()),
            textposition="auto",
        )
    )
    figure.update_layout(
        height=300,
        margin={"l": 10, "r": 10, "t": 10, "b": 10},
        yaxis={"title": "people", **count_axis(max(counts.values(), default=0))},
    )
    return figure


BUCKET_COLOURS = ["#cbd5e1", "#93c5fd", "#3b82f6", "#1d4ed8", "#1e3a8a"]  # grey for "barely mapped", then blues


def mapped_distribution(
    categories: Sequence[str], buckets: Sequence[str], counts: Sequence[Sequence[int]]
) -> go.Figure:
    """How many people sit in each mapped-% bucket, per category (one stacked bar per category).

    ``counts[i][j]``: people whose category ``i`` is in bucket ``j``.  Readable at any team size.  Each segment
    carries its count (where it fits), so the buckets do not rest on their shade alone; the legend spells out
    their ranges, left to right as they stack.
    """
    figure = go.Figure()
    for j, bucket in enumerate(buckets):
        column = [row[j] for row in counts]
        figure.add_bar(
            y=list(categories),
            x=column,
            orientation="h",
            name=bucket,
            marker_color=BUCKET_COLOURS[j % len(BUCKET_COLOURS)],
            text=[f"{n:,}" if n else "" for n in column],
            textposition="inside",
            insidetextanchor="middle",
            hovertemplate="%{y}: %{x} people mapped " + bucket + "<extra></extra>",
        )
    largest = max((sum(row) for row in counts), default=0)
    figure.update_layout(
        barmode="stack",
        uniformtext={"minsize": 10, "mode": "hide"},  # a count too small to read is left to the table below
        height=110 + 40 * len(categories),
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
        legend={
            "orientation": "h",
            "yanchor": "bottom",
            "y": 1.02,
            "x": 0,
            "title": {"text": "mapped "},
            "traceorder": "normal",
        },
        yaxis={"autorange": "reversed"},
        xaxis={"title": "people", **count_axis(largest)},
    )
    return figure


def held_back(items: Sequence[tuple[str, int]], label: str = "people held back") -> go.Figure:
    """Horizontal bars of (name, people), largest first; whole-number axis."""
    figure = go.Figure(
        go.Bar(
            y=[n for n, _ in items],
            x=[c for _, c in items],
            orientation="h",
            marker_color=PALETTE["gap"],
            text=[c for _, c in items],
            textposition="auto",
        )
    )
    figure.update_layout(
        height=60 + 32 * len(items),
        margin={"l": 10, "r": 10, "t": 10, "b": 10},
        yaxis={"autorange": "reversed"},
        xaxis={"title": label, **count_axis(max((c for _, c in items), default=0))},
    )
    return figure
