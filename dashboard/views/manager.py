"""Manager pages: team progress, blockers across the organisation, and a person's pages read-only.

The headline and charts come from the organisation's figures (one document per figures shard, kept a minute
for reruns), the table from a query for the page shown: a constant number of document reads whatever the size
of the organisation.  The manager is checked against the organisation before anything is read.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, date, datetime
from typing import Any, TypeVar

import pandas as pd
import streamlit as st

from dashboard import charts, context, labels
from dashboard.safe_text import md
from dashboard.views import chart_as_table
from factor_journal.errors import FactorJournalError
from factor_journal.figures import Counters
from factor_journal.organisation import (
    MAPPED_BUCKETS,
    TEAM_SORTS,
    Organisation,
    OrganisationDirectory,
    OrgDay,
    PageCursors,
    RowQuery,
    TeamFilter,
    TeamView,
    blockers,
    cursor_of,
    cut_with_ties,
    progress,
)
from factor_journal.rollup import PersonRow
from factor_journal.team_export import team_csv


def directory() -> OrganisationDirectory:
    return OrganisationDirectory(context.store())


FIGURES_KEPT_SECONDS = 60
T = TypeVar("T")


@st.cache_data(ttl=FIGURES_KEPT_SECONDS, max_entries=64, show_spinner=False)
def _figures(org_id: str, roster: int) -> tuple[datetime, Counters]:
    """The organisation's figures, kept a minute for the filter, sort and paging reruns (data: every run gets its
    own copy).  Kept per roster number: a join, a move away or an erasure changes it (the organisation document
    is read on every run anyway, for the manager check); the figures may be up to a minute old, and the page says
    when they were read."""
    return datetime.now(UTC), directory().figures(org_id)


@st.cache_data(ttl=FIGURES_KEPT_SECONDS, max_entries=512, show_spinner=False)
def _rows(
    org_id: str, read_at: datetime, queries: tuple[RowQuery, ...], order: str, size: int, after: Any, skip: int
) -> list[PersonRow]:
    """A page of rows, kept as long as the figures it is shown with (``read_at``: when they were read): a rerun
    of the same page, by this manager or another, reads nothing again."""
    return directory().read_page(org_id, queries, order, size, after, skip)


@st.cache_data(ttl=FIGURES_KEPT_SECONDS, max_entries=64, show_spinner=False)
def _quiet(org_id: str, read_at: datetime, queries: tuple[RowQuery, ...], size: int) -> list[PersonRow]:
    """The first people gone quiet, by name (whatever the filters), kept as long as the figures."""
    return directory().read_page(org_id, queries, "Name", size)


@st.cache_data(ttl=FIGURES_KEPT_SECONDS, max_entries=64, show_spinner=False)
def _history(org_id: str, read_at: datetime) -> list[OrgDay]:
    """The organisation's daily figures, kept as long as the figures shown with them."""
    return directory().history(org_id)


_READS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="team-reads")


def _ahead(read: Callable[..., T], *args: Any) -> Future[T]:
    """Start a kept read on another thread, so that the page's other reads go on meanwhile (the emulator scans
    a collection for each query: two at once take the time of one on two cores)."""
    return _READS.submit(read, *args)


@st.cache_data(ttl=FIGURES_KEPT_SECONDS, max_entries=128, show_spinner=False)
def _count(org_id: str, read_at: datetime, queries: tuple[RowQuery, ...]) -> int:
    """How many people a name search finds, kept as long as the figures it is shown with."""
    return directory().count(org_id, queries)


def _forget() -> None:
    """Drop every kept figure, page and count (the Refresh button)."""
    for kept in (_figures, _rows, _quiet, _history, _count):
        kept.clear()


def _selected(team: TeamView, chosen: TeamFilter, read_at: datetime) -> int:
    """How many people the filters select: from the figures, or a count of a name search's matches."""
    if not chosen.search.strip():
        return team.selected(chosen)
    return _count(team.organisation.org_id, read_at, directory().queries(team, chosen, "Name"))


def _page(team: TeamView, chosen: TeamFilter, order: str, page: int, size: int, read_at: datetime) -> list:
    """Page ``page`` of the table (kept), read from where this session knows it starts."""
    cursors = _cursors(chosen, order)
    queries = directory().queries(team, chosen, order)
    after, skip = directory().page_start(cursors, page, size)
    rows = _rows(team.organisation.org_id, read_at, queries, order, size, after, skip)
    if rows:
        cursors[page + 1] = cursor_of(rows[-1], queries[0])
    return rows


def _team() -> tuple[TeamView, datetime]:
    """The team view for the signed-in manager and when its figures were read; ``team`` checks the manager
    before the figures are read or reused."""
    viewer = st.session_state["viewer"]
    read_at: list[datetime] = []

    def load_figures(organisation: Organisation) -> Counters:
        at, counters = _figures(organisation.org_id, organisation.roster)
        read_at.append(at)
        return counters

    try:
        return directory().team(viewer.user_id, viewer.org_id, load_figures=load_figures), read_at[0]
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


def _filters(team: TeamView) -> TeamFilter:
    """The filter row: name search, tiers, only those gone quiet, only those with answers to re-check (and how
    large a share of their answers), widget state per browser session."""
    catalog = context.store().catalog
    tier_names = {t.id: t.name for t in catalog.decision_tiers}
    search, tiers = st.columns(2, vertical_alignment="bottom")
    # the toggles on a row of their own: beside the search, a sixth of the width cut 'To re-check (1)' short
    quiet, stale = st.columns(2, vertical_alignment="center")
    text = search.text_input(
        "Search by name", key="team_search", placeholder="Start of a name", help="People whose name starts so"
    )
    chosen = tiers.multiselect(
        "Decision tier",
        list(tier_names),
        format_func=lambda tid: tier_names[tid],
        key="team_tiers",
        placeholder="All tiers",
    )
    quiet_only = quiet.toggle(f"Gone quiet ({team.quiet:,})", key="team_quiet")
    stale_only = stale.toggle(
        f"To re-check ({team.stale:,})",
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


CURSORS_KEPT = 8  # the filter and order combinations whose page starts a session keeps


def _cursors(chosen: TeamFilter, order: str) -> PageCursors:
    """Where the pages of this filter and order start, as far as this browser session has read them."""
    kept: dict = st.session_state.setdefault("team_cursors", {})
    key = (chosen.model_dump_json(), order)
    if key not in kept:
        while len(kept) >= CURSORS_KEPT:
            kept.pop(next(iter(kept)))  # the oldest
        kept[key] = {}
    return kept[key]


def _table(team: TeamView, chosen: TeamFilter, selected: int, read_at: datetime) -> list:
    """The paged, sorted team table (confidence and tier as the aged answers support them); returns the people on
    the page shown."""
    catalog = context.store().catalog
    st.header("People", anchor=False)  # the grid's name, read before it (its count follows it)
    sort_col, page_col = st.columns([2, 1], vertical_alignment="bottom")
    order = sort_col.selectbox("Sort", list(TEAM_SORTS), key="team_sort")
    pages = max(1, -(-selected // TABLE_PAGE))
    page = 1
    if pages > 1:
        page = page_col.number_input(f"Page (of {pages:,})", min_value=1, max_value=pages, step=1, key="team_page")
    page = min(max(1, int(page)), pages)
    order = directory().effective_order(chosen, order)  # a name search lists its names in order
    shown = _page(team, chosen, order, page, TABLE_PAGE, read_at)
    # the figures as text, rounded as the eye reads them: a screen reader reads the grid's data, not its format
    table = pd.DataFrame(labels.team_rows(catalog, shown), columns=labels.TEAM_COLUMNS)
    if not team.figures.attention():
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
    st.caption(f"People {first:,}–{first + len(shown) - 1:,} of {selected:,}, sorted by {order.lower()}.")
    return shown


def team_progress() -> None:
    team, read_at = _team()
    st.title(f"{md(team.organisation.name)}: team progress", anchor=False)
    read_note, refresh = st.columns([4, 1], vertical_alignment="center")
    read_note.caption(f"Figures as of {read_at:%H:%M:%S} UTC.")
    if refresh.button("Refresh", key="team_refresh", icon=":material/refresh:"):
        _forget()
        st.rerun()
    people = team.people
    if not people:
        st.info("Nobody in this organisation has been invited yet.")
        return
    now = datetime.now(UTC)
    figures = team.figures
    attention = figures.attention()
    # two rows of three: five in a row left 'Average confidence' a fifth of a 1024 px window's page, cut short
    columns = [*st.columns(3), *st.columns(3)]
    columns[0].metric("People", f"{people:,}")
    columns[1].metric("Average mapped", f"{team.avg_completeness():.0%}")
    confidence, started = team.avg_confidence(), team.started()
    columns[2].metric(
        "Average confidence",
        "—" if confidence is None else f"{confidence:.0%}",
        help=f"Of the {started:,} people who have assessed something, as their answers count today "
        "(what was said long ago counts for less)",
    )
    columns[3].metric("Gone quiet", f"{team.quiet:,}")
    # a share of answers, named as one: beside it, whose they are (a count of people under a share of answers
    # read as one figure, "6% · 1 person")
    stale_share, stale_people = team.stale_share(), team.stale
    given, due = figures.assessed(), figures.due()
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

    org_id = team.organisation.org_id
    gone_quiet = directory().queries(team, TeamFilter(quiet_only=True), "Name")
    quiet = _ahead(_quiet, org_id, read_at, gone_quiet, QUIET_LISTED) if team.quiet else None
    later = (_ahead(_history, org_id, read_at), quiet)
    chosen = _filters(team)
    selected = _selected(team, chosen, read_at)
    st.caption(
        f"Showing {selected:,} of {people:,} people." if selected != people else f"Showing all {people:,} people."
    )
    if selected:
        _people_shown(team, chosen, selected, read_at)
    else:
        st.info("Nobody matches these filters.")
    _organisation_wide(team, now, read_at, *later)  # whatever the filters: the organisation's trend, who went quiet


def _people_shown(team: TeamView, chosen: TeamFilter, selected: int, read_at: datetime) -> None:
    """What the filters select: the table, the drill-down and export, the tiers, mapping and what holds them back
    (the charts count whom the tier, quiet and re-check filters select; a name search narrows the table)."""
    store = context.store()
    catalog = store.catalog
    shown = _table(team, chosen, selected, read_at)
    searching = bool(chosen.search.strip())
    if chosen.narrows and not searching:
        share = team.stale_share(chosen)
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
        lambda: team_csv(directory().export(team, chosen)),
        file_name=f"{team.organisation.org_id}-team.csv",
        mime="text/csv",
        help="The people matching the filters, every column",
    )
    st.caption(
        "Export (CSV) holds everyone the filters show, every column, figures unrounded (fractions of 1); "
        "the table's own “Download as CSV” holds only this page, as shown."
    )
    if searching:
        st.caption(
            "The charts below count everyone the tier, gone-quiet and re-check filters show; the name search "
            "narrows the table and the export."
        )

    left, right = st.columns(2)
    with left:
        st.header("Decision tiers", anchor=False)
        tiers = {labels.tier_name(catalog, tier): count for tier, count in team.tier_distribution(chosen).items()}
        st.plotly_chart(
            charts.tier_distribution(tiers), width="stretch", key="team_tiers_chart", config=charts.PLOT_CONFIG
        )
        chart_as_table(labels.count_rows(list(tiers.items()), "Decision tier", "People"))
    with right:
        st.header("Mapped by category", anchor=False)
        counts = team.mapped_distribution(chosen)
        names = [catalog.category(c).name for c in counts]
        st.plotly_chart(
            charts.mapped_distribution(names, MAPPED_BUCKETS, list(counts.values())),
            width="stretch",
            key="team_mapped_chart",
            config=charts.PLOT_CONFIG,
        )
        chart_as_table(labels.bucket_rows(names, MAPPED_BUCKETS, list(counts.values())))
    st.header("What holds people back", anchor=False)
    held, level = cut_with_ties(team.held_back(chosen), TOP_FACTORS)
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


def _organisation_wide(
    team: TeamView,
    now: datetime,
    read_at: datetime,
    history: Future[list[OrgDay]],
    quiet: Future[list[PersonRow]] | None,
) -> None:
    """The whole organisation's figures over time and who went quiet (not narrowed by the filters).

    Over time: each earlier day as the nightly roll-up recorded it, and today the live figures the headline
    shows (``organisation.progress``), so the last point never contradicts the figures above it."""
    st.header("Progress over time", anchor=False)
    days = progress(history.result(), team.today())
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
    for person in quiet.result() if quiet is not None else []:
        when = f"last active {labels.ago(person.last_active, now)}" if person.last_active else "not active yet"
        st.markdown(f"- **{md(person.display_name or person.user_id)}**: {person.completeness:.0%} mapped, {when}")
    if team.quiet > QUIET_LISTED:
        st.caption(
            f"… and {team.quiet - QUIET_LISTED:,} more: switch on “Gone quiet” above to list them all in the table."
        )


def organisation_blockers() -> None:
    team, _ = _team()
    store = context.store()
    st.title("Blockers across the organisation", anchor=False)
    found = blockers(store.catalog, team.figures)
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
        st.markdown(f"- **{item.name}** is blocked for {item.blocked_people:,} of {team.people:,}: {factors}")
