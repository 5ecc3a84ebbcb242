"""Roll-up rows rewritten and aged from the person, one transaction each (the nightly job, the team page's
mending of a damaged row, the rebuild after a catalog change).

Promises: a row is written from the person's profile and summary as they stand in the same transaction, with
the figures moved by exactly what changed (``rows.put_row``), so a concurrent change, move or opt-out is never
undone; a row of someone no longer a member is removed with its share; a damaged row is set aside, never lost.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from google.cloud import firestore

from factor_journal.models import UserProfile
from factor_journal.repositories.changes import roster_changed, write_row
from factor_journal.repositories.client import Repository, run_transaction
from factor_journal.repositories.journal import JournalReads
from factor_journal.repositories.paths import SUMMARY_FIELD
from factor_journal.repositories.rows import put_row, read_row, row_from
from factor_journal.repositories.set_aside import write_set_aside
from factor_journal.rollup import PersonRow
from factor_journal.setaside import SetAside
from factor_journal.summary import build_summary


class RowRewrites(Repository):
    """Rows rewritten from the person (``rewrite_row``) and aged when their time comes (``age_row``)."""

    def rewrite_row(self, user_id: str, org_id: str, *, refresh_summary: bool = False) -> PersonRow | None:
        """Rewrite the person's roll-up row in ``org_id`` from their profile and summary as they stand, aged to
        now, with the figures moved by what changed, in one transaction (so a concurrent change, move or
        opt-out is never undone); the row written, or None when they are not a member of ``org_id`` (then a
        row of theirs there is a stray, and is removed with its share of the figures).  With ``refresh_summary``,
        a summary built for another catalog version is rebuilt for this catalog from its factor states (factors
        the catalog no longer has are left out) and rewritten in the same transaction.  A stored row that no
        longer reads is set aside in the same transaction (a copy with the person, whose profile lists it),
        unless nobody with that id exists any more."""
        paths = self.paths

        @firestore.transactional
        def run(transaction: firestore.Transaction) -> PersonRow | None:
            user_snapshot, summary_snapshot = (
                paths.user(user_id).get(transaction=transaction),
                paths.summary(user_id).get(transaction=transaction),
            )
            organisation_exists = paths.organisation(org_id).get(transaction=transaction).exists
            row_snapshot = paths.person_row(org_id, user_id).get(transaction=transaction)
            found: list[SetAside] = []
            row = row_from(row_snapshot, org_id, found)
            profile = UserProfile.model_validate(user_snapshot.to_dict()) if user_snapshot.exists else None
            member = profile is not None and profile.org_id == org_id
            now = datetime.now(UTC)
            summary = None
            if member:  # reads come before writes
                summary, _ = JournalReads(self.client, self.catalog, self.graph).summary_from(
                    user_id, summary_snapshot.to_dict(), now, transaction
                )
            if user_snapshot.exists:  # about nobody who no longer exists: their stray row just goes
                write_set_aside(transaction, paths, user_id, found, profile_exists=True)
            if profile is None or not member:  # not (or no longer) a member: the row is a stray
                if row_snapshot.exists:
                    put_row(transaction, paths, org_id, user_id, row, None)
                    if organisation_exists:
                        roster_changed(transaction, paths, org_id)
                return None
            if summary is None:
                return None
            if refresh_summary and summary.catalog_version != self.catalog.version:
                states = {fid: state for fid, state in summary.factors.items() if self.catalog.has_factor(fid)}
                last, updated = summary.last_conversation, summary.updated_at
                summary = build_summary(self.catalog, self.graph, states, last, updated)
                transaction.set(paths.summary(user_id), {SUMMARY_FIELD: summary.to_document()})
            return write_row(transaction, paths, self.catalog, profile, summary, profile.last_active, row, now)

        return run_transaction(self.client, run, timeout=self.contention_timeout)

    def age_row(
        self, user_id: str, org_id: str, now: datetime, ageing: Callable[[PersonRow], PersonRow]
    ) -> PersonRow | None:
        """Age the person's row to ``now`` when its ``next_change`` has come (``ageing``: the row as it counts
        then), with its figures, in one transaction; a row of another stamp (built for an earlier catalog) is
        rebuilt from the person instead.  The row written, or None when nothing was due."""
        paths = self.paths

        @firestore.transactional
        def run(transaction: firestore.Transaction) -> PersonRow | None:
            row = read_row(paths, org_id, user_id, transaction)
            if row is None or row.next_change is None or row.next_change > now:
                return None
            new = ageing(row)
            if new.stamp != row.stamp:
                return None
            put_row(transaction, paths, org_id, user_id, row, new)
            return new

        written = run_transaction(self.client, run, timeout=self.contention_timeout)
        if written is None:
            stored = read_row(paths, org_id, user_id)
            if stored is not None and stored.next_change is not None and stored.next_change <= now:
                return self.rewrite_row(user_id, org_id)  # built for another catalog: rebuilt from the person
        return written
