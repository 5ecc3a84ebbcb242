"""Organisations: their documents and managers lists, roll-up rows, the figures' shards and daily figures.

The team pages read the figures (one document per figures shard, whatever the number of people) and the rows
a page shows (a query: ``RowQuery``); the nightly job re-ages rows whose time has come, compares the figures
with a sum over the rows and repairs them.  Bulk writes (``put_rows``: benchmarks, tests, the demo) read back
what they wrote and raise when it is not there.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter

from factor_journal.errors import FactorJournalError
from factor_journal.figures import Counters, delta, drift, rebuild
from factor_journal.repositories.client import CountedClient, run_transaction
from factor_journal.repositories.paths import ORGANISATIONS, USERS, Paths
from factor_journal.repositories.rows import move_shard, row_from
from factor_journal.rollup import PersonRow, shard_of
from factor_journal.setaside import SetAside

log = logging.getLogger(__name__)

BATCH_WRITES = 400  # a committed batch of rows and figures (Firestore takes 500 writes per commit)
STREAM_PAGE = 500  # rows read per query while streaming an export


class WriteCheckError(FactorJournalError):
    """A bulk write did not read back as written (``put_rows``)."""


@dataclass(frozen=True)
class RowQuery:
    """Which listed rows, in which order: ``equal`` (field, value) pairs, ``tiers`` (None: any tier; empty:
    nobody), ``prefix`` (a ``rollup.search_key`` the ``name_key`` starts with: '' matches everyone; the order is
    then the name's), ``order``: (field, descending) pairs, the document id last; ``fields``: the row fields
    read (None: all; the others read as their defaults)."""

    equal: tuple[tuple[str, Any], ...] = ()
    tiers: tuple[str, ...] | None = None
    prefix: str = ""
    order: tuple[tuple[str, bool], ...] = (("name_key", False),)
    fields: tuple[str, ...] | None = None

    @property
    def nobody(self) -> bool:
        return self.tiers == ()


@dataclass
class ShardCheck:
    """What the nightly check found in one figures shard: the rows counted and what was added to repair it."""

    shard: str
    rows: int
    repaired: Counters = field(default_factory=dict)


class OrganisationRecords:
    def __init__(self, client: CountedClient) -> None:
        self.client = client
        self.paths = Paths(client)

    def get(self, org_id: str) -> dict[str, Any] | None:
        snapshot = self.paths.organisation(org_id).get()
        return snapshot.to_dict() or {} if snapshot.exists else None

    def upsert(self, org_id: str, fields: dict[str, Any]) -> None:
        self.paths.organisation(org_id).set(fields, merge=True)

    # The figures --------------------------------------------------------------------------------

    def figure_shards(self, org_id: str) -> dict[str, Counters]:
        """Each figures shard's counters (one read per shard document)."""
        return {snapshot.id: _counters(snapshot) for snapshot in self.paths.figures(org_id).stream()}

    def figures(self, org_id: str) -> Counters:
        """The organisation's counters, summed over its shards."""
        total: Counters = {}
        for counters in self.figure_shards(org_id).values():
            for key, value in counters.items():
                total[key] = total.get(key, 0) + value
        return total

    # Rows a page shows --------------------------------------------------------------------------

    def _query(self, org_id: str, query: RowQuery) -> firestore.Query:
        rows: firestore.Query = self.paths.person_rows(org_id).where(filter=FieldFilter("listed", "==", True))
        for name, value in query.equal:
            rows = rows.where(filter=FieldFilter(name, "==", value))
        if query.tiers is not None:
            tiers = list(query.tiers)
            rows = rows.where(
                filter=FieldFilter("tier", "==", tiers[0]) if len(tiers) == 1 else FieldFilter("tier", "in", tiers)
            )
        order = query.order
        if query.prefix:  # a range on the name: ordered by it
            rows = rows.where(filter=FieldFilter("name_key", ">=", query.prefix))
            rows = rows.where(filter=FieldFilter("name_key", "<", query.prefix + "\uf8ff"))
            order = (("name_key", False),)
        for name, descending in order:
            direction = firestore.Query.DESCENDING if descending else firestore.Query.ASCENDING
            rows = rows.order_by(name, direction=direction)
        rows = rows.order_by("__name__")
        return rows.select(list(query.fields)) if query.fields is not None else rows

    def page(
        self,
        org_id: str,
        query: RowQuery,
        limit: int,
        after: dict[str, Any] | None = None,
        offset: int = 0,
        found: list[SetAside] | None = None,
    ) -> list[PersonRow]:
        """Up to ``limit`` rows of ``query`` after the cursor ``after`` (``cursor_of`` a row), else after skipping
        ``offset`` rows (each skipped row is billed as a read).  A row that no longer reads is left out (logged,
        and appended to ``found``)."""
        if query.nobody:
            return []
        rows = self._query(org_id, query)
        if after is not None:
            rows = rows.start_after(after)
        if offset:
            rows = rows.offset(offset)
        return [
            row for snapshot in rows.limit(limit).stream() if (row := row_from(snapshot, org_id, found)) is not None
        ]

    def count(self, org_id: str, query: RowQuery) -> int:
        """How many rows ``query`` selects (a count aggregation: one read per 1,000 rows counted)."""
        if query.nobody:
            return 0
        counted = self._query(org_id, replace(query, fields=None)).count(alias="people")
        return int(counted.get()[0][0].value)  # type: ignore[call-arg,index]

    def stream(self, org_id: str, query: RowQuery, found: list[SetAside] | None = None) -> Iterator[PersonRow]:
        """Every row of ``query`` in its order, read ``STREAM_PAGE`` at a time (an export); a damaged row is left
        out (appended to ``found``) without ending the stream."""
        after: dict[str, Any] | None = None
        while True:
            damaged: list[SetAside] = []
            rows = self.page(org_id, query, STREAM_PAGE, after, found=damaged)
            if found is not None:
                found.extend(damaged)
            yield from rows
            if not rows or len(rows) + len(damaged) < STREAM_PAGE:
                return
            after = cursor_of(rows[-1], query)

    # The nightly job's reads ----------------------------------------------------------------------

    def rows_due(self, org_id: str, now: datetime, limit: int) -> list[str]:
        """Ids of rows whose aged fields change by ``now`` (``next_change``), soonest first."""
        rows = (
            self.paths.person_rows(org_id)
            .where(filter=FieldFilter("next_change", "<=", now))
            .order_by("next_change")
            .select(["next_change"])
            .limit(limit)
        )
        return [snapshot.id for snapshot in rows.stream()]

    def member_page(self, org_id: str, after: str | None, limit: int) -> list[str]:
        """Ids of the organisation's members (profiles naming it) after ``after``, in id order."""
        members = (
            self.client.collection(USERS)
            .where(filter=FieldFilter("org_id", "==", org_id))
            .select([])
            .order_by("__name__")
        )
        if after is not None:
            members = members.start_after({"__name__": after})
        return [snapshot.id for snapshot in members.limit(limit).stream()]

    def rows_not_stamped(self, org_id: str, stamp: str, limit: int) -> list[str]:
        """Ids of rows built with another stamp (``rollup.row_stamp``): left by someone no longer a member, or
        not rebuilt yet."""
        rows = self.paths.person_rows(org_id).where(filter=FieldFilter("stamp", "!=", stamp)).select([])
        return [snapshot.id for snapshot in rows.limit(limit).stream()]

    def drop_legacy_rows(self, org_id: str) -> int:
        """Delete the roll-up shards of the earlier row format (their rows are rebuilt as row documents)."""
        return self.client.recursive_delete(self.paths.legacy_rollup(org_id))

    def check_shard(self, org_id: str, shard: str) -> ShardCheck:
        """Compare a figures shard with the sum of its rows; a difference is repaired (the shard rewritten as the
        sum, in a transaction that reads both again, so a change made meanwhile is never undone) and returned.  A
        row that no longer reads counts as none (logged)."""
        paths = self.paths

        def compared(transaction: firestore.Transaction | None) -> tuple[int, Counters, Counters]:
            stored = _counters(paths.figures_shard(org_id, shard).get(transaction=transaction))
            query = paths.person_rows(org_id).where(filter=FieldFilter("shard", "==", shard))
            rows = [row for snapshot in query.stream(transaction=transaction) if (row := row_from(snapshot, org_id))]
            rebuilt = rebuild(rows)
            return len(rows), rebuilt, drift(stored, rebuilt)

        counted, _, repair = compared(None)  # most nights nothing drifted: no transaction, no lock on anyone's row
        if not repair:
            return ShardCheck(shard=shard, rows=counted)

        @firestore.transactional
        def run(transaction: firestore.Transaction) -> ShardCheck:
            counted, rebuilt, repair = compared(transaction)
            if repair:
                transaction.set(paths.figures_shard(org_id, shard), {"c": rebuilt})
            return ShardCheck(shard=shard, rows=counted, repaired=repair)

        return run_transaction(self.client, run)

    # Daily figures and the list of organisations ------------------------------------------------------

    def write_day(self, org_id: str, date: str, figures: dict[str, Any]) -> None:
        self.paths.organisation(org_id).collection("daily").document(date).set(figures)

    def days(self, org_id: str, limit: int) -> list[dict[str, Any]]:
        """The newest ``limit`` daily figures."""
        query = (
            self.paths.organisation(org_id)
            .collection("daily")
            .order_by("date", direction=firestore.Query.DESCENDING)
            .limit(limit)
        )
        return [snapshot.to_dict() or {} for snapshot in query.stream()]

    def id_page(self, after: str | None, page_size: int) -> list[str]:
        """Organisation ids in id order after ``after``."""
        query = self.client.collection(ORGANISATIONS).select([]).order_by("__name__")
        if after is not None:
            query = query.start_after({"__name__": after})
        return [snapshot.id for snapshot in query.limit(page_size).stream()]

    # Bulk rows ------------------------------------------------------------------------------------------

    def put_rows(self, org_id: str, rows: Sequence[PersonRow]) -> None:
        """Write rows of people not in the organisation's roll-up yet, with their figures, in batches (a batch
        that fails raises); then read back the count of rows and the figures, and raise ``WriteCheckError``
        unless they are what was written.  (A bulk writer that reports nothing once left 59 of 64 shards
        unwritten.)"""
        existing, before = self.count(org_id, RowQuery()), self.figure_shards(org_id)
        moved: dict[str, Counters] = {}
        for start in range(0, len(rows), BATCH_WRITES):
            batch = self.client.batch()
            for row in rows[start : start + BATCH_WRITES]:
                batch.create(self.paths.person_row(org_id, row.user_id), row.to_document())
                counters = moved.setdefault(shard_of(row.user_id), {})
                for key, value in delta(None, row).items():
                    counters[key] = counters.get(key, 0) + value
            batch.commit()
        batch = self.client.batch()
        for shard, change in moved.items():
            move_shard(batch, self.paths, org_id, shard, change)
        batch.commit()
        listed, expected = self.count(org_id, RowQuery()), existing + sum(row.listed for row in rows)
        if listed != expected:
            raise WriteCheckError(f"{org_id}: {listed} listed rows read back, {expected} written")
        after = self.figure_shards(org_id)
        for shard, change in moved.items():
            wanted = dict(before.get(shard, {}))
            for key, value in change.items():
                wanted[key] = wanted.get(key, 0) + value
            missing = drift(after.get(shard, {}), {key: value for key, value in wanted.items() if value})
            if missing:
                raise WriteCheckError(f"{org_id}: figures shard {shard} reads back {len(missing)} counters off")


def cursor_of(row: PersonRow, query: RowQuery) -> dict[str, Any]:
    """Where a page after ``row`` starts, for ``query``'s order."""
    document = row.to_document()
    order = (("name_key", False),) if query.prefix else query.order
    return {**{name: document[name] for name, _ in order}, "__name__": row.user_id}


def _counters(snapshot: firestore.DocumentSnapshot) -> Counters:
    """A figures shard's counters (none when it does not exist or no longer reads as counters)."""
    if not snapshot.exists:
        return {}
    counters = (snapshot.to_dict() or {}).get("c")
    if not isinstance(counters, dict):
        log.warning("figures shard %s no longer reads: counted as empty (the nightly check rewrites it)", snapshot.id)
        return {}
    return {str(k): v for k, v in counters.items() if isinstance(v, int | float) and not isinstance(v, bool) and v}
