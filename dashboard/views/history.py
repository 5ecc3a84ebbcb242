"""Factor history: one factor's value and confidence over time, every journal entry with its evidence,
and the whole assessment as it stood on a chosen date."""

from __future__ import annotations

from datetime import UTC, datetime, time

import streamlit as st

from dashboard import charts, context, labels
from dashboard.safe_text import quote
from factor_journal import freshness
from factor_journal.conversation import excerpt_as_read
from factor_journal.page_models import (
    COMPUTED,
    EntryEffect,
    answer_status,
    assessed_states,
    entry_effect,
    entry_kind,
    history_factors,
    history_opens_on,
    said_days,
    shown_apart,
    timeline,
)

HISTORY_PAGE = 25
EFFECT_NOTES = {
    EntryEffect.applied: "",
    EntryEffect.held: " · held as a conflict",
    EntryEffect.not_applied: " · recorded, not applied",
}


def render() -> None:
    subject, store, assessment = context.open_fresh_page("Factor history")
    summary = assessment.summary  # confidences as they count today
    touched = history_factors(summary.factors)
    if not touched:
        st.info("No factor has a history yet: histories begin with the first conversation.")
        return
    names = {fid: store.graph.name(fid) for fid in touched}
    every_name = labels.factor_names(store.catalog)

    def humane(text: str) -> str:
        return labels.in_plain_words(text, every_name)

    chosen = history_opens_on(store.catalog, summary.factors, st.query_params.get("factor"))
    options = sorted(touched, key=lambda fid: names[fid])
    if chosen in options and st.session_state.get("history_factor_linked") != chosen:  # an "Inferred from" link
        st.session_state["history_factor_linked"] = st.session_state["history_factor"] = chosen
    factor_id = st.selectbox("Factor", options, format_func=lambda fid: names[fid], key="history_factor")
    if factor_id is None:  # the select box always has a choice; nothing to draw without one
        return
    state = summary.factors[factor_id]
    said = freshness.last_said(store.catalog, summary.factors, factor_id)
    if state.current_value is None:  # withdrawn: no value, so no confidence or standing to speak of
        st.markdown(f"**Now:** not assessed · last changed {labels.day(said)}")
    else:
        shown = f"{labels.amount(state.current_value)} ({labels.band(store.catalog, factor_id, state.current_value)})"
        status = answer_status(store.catalog, factor_id, state)
        status = "computed from its parts" if status == COMPUTED else labels.status_label(status, subject.read_only)
        fresh = assessment.factors.get(factor_id)
        aged = ""
        if fresh is not None and shown_apart(fresh.stored_confidence, fresh.confidence):
            aged = f" ({fresh.stored_confidence:.0%} when said, ageing with a half-life of {fresh.half_life})"
        due = " · **to re-check**" if fresh is not None and fresh.due else ""
        said = fresh.said_at if fresh else said
        st.markdown(
            f"**Now:** {shown} · confidence {state.current_confidence:.0%}{aged} · {status} · "
            f"last said {labels.day(said)}{due}"
        )
    pages = st.session_state.setdefault("history_pages", {})
    shown = pages.get(factor_id, 1)
    entries, cursor = [], None
    for _ in range(shown):  # one page of journal entries per "show older" click
        page = store.history(subject.user_id, factor_id, page_size=HISTORY_PAGE, cursor=cursor)
        entries += page.entries
        cursor = page.next_cursor
        if cursor is None:
            break
    curve = freshness.decay_curve(assessment.stored.factors[factor_id], store.catalog, assessment.at)
    drawn = timeline(said_days(entries), curve)  # one rule: a chart when it spans days, else a sentence
    if drawn.chart:
        describe = None if subject.read_only else humane  # rationales quote the person: theirs alone
        figure = charts.factor_timeline(entries, describe=describe, aged=drawn.ageing)
        st.plotly_chart(figure, width="stretch", config=charts.PLOT_CONFIG)
        if drawn.ageing:  # the caption speaks only of a line the chart draws
            st.caption(
                "The dashed line is how sure the current answer counts as time passes since it was last said; "
                "confirming it or saying it again brings it back."
            )
    elif drawn.one_day is not None:
        st.caption(
            f"Everything below was said on {labels.day(drawn.one_day)}: the chart begins when a second day adds to it."
        )
    for entry in entries:
        before = "—" if entry.previous_value is None else f"{entry.previous_value:g}"
        after = "unassessed" if entry.new_value is None else f"{entry.new_value:g}"
        flags = EFFECT_NOTES[entry_effect(entry)]
        with st.container(border=True):
            kind = labels.kind_label(entry_kind(entry), subject.read_only)
            st.markdown(
                f"**{entry.observed_at:%d %b %Y %H:%M}** · {before} → {after} · "
                f"confidence {entry.confidence:.0%} · {kind}{flags}"
            )
            if not subject.read_only:  # rationales and excerpts quote the person: theirs alone (docs/security.md)
                quote(humane(entry.change_rationale))
                if entry.conversation_excerpt:
                    quote(excerpt_as_read(entry.conversation_excerpt))
            if entry.inferred_from:
                st.caption("Inferred from:")
                for fid in entry.inferred_from:  # in-app navigation: no token in any address
                    st.page_link("screens/history.py", label=store.graph.name(fid), query_params={"factor": fid})
    if cursor is not None and st.button("Show older entries", key="history_older"):
        pages[factor_id] = shown + 1
        st.rerun()

    st.divider()
    st.header("The assessment as of a date", anchor=False)
    day = st.date_input("As of", value=datetime.now(UTC).date(), key="as_of_date")
    if st.button("Show the assessment then", key="as_of_go"):
        moment = datetime.combine(day, time(23, 59, 59), tzinfo=UTC)
        then = context.fresh(store.summary_as_of(subject.user_id, moment), moment).summary  # aged to that date
        st.markdown(
            f"On **{day:%d %b %Y}**: "
            f"{then.overall.total_factors_assessed}/{then.overall.total_factors} factors mapped, "
            f"confidence {then.overall.avg_confidence:.0%}, decision tier **{then.overall.decision_tier_name}**, "
            f"{len(then.capabilities.can_evaluate)} project types evaluable."
        )
        rows = [
            {
                "Factor": store.graph.name(fid),
                "Value": s.current_value,
                "Confidence": f"{s.current_confidence:.0%}",
                "Status": labels.status_label(s.inference_status, subject.read_only),
            }
            for fid, s in assessed_states(then)
        ]
        if rows:
            st.dataframe(rows, hide_index=True, width="stretch")
        else:
            st.write("Nothing had been assessed by then.")
