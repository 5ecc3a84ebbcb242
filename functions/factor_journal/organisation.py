"""Organisations: managers, the team view from roll-up shards, blockers, history and CSV export.

Reading a team costs the organisation document plus its shard documents
(``rollup.ROLLUP_SHARDS``), whatever the number of people; everything else
here is computed in memory from those rows.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from datetime import UTC, datetime, timedelta

from google.cloud import firestore
from pydantic import BaseModel, Field

from factor_journal.catalog import Catalog
from factor_journal.errors import FactorJournalError, UnknownUserError
from factor_journal.models import UserProfile
from factor_journal.rollup import ROLLUP_SHARDS, PersonRow
from factor_journal.store import FactorJournalStore

QUIET_AFTER = timedelta(days=7)


class NotAManagerError(FactorJournalError):
    def __init__(self, user_id: str, org_id: str) -> None:
        super().__init__(f"{user_id!r} does not manage organisation {org_id!r}")


class Organisation(BaseModel):
    org_id: str
    name: str
    managers: list[str] = Field(default_factory=list)
    shards: int = ROLLUP_SHARDS


class TeamView(BaseModel):
    organisation: Organisation
    people: list[PersonRow]
    tier_distribution: dict[str, int]
    quiet: list[PersonRow]


class BlockerCount(BaseModel):
    archetype_id: str
    name: str
    blocked_people: int
    factors: dict[str, int]  # blocking factor id -> people it blocks


class Blockers(BaseModel):
    archetypes: list[BlockerCount]
    factors: list[tuple[str, int]]  # factor id -> how many (person, capability) pairs it blocks, most first


class OrgDay(BaseModel):
    date: str
    people: int
    avg_completeness: float
    avg_confidence: float
    tiers: dict[str, int]


class OrganisationDirectory:
    """Organisations and their managers, team roll-ups and daily history, over the shared store."""

    def __init__(self, store: FactorJournalStore) -> None:
        self.store = store
        self.client: firestore.Client = store.client

    def create(self, org_id: str, name: str) -> Organisation:
        organisation = Organisation(org_id=org_id, name=name)
        self.store.org_ref(org_id).set(organisation.model_dump(exclude={"managers"}), merge=True)
        self.store.stats.writes += 1
        return self.get(org_id)  # type: ignore[return-value]

    def get(self, org_id: str) -> Organisation | None:
        snapshot = self.store.org_ref(org_id).get()
        self.store.stats.reads += 1
        return Organisation.model_validate({"org_id": org_id, **snapshot.to_dict()}) if snapshot.exists else None

    def assign_manager(self, org_id: str, user_id: str) -> None:
        """Make a registered member of the organisation its manager (profile role + organisation list)."""
        profile = self.store.get_user(user_id)
        if profile is None:
            raise UnknownUserError(user_id)
        if profile.org_id != org_id:
            raise FactorJournalError(f"{user_id!r} belongs to {profile.org_id!r}, not {org_id!r}")
        self.store.register_user(profile.model_copy(update={"role": "manager"}))
        self.store.org_ref(org_id).set({"managers": firestore.ArrayUnion([user_id])}, merge=True)
        self.store.stats.writes += 1

    def require_manager(self, manager_id: str, org_id: str) -> UserProfile:
        """The manager's profile, or NotAManagerError: enforced before any team data is read."""
        profile = self.store.get_user(manager_id)
        if profile is None or profile.role != "manager" or profile.org_id != org_id:
            raise NotAManagerError(manager_id, org_id)
        return profile

    def rows(self, org_id: str) -> list[PersonRow]:
        """Every person's row, read from the organisation's shard documents (constant reads)."""
        snapshots = list(self.store.org_ref(org_id).collection("rollup").stream())
        self.store.stats.reads += max(1, len(snapshots))
        people = [
            PersonRow.model_validate(row)
            for snapshot in snapshots
            for row in (snapshot.to_dict() or {}).get("rows", {}).values()
        ]
        return sorted(people, key=lambda row: (row.display_name.lower(), row.user_id))

    def team(self, manager_id: str, org_id: str, now: datetime | None = None, quiet_after: timedelta = QUIET_AFTER) -> TeamView:
        """The team page's data for a manager of ``org_id``."""
        self.require_manager(manager_id, org_id)
        organisation = self.get(org_id)
        if organisation is None:
            raise FactorJournalError(f"unknown organisation {org_id!r}")
        people = [row for row in self.rows(org_id) if row.user_id not in organisation.managers]
        now = now or datetime.now(UTC)
        quiet = [
            row for row in people
            if row.completeness < 1.0 and (row.last_active is None or now - row.last_active > quiet_after)
        ]  # fmt: skip
        tiers = Counter(row.decision_tier for row in people)
        ordered = {tier.id: tiers.get(tier.id, 0) for tier in self.store.catalog.decision_tiers}
        return TeamView(organisation=organisation, people=people, tier_distribution=ordered, quiet=quiet)

    def in_organisation(self, org_id: str, user_id: str) -> UserProfile | None:
        """The member's profile when they belong to ``org_id`` (a manager's drill-down check)."""
        profile = self.store.get_user(user_id)
        return profile if profile is not None and profile.org_id == org_id else None

    def record_day(self, org_id: str, day: datetime | None = None) -> OrgDay:
        """Write the organisation's figures for a day (``organisations/{org}/daily/{date}``), from the shards.

        The document id is the (UTC) date, so running this again the same day -- a retried or
        duplicated nightly task -- rewrites that day's one figure with fresh numbers, never adds one.
        """
        day = (day or datetime.now(UTC)).astimezone(UTC)
        organisation = self.get(org_id)
        managers = set(organisation.managers) if organisation else set()
        people = [row for row in self.rows(org_id) if row.user_id not in managers]
        count = len(people)
        figures = OrgDay(
            date=day.strftime("%Y-%m-%d"),
            people=count,
            avg_completeness=round(sum(r.completeness for r in people) / count, 4) if count else 0.0,
            avg_confidence=round(sum(r.avg_confidence for r in people) / count, 4) if count else 0.0,
            tiers=dict(Counter(r.decision_tier for r in people)),
        )
        self.store.org_ref(org_id).collection("daily").document(figures.date).set(figures.model_dump())
        self.store.stats.writes += 1
        return figures

    def history(self, org_id: str, days: int = 90) -> list[OrgDay]:
        """The organisation's daily figures, oldest first (at most ``days`` documents)."""
        query = (
            self.store.org_ref(org_id).collection("daily")
            .order_by("date", direction=firestore.Query.DESCENDING).limit(days)
        )  # fmt: skip
        snapshots = list(query.stream())
        self.store.stats.reads += max(1, len(snapshots))
        return sorted((OrgDay.model_validate(s.to_dict()) for s in snapshots), key=lambda d: d.date)

    def organisation_page(self, after: str | None = None, page_size: int = 100) -> tuple[list[str], str | None]:
        """Organisation ids in id order after ``after`` (a cursor), and the cursor of the next page.

        A full page returns its last id as the next cursor (the next page may be empty); a
        short page returns None: every organisation is listed once, however many there are.
        """
        query = self.client.collection("organisations").select([]).order_by("__name__")
        if after is not None:
            query = query.start_after({"__name__": after})
        snapshots = list(query.limit(page_size).stream())
        self.store.stats.reads += max(1, len(snapshots))
        ids = [snapshot.id for snapshot in snapshots]
        return ids, (ids[-1] if len(ids) == page_size else None)

    def organisation_ids(self) -> list[str]:
        """Every organisation id, read page by page."""
        ids, after = self.organisation_page()
        while after is not None:
            more, after = self.organisation_page(after)
            ids.extend(more)
        return ids


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
            archetype_id=aid, name=catalog.archetype(aid).name, blocked_people=blocked_people[aid],
            factors=dict(by_archetype[aid].most_common()),
        )  # fmt: skip
        for aid in blocked_people
    ]
    archetypes.sort(key=lambda item: (-item.blocked_people, item.archetype_id))
    return Blockers(archetypes=archetypes, factors=by_factor.most_common())


CSV_COLUMNS = ["user_id", "display_name", "email", "completeness", "avg_confidence", "assessed", "total",
               "decision_tier", "unconfirmed", "conflicts", "last_active"]  # fmt: skip


def team_csv(people: list[PersonRow]) -> str:
    """The team table as CSV (one row per person, ISO dates, fractions as 0-1)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in people:
        data = row.model_dump()
        data["last_active"] = row.last_active.isoformat() if row.last_active else ""
        writer.writerow(data)
    return buffer.getvalue()
