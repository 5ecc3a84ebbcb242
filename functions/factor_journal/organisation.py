"""Organisations: managers, the team view from roll-up shards, blockers, history and CSV export.

Reading a team costs the organisation document plus its shard documents
(``rollup.ROLLUP_SHARDS``), whatever the number of people; everything else
here is computed in memory from those rows.
"""

from __future__ import annotations

import csv
import io
import logging
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from factor_journal.catalog import Catalog
from factor_journal.errors import FactorJournalError
from factor_journal.errors import UnknownOrganisationError as UnknownOrganisationError
from factor_journal.models import UserProfile
from factor_journal.rollup import (
    ROLLUP_SHARDS,
    PersonRow,
    RowFreshness,
    mean_completeness,
    mean_confidence,
    row_freshness,
)
from factor_journal.setaside import describe
from factor_journal.store import FactorJournalStore

log = logging.getLogger(__name__)

QUIET_AFTER = timedelta(days=7)


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
    shards: int = ROLLUP_SHARDS
    # Counts every change of who is in the organisation (a join, a move away, an erasure, a stray row removed),
    # in the transaction that makes it: a kept copy of the rows is current for its roster number only.
    roster: int = 0


class TeamView(BaseModel):
    """The team at ``at``: tiers and confidence as the aged answers support them (``freshness`` per person,
    from the rows alone), who went quiet and who has answers due for a re-check."""

    organisation: Organisation
    people: list[PersonRow]
    tiers: list[str] = Field(default_factory=list)  # the catalog's decision tier ids, lowest first
    quiet: list[PersonRow]
    freshness: dict[str, RowFreshness] = Field(default_factory=dict)
    at: datetime | None = None

    def fresh(self, row: PersonRow) -> RowFreshness:
        """The person's freshness (rows not assessed at ``at``: as stored)."""
        found = self.freshness.get(row.user_id)
        if found is not None:
            return found
        return RowFreshness(due=0, share=0.0, avg_confidence=row.avg_confidence, decision_tier=row.decision_tier)

    @property
    def stale(self) -> list[PersonRow]:
        """People with at least one answer due for a re-check."""
        return [row for row in self.people if self.fresh(row).due]

    def stale_share(self, people: list[PersonRow] | None = None) -> float | None:
        """Of every answer ``people`` (default: everyone) gave, the share due for a re-check (None: none given)."""
        chosen = self.people if people is None else people
        given = sum(row.assessed for row in chosen)
        return round(sum(self.fresh(row).due for row in chosen) / given, 4) if given else None

    def tier_distribution(self, people: list[PersonRow] | None = None) -> dict[str, int]:
        """How many of the people (default: everyone) each decision tier holds, as their aged answers support it:
        every catalog tier in order (none: 0), then any tier the catalog no longer has, so everyone is counted."""
        counts = Counter(self.fresh(row).decision_tier for row in (self.people if people is None else people))
        return {tier: counts.pop(tier, 0) for tier in self.tiers} | dict(counts)

    def avg_completeness(self, people: list[PersonRow] | None = None) -> float:
        """How much of the catalog the people (default: everyone) have mapped on average."""
        return mean_completeness(self.people if people is None else people)

    def started(self, people: list[PersonRow] | None = None) -> int:
        """How many of the people (default: everyone) have assessed something (whose confidence is averaged)."""
        return sum(row.assessed > 0 for row in (self.people if people is None else people))

    def avg_confidence(self, people: list[PersonRow] | None = None) -> float | None:
        """The aged average confidence of the people (default: everyone) who have assessed something."""
        chosen = [row for row in (self.people if people is None else people) if row.assessed > 0]
        return round(sum(self.fresh(row).avg_confidence for row in chosen) / len(chosen), 4) if chosen else None

    def today(self) -> OrgDay:
        """The team's figures at ``at`` as a day of the organisation's history: the live figures the team page's
        headline shows (everyone's, aged to ``at``), dated ``at``'s (UTC) day."""
        at = (self.at or datetime.now(UTC)).astimezone(UTC)
        return OrgDay(
            date=at.strftime("%Y-%m-%d"),
            people=len(self.people),
            avg_completeness=self.avg_completeness(),
            avg_confidence=self.avg_confidence(),
            tiers={tier: n for tier, n in self.tier_distribution().items() if n},
            stale_share=self.stale_share(),
        )


class BlockerCount(BaseModel):
    archetype_id: str
    name: str
    blocked_people: int
    factors: dict[str, int]  # blocking factor id -> people it blocks


class Blockers(BaseModel):
    archetypes: list[BlockerCount]
    factors: list[tuple[str, int]]  # factor id -> how many (person, capability) pairs it blocks, most first


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


def _aged_row(row: PersonRow, catalog: Catalog, at: datetime) -> dict[str, object]:
    fresh = row_freshness(row, catalog, at)
    return {"avg_confidence": fresh.avg_confidence, "decision_tier": fresh.decision_tier}


def _stale_share(people: list[PersonRow], catalog: Catalog, at: datetime) -> float | None:
    given = sum(row.assessed for row in people)
    return round(sum(row_freshness(row, catalog, at).due for row in people) / given, 4) if given else None


class OrganisationDirectory:
    """Organisations and their managers, team roll-ups and daily history, over the shared store."""

    def __init__(self, store: FactorJournalStore) -> None:
        self.store = store
        self.records = store.organisations

    def create(self, org_id: str, name: str) -> Organisation:
        organisation = Organisation(org_id=org_id, name=name)
        self.records.upsert(org_id, organisation.model_dump(exclude={"managers"}))
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
        for the reminder job, in the same transaction (nothing else of the profile is written)."""
        self.store.set_manager(user_id, org_id, manager=True)

    def remove_manager(self, org_id: str, user_id: str) -> None:
        """Take the organisation away from a manager: off the list (effective at once), role member.
        UnknownOrganisationError when there is no such organisation: nothing is written (no document created)."""
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
        """Every person's row, read from the organisation's shard documents (constant reads).

        A row is derived from the person's profile and summary, so one that no longer reads (a bad write, a hand
        edit) never stops the team page or the nightly figures: it is rewritten from them at once, as the
        person's next change would (a few more reads, for that person only), and a damaged row of someone no
        longer in the organisation is removed.
        """
        people = []
        for user_id, row in self.records.shard_rows(org_id).items():
            try:
                people.append(PersonRow.model_validate(row))
            except ValidationError as damage:
                log.warning(
                    "roll-up row of %s in %s was damaged (%s): rewritten", user_id, org_id, damage.errors()[0]["loc"]
                )
                rebuilt = self._rewritten_row(org_id, user_id, (row, describe(damage)))
                if rebuilt is not None:
                    people.append(rebuilt)
        return sorted(people, key=lambda row: (row.display_name.lower(), row.user_id))

    def _rewritten_row(self, org_id: str, user_id: str, damaged: tuple[Any, str] | None = None) -> PersonRow | None:
        """The member's row rebuilt from their profile and summary, and written back (a ``damaged`` row set aside
        in the same transaction); None for a non-member (whose stray row is removed)."""
        try:
            return self.store.rewrite_row(user_id, org_id, damaged)
        except ValidationError:  # the profile itself no longer reads: nothing to rebuild the row from
            return None

    def team(
        self,
        manager_id: str,
        org_id: str,
        now: datetime | None = None,
        quiet_after: timedelta = QUIET_AFTER,
        load_rows: Callable[[Organisation], list[PersonRow]] | None = None,
    ) -> TeamView:
        """The team page's data for a manager of ``org_id`` (NotAManagerError before anything else is read).

        ``load_rows(organisation)`` gives the organisation's rows when the caller keeps them for a while (the
        app does, for filter reruns): a kept copy must be of the organisation's current ``roster``, so that
        nobody who left is listed and nobody who joined is missing; ``rows(org_id)`` reads them otherwise."""
        self.require_manager(manager_id, org_id)
        organisation = self.get(org_id)
        if organisation is None:
            raise FactorJournalError(f"unknown organisation {org_id!r}")
        rows = load_rows(organisation) if load_rows else self.rows(org_id)
        people = [row for row in rows if row.user_id not in organisation.managers]
        now = now or datetime.now(UTC)
        quiet = [
            row
            for row in people
            if row.completeness < 1.0 and (row.last_active is None or now - row.last_active > quiet_after)
        ]
        catalog = self.store.catalog
        fresh = {row.user_id: row_freshness(row, catalog, now) for row in people}
        tiers = [tier.id for tier in catalog.decision_tiers]
        return TeamView(organisation=organisation, people=people, tiers=tiers, quiet=quiet, freshness=fresh, at=now)

    def in_organisation(self, org_id: str, user_id: str) -> UserProfile | None:
        """The member's profile when they belong to ``org_id`` (a manager's drill-down check)."""
        profile = self.store.get_user(user_id)
        return profile if profile is not None and profile.org_id == org_id else None

    def record_day(self, org_id: str, day: datetime | None = None) -> OrgDay:
        """Write the organisation's figures for a day (``organisations/{org}/daily/{date}``), from the shards.

        The document id is the (UTC) date, so running this again the same day -- a retried or
        duplicated nightly task -- rewrites that day's one figure with fresh numbers, never adds one.
        Raises DamagedOrganisationError, before anything is written, when the organisation's document no longer
        reads (its managers, who are left out of the figures, are not known then).
        """
        day = (day or datetime.now(UTC)).astimezone(UTC)
        organisation = self.get(org_id)
        managers = set(organisation.managers) if organisation else set()
        people = [row for row in self.rows(org_id) if row.user_id not in managers]
        count = len(people)
        aged = [row.model_copy(update=_aged_row(row, self.store.catalog, day)) for row in people]
        figures = OrgDay(
            date=day.strftime("%Y-%m-%d"),
            people=count,
            avg_completeness=mean_completeness(people),
            avg_confidence=mean_confidence(aged),
            tiers=dict(Counter(r.decision_tier for r in aged)),
            stale_share=_stale_share(people, self.store.catalog, day),
        )
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


def _where(damage: ValidationError) -> str:
    """Which field of a document failed to read (its location only: never the value)."""
    first = damage.errors()[0]
    return f"{'.'.join(str(part) for part in first['loc']) or 'document'}: {first['type']}"


def blockers(catalog: Catalog, people: list[PersonRow]) -> Blockers:
    """Across people: which capabilities are blocked most often, and by which factors."""
    by_archetype: dict[str, Counter[str]] = {}
    blocked_people: Counter[str] = Counter()
    by_factor: Counter[str] = Counter()
    for row in people:
        for blocked in row.blocked:
            blocked_people[blocked.archetype_id] += 1
            counts = by_archetype.setdefault(blocked.archetype_id, Counter())
            counts.update(blocked.blockers)
            by_factor.update(blocked.blockers)
    archetypes = [
        BlockerCount(
            archetype_id=aid,
            name=catalog.archetype(aid).name,
            blocked_people=blocked_people[aid],
            factors=dict(by_archetype[aid].most_common()),
        )
        for aid in blocked_people
    ]
    archetypes.sort(key=lambda item: (-item.blocked_people, item.archetype_id))
    return Blockers(archetypes=archetypes, factors=by_factor.most_common())


class TeamFilter(BaseModel):
    """What a manager narrows the team page to: tiers (empty: all), only people gone quiet, only people with
    answers due for a re-check (at least ``min_stale_share`` of their answers), a name search."""

    tiers: frozenset[str] = frozenset()
    quiet_only: bool = False
    stale_only: bool = False
    min_stale_share: float = Field(default=0.0, ge=0, le=1)
    search: str = ""


def filter_people(team: TeamView, chosen: TeamFilter) -> list[PersonRow]:
    """The team's people matching every part of ``chosen`` (case-insensitive name or e-mail search), in team order."""
    needle = chosen.search.strip().casefold()
    quiet = {row.user_id for row in team.quiet} if chosen.quiet_only else set()
    return [
        row
        for row in team.people
        if (not chosen.tiers or team.fresh(row).decision_tier in chosen.tiers)
        and (not chosen.quiet_only or row.user_id in quiet)
        and (not chosen.stale_only or (team.fresh(row).due > 0 and team.fresh(row).share >= chosen.min_stale_share))
        and (not needle or any(needle in text.casefold() for text in (row.display_name, row.email, row.user_id)))
    ]


def _by_name(row: PersonRow) -> str:
    return (row.display_name or row.user_id).casefold()


_NEVER = datetime.min.replace(tzinfo=UTC)
TEAM_SORTS: dict[str, Callable[[PersonRow, TeamView], tuple]] = {
    "Name": lambda row, team: (_by_name(row),),
    "Least mapped first": lambda row, team: (row.completeness, _by_name(row)),
    "Longest quiet first": lambda row, team: (row.last_active is not None, row.last_active or _NEVER),
    "Most unconfirmed first": lambda row, team: (-row.unconfirmed, _by_name(row)),
    "Most to re-check first": lambda row, team: (-team.fresh(row).share, _by_name(row)),
}
"""The orders a manager may sort the team table in, by name (never active counts as the longest quiet)."""


def sort_people(team: TeamView, people: list[PersonRow], order: str) -> list[PersonRow]:
    """``people`` (of ``team``) in the ``TEAM_SORTS`` order named ``order`` (a stable sort)."""
    key = TEAM_SORTS[order]
    return sorted(people, key=lambda row: key(row, team))


MAPPED_BUCKETS = ("0–19%", "20–39%", "40–59%", "60–79%", "80–100%")


def mapped_distribution(catalog: Catalog, people: list[PersonRow]) -> dict[str, list[int]]:
    """Per category id (catalog order): how many people have mapped it to each of ``MAPPED_BUCKETS``."""
    counts = {category.id: [0] * len(MAPPED_BUCKETS) for category in catalog.categories}
    last = len(MAPPED_BUCKETS) - 1
    for row in people:
        for category_id, row_counts in counts.items():
            row_counts[min(last, int(row.categories.get(category_id, 0.0) * 100 + 1e-9) // 20)] += 1
    return counts


def people_held_back(people: list[PersonRow]) -> list[tuple[str, int]]:
    """Blocking factor id -> how many distinct people it holds back from at least one capability, most first;
    among factors holding back as many people, the one blocking the most (person, capability) pairs first
    (``blockers``' measure, the Blockers page's order), then by id."""
    counts: Counter[str] = Counter()
    pairs: Counter[str] = Counter()
    for row in people:
        counts.update({factor for blocked in row.blocked for factor in blocked.blockers})
        pairs.update(factor for blocked in row.blocked for factor in blocked.blockers)
    return sorted(counts.items(), key=lambda item: (-item[1], -pairs[item[0]], item[0]))


def cut_with_ties(items: Sequence[tuple[str, int]], limit: int) -> tuple[list[tuple[str, int]], list[str]]:
    """The first ``limit`` of ``items`` (counts, most first), and the ids left out that count as many as the
    last one kept: a top ten that cuts through a tie says who else stands level with its last bar."""
    shown = list(items[:limit])
    if not shown:
        return [], []
    last = shown[-1][1]
    return shown, [item_id for item_id, count in items[limit:] if count == last]


CSV_COLUMNS = [
    "user_id",
    "display_name",
    "email",
    "completeness",
    "avg_confidence",
    "assessed",
    "total",
    "decision_tier",
    "unconfirmed",
    "conflicts",
    "needs_attention",
    "last_active",
]
FRESHNESS_COLUMNS = ["to_recheck", "to_recheck_share"]


# A spreadsheet evaluates a cell that starts with one of these as a formula (CSV injection).
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _as_cell(value: object) -> object:
    """A text cell that a spreadsheet would read as a formula, as text (a leading apostrophe)."""
    return f"'{value}" if isinstance(value, str) and value.startswith(_FORMULA_START) else value


def team_csv(people: list[PersonRow], team: TeamView | None = None) -> str:
    """The team table as CSV (one row per person, ISO dates, fractions as 0-1); names and addresses are
    data, never formulas, when the file is opened in a spreadsheet.  With the ``team`` they were read for,
    confidence and tier are as the answers count at its moment (aged), with the answers due for a re-check."""
    buffer = io.StringIO()
    columns = CSV_COLUMNS + (FRESHNESS_COLUMNS if team is not None else [])
    writer = csv.DictWriter(buffer, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in people:
        data = row.model_dump()
        if team is not None:
            fresh = team.fresh(row)
            data |= {
                "avg_confidence": fresh.avg_confidence,
                "decision_tier": fresh.decision_tier,
                "to_recheck": fresh.due,
                "to_recheck_share": fresh.share,
            }
        data["last_active"] = row.last_active.isoformat() if row.last_active else ""
        writer.writerow({key: _as_cell(value) for key, value in data.items()})
    return buffer.getvalue()
