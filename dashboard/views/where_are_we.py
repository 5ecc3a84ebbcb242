"""Where are we: progress, tier, what unlocks the next one, where we were, what to discuss next.

Reads only the precomputed summary document (one read per view).
"""

from __future__ import annotations

import streamlit as st

from dashboard import charts, context, labels
from dashboard.safe_text import md, quote
from factor_journal.guidance import next_best_questions, next_tier_statement
from factor_journal.models import AssessmentSummary


def render() -> None:
    subject, store, summary = context.open_page("Where are we")
    overall = summary.overall
    if overall.total_factors_assessed == 0:
        st.info(
            "Nothing has been assessed yet. Start the conversation and this page will fill in as you talk: "
            "what we know, how sure we are, and which AI projects you can evaluate."
        )
    columns = st.columns(4)
    columns[0].metric(
        "Mapped",
        f"{overall.completeness:.0%}",
        f"{overall.total_factors_assessed}/{overall.total_factors} factors",
        delta_color="off",
        delta_arrow="off",
    )
    columns[1].metric("Confidence", f"{overall.avg_confidence:.0%}")
    columns[2].metric(
        "Decision tier", overall.decision_tier_name, overall.decision_budget, delta_color="off", delta_arrow="off"
    )
    columns[3].metric(
        "Can evaluate", len(summary.capabilities.can_evaluate), "project types", delta_color="off", delta_arrow="off"
    )
    st.progress(min(1.0, overall.completeness))
    st.markdown(f"**Next decision tier.** {next_tier_statement(summary)}")
    what_we_know(store.catalog, summary, read_only=subject.read_only)  # the answer to "what do you make of us?"

    left, right = st.columns([3, 2])
    with left:
        st.subheader("Progress by category")
        st.plotly_chart(charts.category_progress(summary), width="stretch", config=charts.PLOT_CONFIG)
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


def what_we_know(catalog, summary: AssessmentSummary, read_only: bool) -> None:
    """Every assessed factor by category: name, band and value, confidence, who stands behind it, when said.

    From the summary alone (no further reads); the unconfirmed ones are one click from Review."""
    st.subheader("What we know")
    assessed = {fid: state for fid, state in summary.factors.items() if state.is_assessed}
    if not assessed:
        st.write("Nothing yet: what you tell us in the conversation will be listed here, factor by factor.")
        return
    by_status: dict[str, int] = {}
    for fid, state in assessed.items():
        label = "computed" if catalog.factor(fid).is_composite else labels.status_label(state.inference_status)
        by_status[label] = by_status.get(label, 0) + 1
    order = ["unconfirmed", "confirmed", "yours", "computed"]
    st.caption(
        f"{len(assessed)} factor{'s' if len(assessed) != 1 else ''} assessed: "
        + ", ".join(f"{by_status[s]} {s}" for s in order if s in by_status)
        + ". Unconfirmed means the assistant read it from the conversation and you have not checked it yet."
    )
    unconfirmed = len(summary.unconfirmed_inferences)
    if unconfirmed and not read_only:
        st.page_link("screens/review.py", label=f"Review the {unconfirmed} unconfirmed", icon=":material/task_alt:")
    groups = [
        (category, sorted((catalog.factor(fid).name, fid) for fid, s in assessed.items() if s.category == category.id))
        for category in catalog.categories
    ]
    groups = [(category, factors) for category, factors in groups if factors]
    columns = st.columns(2)
    for index, (category, factors) in enumerate(groups):
        lines = []
        for name, fid in factors:
            state = assessed[fid]
            composite = catalog.factor(fid).composite
            value = state.current_value or 0.0
            if composite:  # computed when its parts change: it was "said" when its latest part was
                parts = [summary.factors[c] for c in composite if c in summary.factors]
                said = max((p.observed_at for p in parts if p.is_assessed and p.observed_at), default=None)
                status = "computed"
            else:
                said, status = state.observed_at, labels.status_label(state.inference_status)
            lines.append(
                f"- **{name}**: {labels.band(catalog, fid, value)} ({labels.amount(value)}) · "
                f"{state.current_confidence:.0%} sure · {status} · said {labels.day(said)}"
            )
        with columns[index % 2]:
            st.markdown(f"**{category.name}** · {len(factors)} of "
                        f"{sum(1 for f in catalog.factors if f.category == category.id)} assessed")  # fmt: skip
            st.markdown("\n".join(lines))
