"""Manager pages: team progress, blockers across the organisation, and a person's pages read-only.

Team data comes from the organisation's roll-up shards: a constant number of
document reads whatever the size of the organisation.  The manager is checked
against the organisation before anything is read.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
import streamlit as st
from factor_journal.errors import FactorJournalError
from factor_journal.organisation import OrganisationDirectory, blockers, team_csv

from dashboard import context
from dashboard.safe_text import md


def directory() -> OrganisationDirectory:
    return OrganisationDirectory(context.store())


def _team():
    viewer = st.session_state["viewer"]
    try:
        return directory().team(viewer.user_id, viewer.org_id)
    except FactorJournalError as error:
        st.error(str(error))
        st.stop()


def team_progress() -> None:
    team = _team()
    store = context.store()
    st.title(f"{team.organisation.name}: team progress")
    people = team.people
    if not people:
        st.info("Nobody in this organisation has been invited yet.")
        return
    now = datetime.now(UTC)
    columns = st.columns(4)
    columns[0].metric("People", len(people))
    columns[1].metric("Average mapped", f"{sum(p.completeness for p in people) / len(people):.0%}")
    columns[2].metric("Average confidence", f"{sum(p.avg_confidence for p in people) / len(people):.0%}")
    columns[3].metric("Gone quiet", len(team.quiet))

    table = pd.DataFrame(
        [
            {
                "Person": p.display_name or p.user_id,
                "Mapped": p.completeness * 100,
                "Confidence": p.avg_confidence * 100,
                "Tier": p.decision_tier.replace("_", " "),
                "Unconfirmed": p.unconfirmed,
                "Last active": p.last_active,
                "user_id": p.user_id,
            }
            for p in people
        ]
    )
    st.dataframe(
        table.drop(columns=["user_id"]),
        hide_index=True,
        width="stretch",
        column_config={
            "Mapped": st.column_config.ProgressColumn(format="%.0f%%", min_value=0, max_value=100),
            "Confidence": st.column_config.ProgressColumn(format="%.0f%%", min_value=0, max_value=100),
            "Last active": st.column_config.DatetimeColumn(format="D MMM YYYY"),
        },
    )
    st.download_button("Export the team table (CSV)", team_csv(people), file_name=f"{team.organisation.org_id}-team.csv", mime="text/csv")

    chosen = st.selectbox(
        "Open a person's pages (read-only)", [None, *[p.user_id for p in people]],
        format_func=lambda uid: "—" if uid is None else next(p.display_name or uid for p in people if p.user_id == uid),
        key="drill_choice",
    )  # fmt: skip
    if chosen and st.button("Open", key="drill_open"):
        st.session_state["drill_user"] = chosen
        st.switch_page("screens/overview.py")

    left, right = st.columns(2)
    with left:
        st.subheader("Decision tiers")
        tiers = {k.replace("_", " "): v for k, v in team.tier_distribution.items()}
        st.plotly_chart(px.bar(x=list(tiers), y=list(tiers.values()), labels={"x": "", "y": "people"}), width="stretch")
    with right:
        st.subheader("Mapped by category")
        categories = [c.id for c in store.catalog.categories]
        heat = go.Figure(
            go.Heatmap(
                z=[[p.categories.get(c, 0) * 100 for c in categories] for p in people],
                x=[store.catalog.category(c).name for c in categories],
                y=[p.display_name or p.user_id for p in people],
                zmin=0, zmax=100, colorscale="Blues", colorbar={"ticksuffix": "%"},
            )  # fmt: skip
        )
        heat.update_layout(height=120 + 22 * len(people), margin={"l": 10, "r": 10, "t": 10, "b": 10})
        st.plotly_chart(heat, width="stretch")

    st.subheader("Progress over time")
    days = directory().history(team.organisation.org_id)
    if days:
        trend = pd.DataFrame([{"date": d.date, "Mapped": d.avg_completeness * 100, "Confidence": d.avg_confidence * 100} for d in days])
        st.plotly_chart(px.line(trend, x="date", y=["Mapped", "Confidence"], markers=True), width="stretch")
    else:
        st.caption("Daily figures start with the first nightly roll-up.")

    st.subheader("Gone quiet")
    if not team.quiet:
        st.write("Everyone with an open assessment has been active this week.")
    for person in team.quiet:
        since = "never active" if person.last_active is None else f"last active {(now - person.last_active).days} days ago"
        st.markdown(f"- **{md(person.display_name or person.user_id)}**: {person.completeness:.0%} mapped, {since}")


def organisation_blockers() -> None:
    team = _team()
    store = context.store()
    st.title("Blockers across the organisation")
    found = blockers(store.catalog, team.people)
    if not found.archetypes:
        st.info("No capability is blocked for anyone yet — or nobody has been assessed.")
        return
    st.subheader("Invest here first")
    top = found.factors[:10]
    st.plotly_chart(
        px.bar(x=[n for _, n in top], y=[store.graph.name(f) for f, _ in top], orientation="h",
               labels={"x": "blocked (person × capability)", "y": ""}).update_yaxes(autorange="reversed"),
        width="stretch",
    )  # fmt: skip
    for item in found.archetypes:
        factors = ", ".join(f"{store.graph.name(f)} ({n})" for f, n in list(item.factors.items())[:4])
        st.markdown(f"- **{item.name}** is blocked for {item.blocked_people} of {len(team.people)}: {factors}")
