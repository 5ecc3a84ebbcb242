"""One module per page; each exposes ``render()``.  What several pages draw alike lives here."""

from __future__ import annotations

import streamlit as st


def chart_as_table(rows: list[dict[str, str]]) -> None:
    """A chart's figures as text, in an expander under it ("The chart as a table"): for a screen reader, which
    cannot read a chart, and for anyone who wants the numbers."""
    with st.expander("The chart as a table"):
        st.table(rows, hide_index=True)
