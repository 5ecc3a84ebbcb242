"""Capabilities: what can be evaluated now, and the next unlocks with their gaps drawn."""

from __future__ import annotations

import streamlit as st

from dashboard import charts, context, labels
from dashboard.safe_text import md


def render() -> None:
    subject, store, summary = context.open_page("Capabilities")
    capabilities = summary.capabilities
    # a manager reads about the person (read-only), not to them
    st.header(
        f"{md(subject.display_name)} can evaluate now" if subject.read_only else "You can evaluate now", anchor=False
    )
    if not capabilities.can_evaluate:
        st.info("No project type can be evaluated yet. The unlocks below show what is missing.")
    for archetype_id in capabilities.can_evaluate:
        archetype = store.catalog.archetype(archetype_id)
        st.success(f"**{archetype.name}**: {archetype.description}")
    st.header("Next unlocks", anchor=False)
    for rank, capability in enumerate(capabilities.cannot_evaluate_yet, start=1):
        label = (
            f"{rank}. {capability.name} — {capability.met}/{capability.total} prerequisites met, "
            f"{capability.closeness:.0%} of the way"
        )
        with st.expander(label, expanded=rank <= 2):
            st.caption(store.catalog.archetype(capability.archetype_id).description)
            st.plotly_chart(
                charts.capability_gaps(capability),
                width="stretch",
                key=f"gap-{capability.archetype_id}",
                config=charts.PLOT_CONFIG,
            )
            for blocker in capability.blockers:
                now = (
                    "not assessed yet"
                    if blocker.value is None
                    else f"{blocker.value:g} at {blocker.confidence:.0%} confidence"
                )
                st.markdown(
                    f"- **{blocker.factor_name}**: {now}; "
                    f"needs ≥ {blocker.min_value:g} at ≥ {blocker.min_confidence:.0%} "
                    f"({labels.shortfall(blocker.missing)})"
                )
