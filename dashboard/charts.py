"""Plotly figures built from domain values (pure: no Streamlit, no Firestore)."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go
from factor_journal.models import AssessmentSummary, BlockedCapability, JournalEntry

PALETTE = {"value": "#2563eb", "confidence": "#f59e0b", "gap": "#ef4444", "met": "#10b981", "muted": "#cbd5e1"}


def category_progress(summary: AssessmentSummary) -> go.Figure:
    """Completeness and average confidence per category, side by side."""
    names = [c.name for c in summary.categories.values()]
    figure = go.Figure()
    figure.add_bar(
        name="Mapped", y=names, x=[c.completeness * 100 for c in summary.categories.values()], orientation="h",
        marker_color=PALETTE["value"], text=[f"{c.factor_count}/{c.total_factors}" for c in summary.categories.values()],
    )  # fmt: skip
    figure.add_bar(
        name="Confidence", y=names, x=[c.avg_confidence * 100 for c in summary.categories.values()], orientation="h",
        marker_color=PALETTE["confidence"],
    )  # fmt: skip
    figure.update_layout(
        barmode="group", height=60 + 55 * len(names), margin={"l": 10, "r": 10, "t": 30, "b": 10},
        xaxis={"range": [0, 100], "ticksuffix": "%"}, legend={"orientation": "h", "y": 1.08}, yaxis={"autorange": "reversed"},
    )  # fmt: skip
    return figure


def capability_gaps(capability: BlockedCapability) -> go.Figure:
    """Each blocking factor's value against the threshold it misses (value bar, threshold marker)."""
    names = [b.factor_name for b in capability.blockers]
    values = [b.value or 0 for b in capability.blockers]
    figure = go.Figure()
    figure.add_bar(
        y=names, x=values, orientation="h", name="Now", marker_color=PALETTE["value"],
        text=["not assessed" if b.value is None else f"{b.value:g} @ {b.confidence:.0%}" for b in capability.blockers],
        textposition="auto",
    )  # fmt: skip
    figure.add_scatter(
        y=names, x=[b.min_value for b in capability.blockers], mode="markers", name="Needed",
        marker={"symbol": "line-ns-open", "size": 26, "line": {"width": 3}, "color": PALETTE["gap"]},
        text=[f"needs {b.min_value:g} @ {b.min_confidence:.0%}" for b in capability.blockers], hoverinfo="text",
    )  # fmt: skip
    figure.update_layout(
        height=50 + 45 * len(names), margin={"l": 10, "r": 10, "t": 10, "b": 10}, showlegend=False,
        xaxis={"range": [0, 100]}, yaxis={"autorange": "reversed"},
    )  # fmt: skip
    return figure


def factor_timeline(entries: Sequence[JournalEntry]) -> go.Figure:
    """Value and confidence of one factor over time; each journal entry a point with its rationale."""
    timeline = sorted((e for e in entries if e.effective), key=lambda e: e.observed_at)
    figure = go.Figure()
    figure.add_scatter(
        x=[e.observed_at for e in timeline], y=[e.value_after for e in timeline], mode="lines+markers",
        name="Value", line={"shape": "hv", "color": PALETTE["value"]},
        text=[e.change_rationale for e in timeline], hovertemplate="%{x|%d %b %Y}: %{y}<br>%{text}<extra></extra>",
    )  # fmt: skip
    figure.add_scatter(
        x=[e.observed_at for e in timeline], y=[e.confidence_after * 100 for e in timeline], mode="lines+markers",
        name="Confidence %", yaxis="y2", line={"shape": "hv", "dash": "dot", "color": PALETTE["confidence"]},
    )  # fmt: skip
    figure.update_layout(
        height=320, margin={"l": 10, "r": 10, "t": 30, "b": 10}, legend={"orientation": "h", "y": 1.12},
        yaxis={"range": [0, 100], "title": "value"},
        yaxis2={"range": [0, 100], "overlaying": "y", "side": "right", "title": "confidence %"},
    )  # fmt: skip
    return figure
