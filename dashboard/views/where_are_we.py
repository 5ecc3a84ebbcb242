"""Where are we: progress, tier, what unlocks the next one, where we were, what to discuss next.

Reads only the precomputed summary document (one read per view).
"""

from __future__ import annotations

import streamlit as st
from factor_journal.guidance import next_best_questions, next_tier_statement

from dashboard import charts, context
from dashboard.safe_text import md, quote


def render() -> None:
    subject, store, summary = context.open_page("Where are we")
    overall = summary.overall
    if overall.total_factors_assessed == 0:
        st.info(
            "Nothing has been assessed yet. Start the conversation and this page will fill in as you talk: "
            "what we know, how sure we are, and which AI projects you can evaluate."
        )
    columns = st.columns(4)
    columns[0].metric("Mapped", f"{overall.completeness:.0%}", f"{overall.total_factors_assessed}/{overall.total_factors} factors", delta_color="off", delta_arrow="off")
    columns[1].metric("Confidence", f"{overall.avg_confidence:.0%}")
    columns[2].metric("Decision tier", overall.decision_tier_name, overall.decision_budget, delta_color="off", delta_arrow="off")
    columns[3].metric("Can evaluate", len(summary.capabilities.can_evaluate), "project types", delta_color="off", delta_arrow="off")
    st.progress(min(1.0, overall.completeness))
    st.markdown(f"**Next decision tier.** {next_tier_statement(summary)}")

    left, right = st.columns([3, 2])
    with left:
        st.subheader("Progress by category")
        st.plotly_chart(charts.category_progress(summary), width="stretch")
    with right:
        st.subheader("Where we were")
        last = summary.last_conversation
        if last is None:
            st.write("We have not talked yet.")
        else:
            with st.container(border=True):
                st.markdown(f"**{md(last.topic)}** · {last.timestamp:%d %b %Y}")
                if not subject.read_only:  # the excerpt is the person's own words (README, Security)
                    quote(last.excerpt)
        st.subheader("Next best questions")
        suggestions = next_best_questions(store.catalog, store.graph, summary)
        if not suggestions:
            st.write("Every factor is assessed with good confidence.")
        for suggestion in suggestions:
            st.markdown(f"- **{suggestion.question}**  \n  _{suggestion.factor_name}: {suggestion.reason}_")
        if summary.unconfirmed_inferences and not subject.read_only:
            st.caption(f"{len(summary.unconfirmed_inferences)} inferences wait for your review on the Review page.")
