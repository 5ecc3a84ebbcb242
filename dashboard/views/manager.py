"""Manager pages: team progress, blockers across the organisation, and a person's pages read-only.

Team data comes from the organisation's roll-up shards: a constant number of
document reads whatever the size of the organisation.  The manager is checked
against the organisation before anything is read.
"""

from __future__ import annotations

from datetime import UTC, date, datetime

import pandas as pd
import streamlit as st

from dashboard import charts, context, labels
from dashboard.safe_text import md
from dashboard.views import chart_as_table
from factor_journal.errors import FactorJournalError
from factor_journal.organisation import (
    MAPPED_BUCKETS,
    TEAM_SORTS,
    Organisation,
    OrganisationDirectory,
    TeamFilter,
    blockers,
    cut_with_ties,
    filter_people,
    mapped_distribution,
    people_held_back,
    progress,
    sort_people,
    team_csv,
)
from factor_journal.rollup import PersonRow


def directory() -> OrganisationDirectory:
    return OrganisationDirectory(context.store())


ROWS_KEPT_SECONDS = 60


@st.cache_data(ttl=ROWS_KEPT_SECONDS, max_entries=64, show_spinner="Reading the team's figures…")
def _rows(org_id: str, roster: int) -> tuple[datetime, list[PersonRow]]:
    """The organisation's roll-up rows, kept a minute for the filter, sort and paging reruns (data: every run
    gets its own copy, so nothing a run does to them reaches another session).

    Kept per roster number: a join, a move away or an erasure changes it, so who is listed is always current
    (the organisation document is read on every run anyway, for the manager check); the figures in the
    rows may be up to a minute old, and the page says when they were read."""
    return datetime.now(UTC), directory().rows(org_id)


def _team():
    """The team view for the signed-in manager and when its rows were read; ``team`` checks the manager
    before the rows are read or reused."""
    viewer = st.session_state["viewer"]
    read_at: list[datetime] = []

    def load_rows(organisation: Organisation) -> list[PersonRow]:
        at, rows = _rows(organisation.org_id, organisation.roster)
        read_at.append(at)
        return rows

    try:
        return directory().team(viewer.user_id, viewer.org_id, load_rows=load_rows), read_at[0]
    except FactorJournalError as error:
        st.error(str(error))
        st.stop()


TABLE_PAGE = 25
TOP_FACTORS = 10  # bars in the blocking-factor charts (with a sentence naming the others tied with the last)
QUIET_LISTED = 15
# The sideways cue above the team table, hidden where the table's frame holds its whole width (WIDTH, in px).
NARROW_ONLY = """
<style>
.st-key-team-table { container-type: inline-size; }
@container (min-width: WIDTHpx) { .st-key-team-narrow-cue { display: none; } }
</style>
"""
STALE_SHARES = {0.0: "any", 0.25: "a quarter or more", 0.5: "half or more"}


def _filters(team) -> TeamFilter:
    """The filter row: name search, tiers, only those gone quiet, only those with answers to re-check (and how
    large a share of their answers), widget state per browser session."""
    catalog = context.store().catalog
    tier_names = {t.id: t.name for t in catalog.decision_tiers}
    search, tiers = st.columns(2, vertical_alignment="bottom")
    # the toggles on a row of their own: beside the search, a sixth of the width cut 'To re-check (1)' short
    quiet, stale = st.columns(2, vertical_alignment="center")
    text = search.text_input("Search by name", key="team_search", placeholder="Name or e-mail")
    chosen = tiers.multiselect(
        "Decision tier",
        list(tier_names),
        format_func=lambda tid: tier_names[tid],
        key="team_tiers",
        placeholder="All tiers",
    )
    quiet_only = quiet.toggle(f"Gone quiet ({len(team.quiet)})", key="team_quiet")
    stale_only = stale.toggle(
        f"To re-check ({len(team.stale)})",
        key="team_stale",
        help="People with answers said so long ago that they are due for a re-check",
    )
    share = 0.0
    if stale_only:
        share = st.radio(
            "Share of their answers to re-check",
            list(STALE_SHARES),
            format_func=STALE_SHARES.get,
            horizontal=True,
            key="team_stale_share",
        )
    return TeamFilter(
        tiers=frozenset(chosen), quiet_only=quiet_only, stale_only=stale_only, min_stale_share=share, search=text
    )


def _table(team, people: list, now: datetime) -> list:
    """The paged, sorted team table (confidence and tier as the aged answers support them today); returns the
    people on the page shown."""
    catalog = context.store().catalog
    st.header("People", anchor=False)  # the grid's name, read before it (its count follows it)
    sort_col, page_col = st.columns([2, 1], vertical_alignment="bottom")
    order = sort_col.selectbox("Sort", list(TEAM_SORTS), key="team_sort")
    ordered = sort_people(team, people, order)
    pages = max(1, -(-len(ordered) // TABLE_PAGE))
    page = 1
    if pages > 1:
        page = page_col.number_input(f"Page (of {pages})", min_value=1, max_value=pages, step=1, key="team_page")
    page = min(int(page), pages)
    shown = ordered[(page - 1) * TABLE_PAGE : page * TABLE_PAGE]
    # the figures as text, rounded as the eye reads them: a screen reader reads the grid's data, not its format
    table = pd.DataFrame(labels.team_rows(team, catalog, shown), columns=labels.TEAM_COLUMNS)
    if not any(p.needs_attention for p in people):
        table = table.drop(columns=["Needs attention"])
    # Where the grid is wider than the page (a phone shows three columns and cuts the fourth, a laptop with the
    # sidebar open cuts the last): a cue above it names the columns a swipe away, shown only then (a container
    # query against the table's estimated width), and each person's name stays in place while the figures scroll.
    st.html(NARROW_ONLY.replace("WIDTH", str(labels.table_width(table))))
    with st.container(key="team-table"):
        with st.container(key="team-narrow-cue"):
            st.caption(labels.sideways_cue(list(table.columns)))
        st.dataframe(
            table,
            hide_index=True,
            width="stretch",
            alt=f"People, sorted by {order.lower()}",
            column_config={
                "Person": st.column_config.TextColumn(pinned=True),
                "To re-check": st.column_config.TextColumn(help="Share of their answers due for a re-check"),
            },
        )
    first = (page - 1) * TABLE_PAGE + 1 if shown else 0
    st.caption(f"People {first:,}–{first + len(shown) - 1:,} of {len(ordered):,}, sorted by {order.lower()}.")
    return shown


def team_progress() -> None:
    team, read_at = _team()
    st.title(f"{md(team.organisation.name)}: team progress", anchor=False)
    read_note, refresh = st.columns([4, 1], vertical_alignment="center")
    read_note.caption(f"Figures as of {read_at:%H:%M:%S} UTC.")
    if refresh.button("Refresh", key="team_refresh", icon=":material/refresh:"):
        _rows.clear()
        st.rerun()
    people = team.people
    if not people:
        st.info("Nobody in this organisation has been invited yet.")
        return
    now = datetime.now(UTC)
    attention = sum(p.needs_attention for p in people)
    # two rows of three: five in a row left 'Average confidence' a fifth of a 1024 px window's page, cut short
    columns = [*st.columns(3), *st.columns(3)]
    columns[0].metric("People", f"{len(people):,}")
    columns[1].metric("Average mapped", f"{team.avg_completeness():.0%}")
    confidence, started = team.avg_confidence(), team.started()
    columns[2].metric(
        "Average confidence",
        "—" if confidence is None else f"{confidence:.0%}",
        help=f"Of the {started:,} people who have assessed something, as their answers count today "
        "(what was said long ago counts for less)",
    )
    columns[3].metric("Gone quiet", f"{len(team.quiet):,}")
    # a share of answers, named as one: beside it, whose they are (a count of people under a share of answers
    # read as one figure, "6% · 1 person")
    stale_share, stale_people = team.stale_share(), len(team.stale)
    given, due = sum(p.assessed for p in people), sum(team.fresh(p).due for p in people)
    whose = labels.count(stale_people, "person", "people")
    columns[4].metric(
        "Answers to re-check",
        "—" if stale_share is None else f"{stale_share:.0%}",
        f"from {whose}" if stale_people else None,
        delta_color="off",
        delta_arrow="off",
        help=f"Of the {given:,} answers given in the organisation, {due:,} were said so long ago that they are due "
        f"for a re-check" + (f", from {whose} (“To re-check” below lists them)" if stale_people else ""),
    )
    if attention:
        columns[5].metric(
            "Answers needing attention", f"{attention:,}", help="Answers whose analysis failed after retries"
        )

    chosen = _filters(team)
    selected = filter_people(team, chosen)
    st.caption(
        f"Showing {len(selected):,} of {len(people):,} people."
        if len(selected) != len(people)
        else f"Showing all {len(people):,} people."
    )
    if selected:
        _people_shown(team, people, selected, now)
    else:
        st.info("Nobody matches these filters.")
    _organisation_wide(team, now, read_at)  # whoever the filters show: the organisation's own trend and who went quiet


def _people_shown(team, people: list, selected: list, now: datetime) -> None:
    """What the filters select: the table, the drill-down and export, the tiers, mapping and what holds them back."""
    store = context.store()
    catalog = store.catalog
    shown = _table(team, selected, now)
    if len(selected) != len(people):
        share = team.stale_share(selected)
        if share is not None:
            st.caption(f"Of the answers of the people shown, {share:.0%} are due for a re-check.")
    pick, export = st.columns([3, 1], vertical_alignment="bottom")
    shown_names = {p.user_id: p.display_name or p.user_id for p in shown}
    with pick:
        member = st.selectbox(
            "Open a person's pages (read-only)",
            [p.user_id for p in shown],
            index=None,
            placeholder="Choose someone on this page",
            format_func=lambda uid: shown_names[uid],
            key="drill_choice",
        )
        # named for the person: Streamlit's dropdown toggles are all named "Open" too
        if member and st.button(labels.open_pages_label(md(shown_names[member])), key="drill_open"):
            st.session_state["drill_user"] = member
            st.switch_page("screens/overview.py")
    export.download_button(
        "Export (CSV)",
        lambda: team_csv(selected, team),
        file_name=f"{team.organisation.org_id}-team.csv",
        mime="text/csv",
        help="The people matching the filters, every column",
    )
    st.caption(
        "Export (CSV) holds everyone the filters show, every column, figures unrounded (fractions of 1); "
        "the table's own “Download as CSV” holds only this page, as shown."
    )

    left, right = st.columns(2)
    with left:
        st.header("Decision tiers", anchor=False)
        tiers = {labels.tier_name(catalog, tier): count for tier, count in team.tier_distribution(selected).items()}
        st.plotly_chart(
            charts.tier_distribution(tiers), width="stretch", key="team_tiers_chart", config=charts.PLOT_CONFIG
        )
        chart_as_table(labels.count_rows(list(tiers.items()), "Decision tier", "People"))
    with right:
        st.header("Mapped by category", anchor=False)
        counts = mapped_distribution(catalog, selected)
        names = [catalog.category(c).name for c in counts]
        st.plotly_chart(
            charts.mapped_distribution(names, MAPPED_BUCKETS, list(counts.values())),
            width="stretch",
            key="team_mapped_chart",
            config=charts.PLOT_CONFIG,
        )
        chart_as_table(labels.bucket_rows(names, MAPPED_BUCKETS, list(counts.values())))
    st.header("What holds people back", anchor=False)
    held, level = cut_with_ties(people_held_back(selected), TOP_FACTORS)
    if held:
        st.caption(
            "How many of the people shown each factor keeps from evaluating at least one kind of AI project, each "
            "person counted once. Blockers counts each kind of project a factor blocks for them, so its order "
            "can differ."
        )
        named = [(store.graph.name(f), n) for f, n in held]
        st.plotly_chart(charts.held_back(named), width="stretch", key="team_held_chart", config=charts.PLOT_CONFIG)
        if level:
            st.caption(labels.tied_note([store.graph.name(f) for f in level], held[-1][1]))
        chart_as_table(labels.count_rows(named, "Factor", "People held back"))
    else:
        st.write("No capability is blocked for anyone shown.")


def _organisation_wide(team, now: datetime, read_at: datetime) -> None:
    """The whole organisation's figures over time and who went quiet (not narrowed by the filters).

    Over time: each earlier day as the nightly roll-up recorded it, and today the live figures the headline
    shows (``organisation.progress``), so the last point never contradicts the figures above it."""
    st.header("Progress over time", anchor=False)
    days = progress(directory().history(team.organisation.org_id), team.today())
    if len(days) > 1:
        series = [(date.fromisoformat(d.date), d.avg_completeness, d.avg_confidence) for d in days]
        st.plotly_chart(
            charts.progress_over_time(series), width="stretch", key="team_trend_chart", config=charts.PLOT_CONFIG
        )
        st.caption(
            "Averages of everyone in the organisation. Earlier days: as the nightly roll-up recorded them that "
            f"day. Today: the live figures above, as of {read_at:%H:%M} UTC."
        )
        chart_as_table(labels.progress_rows(days, read_at))
    else:
        live = days[0]
        confidence = "no confidence yet" if live.avg_confidence is None else f"confidence {live.avg_confidence:.0%}"
        st.write(
            f"{labels.today_label(read_at)}: {live.avg_completeness:.0%} mapped on average, {confidence}, "
            f"{labels.count(live.people, 'person', 'people')}. The chart starts once the nightly "
            "roll-up has recorded a day before today."
        )

    st.header("Gone quiet", anchor=False)
    if not team.quiet:
        st.write("Everyone with an open assessment has been active this week.")
    for person in team.quiet[:QUIET_LISTED]:
        when = f"last active {labels.ago(person.last_active, now)}" if person.last_active else "not active yet"
        st.markdown(f"- **{md(person.display_name or person.user_id)}**: {person.completeness:.0%} mapped, {when}")
    if len(team.quiet) > QUIET_LISTED:
        st.caption(
            f"… and {len(team.quiet) - QUIET_LISTED:,} more: switch on “Gone quiet” above "
            "to list them all in the table."
        )


def organisation_blockers() -> None:
    team, _ = _team()
    store = context.store()
    st.title("Blockers across the organisation", anchor=False)
    found = blockers(store.catalog, team.people)
    if not found.archetypes:
        st.info("No capability is blocked for anyone yet — or nobody has been assessed.")
        return
    st.header("Invest here first", anchor=False)
    top, level = cut_with_ties(found.factors, TOP_FACTORS)
    st.caption(
        "How many times each factor blocks a person from a kind of AI project (person × project type): a factor "
        "that blocks one person from three kinds counts 3. Team progress counts people instead (each once), so "
        "its order can differ."
    )
    top_named = [(store.graph.name(f), n) for f, n in top]
    st.plotly_chart(
        charts.held_back(top_named, label="blocked (person × project type)"), width="stretch", config=charts.PLOT_CONFIG
    )
    if level:
        st.caption(labels.tied_note([store.graph.name(f) for f in level], top[-1][1], times=True))
    chart_as_table(labels.count_rows(top_named, "Factor", "Blocked (person × project type)"))
    for item in found.archetypes:
        factors = ", ".join(f"{store.graph.name(f)} ({n})" for f, n in list(item.factors.items())[:4])
        st.markdown(f"- **{item.name}** is blocked for {item.blocked_people:,} of {len(team.people):,}: {factors}")
