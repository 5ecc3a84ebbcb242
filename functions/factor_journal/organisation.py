"""Organisations: managers, the team view from the figures, the team table a page at a time, history, CSV.

A team page reads the organisation document, its figures (one document per figures shard: ``figures``) and the
rows it shows (a query over the roll-up rows, ``organisations/{org}/people``): nothing grows with the number
of people but a count of people matching a name search (one read per 1,000 of them).
"""

from __future__ import annotations

import heapq
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, Field, ValidationError, field_validator

from factor_journal.catalog import Catalog
from factor_journal.errors import FactorJournalError
from factor_journal.errors import UnknownOrganisationError as UnknownOrganisationError
from factor_journal.figures import MAPPED_BUCKETS as MAPPED_BUCKETS
from factor_journal.figures import Counters, OrgFigures, TeamChoice
from factor_journal.models import UserProfile
from factor_journal.repositories.organisations import RowQuery as RowQuery
from factor_journal.repositories.organisations import cursor_of as cursor_of
from factor_journal.rollup import BAND_FIELDS, STALE_BANDS, PersonRow, band_of, row_stamp, search_key
from factor_journal.rollup import QUIET_AFTER as QUIET_AFTER
from factor_journal.setaside import SetAside
from factor_journal.store import FactorJournalStore

log = logging.getLogger(__name__)

MAX_CELLS_PER_QUERY = 30  # Firestore's limit on the values of one ``in`` filter (here: tiers)
# what the table, the gone-quiet list and the export read of a row (not its answers' ages, search terms, ...)
TABLE_FIELDS = (
    *("user_id", "display_name", "email", "completeness", "avg_confidence", "assessed", "total", "decision_tier"),
    *("unconfirmed", "conflicts", "needs_attention", "last_active", "tier", "due", "due_share", "aged_confidence"),
    *("quiet", "band", "due_any", "due_quarter", "due_half", "cell", "name_key", "listed"),
)


class NotAManagerError(FactorJournalError):
    def __init__(self, user_id: str, org_id: str) -> None:
        super().__init__(f"{user_id!r} does not manage organisation {org_id!r}")


class DamagedOrganisationError(FactorJournalError):
    """The organisation's document exists but no longer reads as an organisation (a bad write, a hand edit: no
    name, a managers list that is not a list); ``reason`` says which field, without any of its content."""

    def __init__(self, org_id: str, reason: str) -> None:
        super().__init__(f"organisation {org_id!r} is damaged ({reason}): its document needs mending")
        self.org_id, self.reason = org_id, reason


class Organisation(BaseModel):
    org_id: str
    name: str
    managers: list[str] = Field(default_factory=list)
    # Counts every change of who is in the organisation (a join, a move away, an erasure, a stray row removed),
    # in the transaction that makes it: a kept copy of the figures is current for its roster number only.
    roster: int = 0
    rows_stamp: str = ""  # the ``rollup.row_stamp`` every row was last rebuilt for (``upkeep``)


class OrgDay(BaseModel):
    """An organisation's figures for a day, as the answers counted that day (aged: see ``freshness``)."""

    date: str
    people: int
    avg_completeness: float
    avg_confidence: float | None  # of the people who had assessed something (None: nobody had)
    tiers: dict[str, int]
    stale_share: float | None = None  # of every answer given, the share due for a re-check (None: none given)


def progress(history: Sequence[OrgDay], today: OrgDay) -> list[OrgDay]:
    """The organisation's figures over time as the team page draws them, oldest first: each earlier day as the
    nightly roll-up recorded it, then ``today`` (``TeamView.today``, the live figures of the page's headline) in
    place of any figure recorded earlier today, which would contradict the headline beside it."""
    return [day for day in history if day.date < today.date] + [today]


class TeamFilter(BaseModel):
    """What a manager narrows the team page to: tiers (empty: all), only people gone quiet, only people with
    answers due for a re-check (at least ``min_stale_share`` of their answers: 0 or a cut of
    ``rollup.STALE_BANDS``, the shares the rows are counted by), a name search."""

    tiers: frozenset[str] = frozenset()
    quiet_only: bool = False
    stale_only: bool = False
    min_stale_share: float = 0.0
    search: str = ""

    @field_validator("min_stale_share")
    @classmethod
    def _a_band(cls, share: float) -> float:
        if share not in (0.0, *STALE_BANDS):
            raise ValueError(f"a share to re-check is one of {(0.0, *STALE_BANDS)}, got {share}")
        return share

    @property
    def choice(self) -> TeamChoice:
        """The cells the tier, quiet and re-check filters select (the search aside)."""
        band = band_of(1, self.min_stale_share) if self.stale_only else 0
        return TeamChoice(tiers=self.tiers, quiet_only=self.quiet_only, min_band=band)

    @property
    def narrows(self) -> bool:
        return bool(self.tiers or self.quiet_only or self.stale_only or search_key(self.search))


@dataclass
class TeamView:
    """The team's figures at ``at`` (``figures.OrgFigures``): tiers and re-checks as the rows were last aged,
    the average confidence aged to ``at``."""

    organisation: Organisation
    figures: OrgFigures
    at: datetime

    def cells(self, chosen: TeamFilter | None = None) -> list[str] | None:
        return None if chosen is None else self.figures.choose(chosen.choice)

    @property
    def people(self) -> int:
        return self.figures.people()

    @property
    def quiet(self) -> int:
        return self.figures.quiet()

    @property
    def stale(self) -> int:
        """People with at least one answer due for a re-check."""
        return self.figures.stale_people()

    def selected(self, chosen: TeamFilter | None = None) -> int:
        """People the filter's tiers, quiet and re-check select (the name search aside)."""
        return self.figures.people(self.cells(chosen))

    def stale_share(self, chosen: TeamFilter | None = None) -> float | None:
        return self.figures.stale_share(self.cells(chosen))

    def tier_distribution(self, chosen: TeamFilter | None = None) -> dict[str, int]:
        return self.figures.tier_distribution(self.cells(chosen))

    def mapped_distribution(self, chosen: TeamFilter | None = None) -> dict[str, list[int]]:
        return self.figures.mapped_distribution(self.cells(chosen))

    def held_back(self, chosen: TeamFilter | None = None) -> list[tuple[str, int]]:
        return self.figures.held_back(self.cells(chosen))

    def avg_completeness(self) -> float:
        return self.figures.avg_completeness()

    def started(self) -> int:
        return self.figures.started()

    def avg_confidence(self) -> float | None:
        return self.figures.avg_confidence(self.at)

    def today(self) -> OrgDay:
        """The team's figures at ``at`` as a day of the organisation's history (the headline's live figures)."""
        return day_of(self.figures, self.at)


def day_of(figures: OrgFigures, at: datetime) -> OrgDay:
    """The figures as a day of the organisation's history, dated ``at``'s (UTC) day."""
    at = at.astimezone(UTC)
    return OrgDay(
        date=at.strftime("%Y-%m-%d"),
        people=figures.people(),
        avg_completeness=figures.avg_completeness(),
        avg_confidence=figures.avg_confidence(at),
        tiers={tier: n for tier, n in figures.tier_distribution().items() if n},
        stale_share=figures.stale_share(),
    )


class BlockerCount(BaseModel):
    archetype_id: str
    name: str
    blocked_people: int
    factors: dict[str, int]  # blocking factor id -> people it blocks


class Blockers(BaseModel):
    archetypes: list[BlockerCount]
    factors: list[tuple[str, int]]  # factor id -> how many (person, capability) pairs it blocks, most first


def blockers(catalog: Catalog, figures: OrgFigures) -> Blockers:
    """Across people: which capabilities are blocked most often, and by which factors."""
    people, by_archetype, factors = figures.blocked()
    archetypes = [
        BlockerCount(
            archetype_id=aid,
            name=_archetype_name(catalog, aid),
            blocked_people=count,
            factors=dict(sorted(by_archetype.get(aid, {}).items(), key=lambda item: (-item[1], item[0]))),
        )
        for aid, count in people.items()
    ]
    archetypes.sort(key=lambda item: (-item.blocked_people, item.archetype_id))
    return Blockers(archetypes=archetypes, factors=factors)


def _archetype_name(catalog: Catalog, archetype_id: str) -> str:
    """The capability's name (its id for one the catalog no longer has)."""
    try:
        return catalog.archetype(archetype_id).name
    except KeyError:
        return archetype_id


def cut_with_ties(items: Sequence[tuple[str, int]], limit: int) -> tuple[list[tuple[str, int]], list[str]]:
    """The first ``limit`` of ``items`` (counts, most first), and the ids left out that count as many as the
    last one kept: a top ten that cuts through a tie says who else stands level with its last bar."""
    shown = list(items[:limit])
    if not shown:
        return [], []
    last = shown[-1][1]
    return shown, [item_id for item_id, count in items[limit:] if count == last]


TEAM_SORTS: dict[str, tuple[tuple[str, bool], ...]] = {
    "Name": (("name_key", False),),
    "Least mapped first": (("completeness", False), ("name_key", False)),
    "Longest quiet first": (("last_active", False), ("name_key", False)),
    "Most unconfirmed first": (("unconfirmed", True), ("name_key", False)),
    "Most to re-check first": (("due_share", True), ("name_key", False)),
}
"""The orders a manager may sort the team table in, by name: the rows' fields, (name, descending), then the
person's id (never active counts as the longest quiet: Firestore orders no time first)."""


class _Reversed:
    """Orders a value the other way round (a descending field in a merge of queries)."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __lt__(self, other: _Reversed) -> bool:
        return bool(other.value < self.value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Reversed) and self.value == other.value


def sort_key(order: str) -> Callable[[PersonRow], tuple]:
    """The ``TEAM_SORTS`` order named ``order`` as a sort key over rows (as Firestore orders them)."""
    fields = TEAM_SORTS[order]

    def key(row: PersonRow) -> tuple:
        values: list[Any] = []
        for name, descending in fields:
            value = getattr(row, name)
            comparable = (value is not None, value) if name == "last_active" else value
            values.append(_Reversed(comparable) if descending else comparable)
        return (*values, row.user_id)

    return key


def sort_people(rows: Iterable[PersonRow], order: str) -> list[PersonRow]:
    """``rows`` in the ``TEAM_SORTS`` order named ``order``."""
    return sorted(rows, key=sort_key(order))


@dataclass
class TablePage:
    """One page of the team table: its rows, the people the filters select, the page shown and how many."""

    rows: list[PersonRow]
    total: int
    page: int
    pages: int


PageCursors = dict[int, dict[str, Any]]  # page number -> where it starts (kept by the caller between views)


def _where(damage: ValidationError) -> str:
    """Which field of a document failed to read (its location only: never the value)."""
    first = damage.errors()[0]
    return f"{'.'.join(str(part) for part in first['loc']) or 'document'}: {first['type']}"


class OrganisationDirectory:
    """Organisations and their managers, team figures and rows, daily history, over the shared store."""

    def __init__(self, store: FactorJournalStore) -> None:
        self.store = store
        self.records = store.organisations

    def create(self, org_id: str, name: str) -> Organisation:
        """Create the organisation (or rename it); a new one's rows are all built for the catalog in use."""
        fields = Organisation(org_id=org_id, name=name).model_dump(exclude={"managers", "rows_stamp"})
        if self.records.get(org_id) is None:
            fields["rows_stamp"] = row_stamp(self.store.catalog)
        self.records.upsert(org_id, fields)
        return self.get(org_id)  # type: ignore[return-value]

    def get(self, org_id: str) -> Organisation | None:
        """The organisation, or None when it does not exist; DamagedOrganisationError when its document no longer
        reads as one (nothing guessed: its name and managers list are not derived from anything)."""
        data = self.records.get(org_id)
        if data is None:
            return None
        try:
            return Organisation.model_validate({"org_id": org_id, **data})
        except ValidationError as damage:
            raise DamagedOrganisationError(org_id, _where(damage)) from None

    def assign_manager(self, org_id: str, user_id: str) -> None:
        """Make a registered member of the organisation its manager (UnknownOrganisationError when there is no
        such organisation: nothing is written).

        ``organisations/{org}.managers`` is what makes a manager (the rules, sign-in and
        ``require_manager`` read only it); the profile's ``role`` follows it for display and
        for the reminder job, and the manager's own row leaves the team's figures, in the same transaction."""
        self.store.set_manager(user_id, org_id, manager=True)

    def remove_manager(self, org_id: str, user_id: str) -> None:
        """Take the organisation away from a manager: off the list (effective at once), role member, their row
        counted with the team's again.  UnknownOrganisationError when there is no such organisation: nothing is
        written (no document created)."""
        self.store.set_manager(user_id, org_id, manager=False)

    def require_manager(self, manager_id: str, org_id: str | None) -> UserProfile:
        """The manager's profile, or NotAManagerError: enforced before any team data is read.

        A manager is whoever ``organisations/{org_id}.managers`` lists (two reads: the list and
        the profile); a profile's ``role`` alone makes nobody a manager."""
        if not org_id:
            raise NotAManagerError(manager_id, str(org_id))
        organisation = self.get(org_id)
        if organisation is None or manager_id not in organisation.managers:
            raise NotAManagerError(manager_id, org_id)
        profile = self.store.get_user(manager_id)
        if profile is None:
            raise NotAManagerError(manager_id, org_id)
        return profile

    def rows(self, org_id: str) -> list[PersonRow]:
        """Every listed row of the organisation, by name (reads grow with the people: tests, the demo); a damaged
        row is mended first (``_mending``)."""
        return self._mending(org_id, lambda found: list(self.records.stream(org_id, RowQuery(), found)))

    def figures(self, org_id: str) -> Counters:
        """The organisation's counters (one read per figures shard)."""
        return self.records.figures(org_id)

    def _mending(self, org_id: str, read: Callable[[list[SetAside] | None], list[PersonRow]]) -> list[PersonRow]:
        """The rows ``read`` returns (it appends the damaged rows it meets to the list it is given).  A row never
        stops the team page: the people whose rows were damaged are rewritten from their profiles and summaries
        (each rewrite sets the stored row aside in its transaction; a stray row of a non-member is removed), and
        the rows are read once more."""
        found: list[SetAside] = []
        rows = read(found)
        for user_id in sorted({record.user_id for record in found}):
            try:
                self.store.rewrite_row(user_id, org_id)
            except ValidationError:  # the profile itself no longer reads: nothing to rebuild the row from
                log.warning("roll-up row of %s in %s: the profile does not read, row left out", user_id, org_id)
        return read(None) if found else rows

    def team(
        self,
        manager_id: str,
        org_id: str,
        now: datetime | None = None,
        load_figures: Callable[[Organisation], Counters] | None = None,
    ) -> TeamView:
        """The team page's figures for a manager of ``org_id`` (NotAManagerError before anything else is read).

        ``load_figures(organisation)`` gives the counters when the caller keeps them for a while (the app does,
        for filter reruns): a kept copy must be of the organisation's current ``roster``."""
        self.require_manager(manager_id, org_id)
        organisation = self.get(org_id)
        if organisation is None:
            raise FactorJournalError(f"unknown organisation {org_id!r}")
        counters = load_figures(organisation) if load_figures else self.figures(org_id)
        return TeamView(organisation, OrgFigures(counters, self.store.catalog), (now or datetime.now(UTC)))

    def queries(self, team: TeamView, chosen: TeamFilter, order: str) -> tuple[RowQuery, ...]:
        """The queries whose rows, merged in ``order``, are the people ``chosen`` selects: equalities on the
        rows' flags (one query; a name search reads a range of names, in the name's order)."""
        equal: list[tuple[str, Any]] = [("quiet", True)] if chosen.quiet_only else []
        band = chosen.choice.min_band
        if band:
            equal.append((BAND_FIELDS[band - 1], True))
        tiers = None
        if chosen.tiers:
            present = {tier for tier, n in team.figures.tier_distribution().items() if n}
            tiers = tuple(sorted(chosen.tiers & present)) if not present <= chosen.tiers else None
        prefix = search_key(chosen.search)
        sorting = TEAM_SORTS["Name" if prefix else order]
        chunks: list[tuple[str, ...] | None] = [None]
        if tiers:
            chunks = [tiers[i : i + MAX_CELLS_PER_QUERY] for i in range(0, len(tiers), MAX_CELLS_PER_QUERY)]
        elif tiers is not None:
            chunks = [()]
        return tuple(
            RowQuery(equal=tuple(equal), tiers=chunk, prefix=prefix, order=sorting, fields=TABLE_FIELDS)
            for chunk in chunks
        )

    def read_page(
        self,
        org_id: str,
        queries: Sequence[RowQuery],
        order: str,
        limit: int,
        after: dict[str, Any] | None = None,
        skip: int = 0,
    ) -> list[PersonRow]:
        """Up to ``limit`` rows of ``queries`` (merged in ``order``) after the cursor ``after``, skipping ``skip``
        rows first (each a read).  A row found damaged is mended and the page read again (``_mending``)."""
        return self._mending(org_id, lambda found: self._read_page(org_id, queries, order, limit, after, skip, found))

    def _read_page(
        self,
        org_id: str,
        queries: Sequence[RowQuery],
        order: str,
        limit: int,
        after: dict[str, Any] | None,
        skip: int,
        found: list[SetAside] | None = None,
    ) -> list[PersonRow]:
        if len(queries) == 1:
            return self.records.page(org_id, queries[0], limit, after, skip, found)
        parts = [self.records.page(org_id, query, skip + limit, after, found=found) for query in queries]
        return list(heapq.merge(*parts, key=sort_key(order)))[skip : skip + limit]

    def count(self, org_id: str, queries: Sequence[RowQuery]) -> int:
        """How many people ``queries`` select (count aggregations: a read per 1,000 of them)."""
        return sum(self.records.count(org_id, query) for query in queries)

    def selected(self, team: TeamView, chosen: TeamFilter) -> int:
        """How many people ``chosen`` selects: from the figures, or a count of the name search's matches."""
        if not search_key(chosen.search):
            return team.selected(chosen)
        return self.count(team.organisation.org_id, self.queries(team, chosen, "Name"))

    @staticmethod
    def page_start(cursors: PageCursors, page: int, page_size: int) -> tuple[dict[str, Any] | None, int]:
        """Where page ``page`` is read from: the cursor of the nearest page at or before it that ``cursors``
        knows (None: the first page), and how many rows to skip after it."""
        known = max((p for p in cursors if p <= page), default=1)
        return cursors.get(known), (page - known) * page_size

    def table_page(
        self,
        team: TeamView,
        chosen: TeamFilter,
        order: str,
        page: int,
        page_size: int,
        cursors: PageCursors | None = None,
        total: int | None = None,
    ) -> TablePage:
        """Page ``page`` (1-based, kept within the pages there are) of the people ``chosen`` selects, in the
        ``TEAM_SORTS`` order ``order``: read from where the page starts when ``cursors`` knows it (a previous or
        next page), else after skipping the rows before it from the nearest page known (each skipped row a read);
        ``cursors`` learns where the next page starts."""
        total = self.selected(team, chosen) if total is None else total
        pages = max(1, -(-total // page_size))
        page = min(max(1, page), pages)
        cursors = {} if cursors is None else cursors
        after, skip = self.page_start(cursors, page, page_size)
        order = self.effective_order(chosen, order)
        queries = self.queries(team, chosen, order)
        rows = self.read_page(team.organisation.org_id, queries, order, page_size, after, skip) if total else []
        if rows:
            cursors[page + 1] = cursor_of(rows[-1], queries[0])
        return TablePage(rows=rows, total=total, page=page, pages=pages)

    def quiet_people(self, team: TeamView, limit: int) -> list[PersonRow]:
        """The first ``limit`` people gone quiet, by name."""
        chosen = TeamFilter(quiet_only=True)
        return self.table_page(team, chosen, "Name", 1, limit, total=team.quiet).rows

    def effective_order(self, chosen: TeamFilter, order: str) -> str:
        """The order the table is in: a name search reads a range of names, in the name's order."""
        return "Name" if search_key(chosen.search) else order

    def export(self, team: TeamView, chosen: TeamFilter, order: str = "Name") -> Iterator[PersonRow]:
        """Every person ``chosen`` selects, in ``order``, read a page of rows at a time."""
        org_id, order = team.organisation.org_id, self.effective_order(chosen, order)
        streams = [self.records.stream(org_id, query) for query in self.queries(team, chosen, order)]
        return iter(streams[0]) if len(streams) == 1 else heapq.merge(*streams, key=sort_key(order))

    def in_organisation(self, org_id: str, user_id: str) -> UserProfile | None:
        """The member's profile when they belong to ``org_id`` (a manager's drill-down check)."""
        profile = self.store.get_user(user_id)
        return profile if profile is not None and profile.org_id == org_id else None

    def record_day(self, org_id: str, day: datetime | None = None) -> OrgDay:
        """Write the organisation's figures for a day (``organisations/{org}/daily/{date}``), from its figures
        (aged as its rows were last aged: the nightly job re-ages them first).

        The document id is the (UTC) date, so running this again the same day -- a retried or
        duplicated nightly task -- rewrites that day's one figure with fresh numbers, never adds one.
        Raises DamagedOrganisationError, before anything is written, when the organisation's document no longer
        reads.
        """
        day = (day or datetime.now(UTC)).astimezone(UTC)
        self.get(org_id)
        figures = day_of(OrgFigures(self.figures(org_id), self.store.catalog), day)
        self.records.write_day(org_id, figures.date, figures.model_dump())
        return figures

    def history(self, org_id: str, days: int = 90) -> list[OrgDay]:
        """The organisation's daily figures, oldest first (at most ``days`` documents); a day's figures that no
        longer read are left out (a gap in the chart, as for a day the nightly job did not run)."""
        figures = []
        for document in self.records.days(org_id, days):
            try:
                figures.append(OrgDay.model_validate(document))
            except ValidationError as damage:
                log.warning(
                    "daily figures %s of %s were damaged (%s): left out",
                    document.get("date"),
                    org_id,
                    damage.errors()[0]["loc"],
                )
        return sorted(figures, key=lambda d: d.date)

    def organisation_page(self, after: str | None = None, page_size: int = 100) -> tuple[list[str], str | None]:
        """Organisation ids in id order after ``after`` (a cursor), and the cursor of the next page.

        A full page returns its last id as the next cursor (the next page may be empty); a
        short page returns None: every organisation is listed once, however many there are.
        """
        ids = self.records.id_page(after, page_size)
        return ids, (ids[-1] if len(ids) == page_size else None)

    def organisation_ids(self) -> list[str]:
        """Every organisation id, read page by page."""
        ids, after = self.organisation_page()
        while after is not None:
            more, after = self.organisation_page(after)
            ids.extend(more)
        return ids
