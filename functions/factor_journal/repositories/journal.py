"""Reading a user's factors and their journals: the summary, factor states, history pages, as-of states."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter
from pydantic import ValidationError

from factor_journal.catalog import Catalog
from factor_journal.errors import InvalidInputError
from factor_journal.folding import refold_damaged
from factor_journal.graph import FactorGraph
from factor_journal.models import AssessmentSummary, FactorState, HistoryPage, JournalEntry
from factor_journal.planner import DamagedFactorError, DamagedSummaryError, stored_factor, stored_summary
from factor_journal.repositories.client import Repository
from factor_journal.repositories.paths import SUMMARY_FIELD, Paths
from factor_journal.setaside import DocumentKind, SetAside, describe, read_journal, set_aside
from factor_journal.summary import build_summary

log = logging.getLogger(__name__)


def parse_summary(document: Mapping[str, Any] | None) -> AssessmentSummary | None:
    """The summary held by a summary document (``None`` when there is none yet).

    Raises ``DamagedSummaryError`` when a summary is stored but does not validate (``planner.stored_summary``).
    """
    return stored_summary((document or {}).get(SUMMARY_FIELD))


parse_factor = stored_factor  # a factor document's state (``planner.stored_factor``)


class JournalReads(Repository):
    """Reads of a user's factors and journals.  Damaged derived documents (the summary, a factor document)
    are never passed on: what is returned is rebuilt from what they derive from, and logged; the user's next
    change that touches them rewrites them.  A damaged journal entry is left out of what is returned (its factor
    is folded without it).  A read given ``found`` (a transaction that writes) adds every damaged document it met
    to it, for setting aside in that transaction (``factor_journal.setaside``)."""

    catalog: Catalog
    graph: FactorGraph

    def summary_from(
        self,
        user_id: str,
        document: Mapping[str, Any] | None,
        now: datetime,
        transaction: firestore.Transaction | None = None,
        found: list[SetAside] | None = None,
    ) -> tuple[AssessmentSummary | None, bool]:
        """The summary a summary document holds (``None`` when there is none yet), and whether it had to be
        rebuilt from the user's factor documents (read in ``transaction``) because the stored one was damaged."""
        try:
            return parse_summary(document), False
        except DamagedSummaryError as damage:
            states = self.factor_states(user_id, transaction, found)
            log.warning("summary of user %s was damaged (%s): rebuilt from %d factors", user_id, damage, len(states))
            if found is not None:
                path = self.paths.summary(user_id).path
                found.append(set_aside(user_id, DocumentKind.summary, path, document, str(damage), now))
            return build_summary(self.catalog, self.graph, states, damage.last_conversation, now), True

    def state_from(
        self,
        user_id: str,
        factor_id: str,
        document: Mapping[str, Any] | None,
        transaction: firestore.Transaction | None = None,
        found: list[SetAside] | None = None,
    ) -> FactorState | None:
        """The state a factor document holds (``None`` when there is none yet); a damaged one is folded again
        from the factor's journal (read in ``transaction``, see ``refolded``)."""
        try:
            return parse_factor(document)
        except DamagedFactorError as damage:
            if found is not None:
                path = self.paths.factor(user_id, factor_id).path
                found.append(set_aside(user_id, DocumentKind.factor, path, document, str(damage), datetime.now(UTC)))
            return self.refolded(user_id, factor_id, damage, transaction, found=found)

    def refolded(
        self,
        user_id: str,
        factor_id: str,
        damage: DamagedFactorError,
        transaction: firestore.Transaction | None = None,
        *,
        kept: FactorState | None = None,
        found: list[SetAside] | None = None,
    ) -> FactorState | None:
        """A damaged factor document's state: its journal (read in ``transaction``) folded again, dated when
        that journal was last written, with the re-check flag of ``kept`` (the summary's copy: another factor's
        correction set it, not this journal); ``None`` when the document is not a catalog factor's.  A change
        that touches the factor rewrites the document."""
        if not self.catalog.has_factor(factor_id):
            log.warning("factor %s of user %s was damaged (%s), not a catalog factor", factor_id, user_id, damage)
            return None
        journal = self.journal(user_id, factor_id, transaction, found)
        log.warning(
            "factor %s of user %s was damaged (%s): folded again from %d journal entries",
            factor_id,
            user_id,
            damage,
            len(journal),
        )
        return refold_damaged(self.catalog, factor_id, journal, kept, user_id, datetime.now(UTC))

    def summary_document(self, user_id: str) -> dict[str, Any] | None:
        return self.paths.summary(user_id).get().to_dict()

    def summary(self, user_id: str) -> AssessmentSummary | None:
        """The precomputed summary: one document read (``DamagedSummaryError`` if it does not validate)."""
        return parse_summary(self.summary_document(user_id))

    def write_summary(self, user_id: str, summary: AssessmentSummary) -> None:
        self.paths.summary(user_id).set({SUMMARY_FIELD: summary.to_document()})

    def factor(self, user_id: str, factor_id: str) -> FactorState | None:
        """The factor's state (``None`` when never touched); a damaged document is folded again from its
        journal."""
        try:
            return parse_factor(self.paths.factor(user_id, factor_id).get().to_dict())
        except DamagedFactorError as damage:
            summary = self.summary_from(user_id, self.summary_document(user_id), datetime.now(UTC))[0]
            kept = summary.factors.get(factor_id) if summary else None
            return self.refolded(user_id, factor_id, damage, kept=kept)

    def factor_states(
        self, user_id: str, transaction: firestore.Transaction | None = None, found: list[SetAside] | None = None
    ) -> dict[str, FactorState]:
        """Every factor state of the user (a scan: repairs and test oracles only); damaged documents folded
        again from their journals."""
        snapshots = list(self.paths.factors(user_id).stream(transaction=transaction))
        states = {s.id: self.state_from(user_id, s.id, s.to_dict(), transaction, found) for s in snapshots}
        return {fid: state for fid, state in states.items() if state is not None}

    def journal(
        self,
        user_id: str,
        factor_id: str,
        transaction: firestore.Transaction | None = None,
        found: list[SetAside] | None = None,
    ) -> list[JournalEntry]:
        """Every journal entry of one factor that reads (bounded by that factor's journal).  A damaged entry is
        left out (logged): one not yet set aside is added to ``found``, for the transaction to set it aside."""
        stream = self.paths.journal(user_id, factor_id).stream(transaction=transaction)
        read = read_journal(user_id, ((s.reference.path, s.to_dict()) for s in stream), datetime.now(UTC))
        for record in read.found:
            log.warning("journal entry %s of user %s is damaged (%s): left out", record.path, user_id, record.error)
        if found is not None:
            found += read.found
        return read.entries

    def entry(self, user_id: str, factor_id: str, entry_id: str) -> JournalEntry | None:
        snapshot = self.paths.journal(user_id, factor_id).document(entry_id).get()
        return JournalEntry.model_validate(snapshot.to_dict()) if snapshot.exists else None

    def entries(self, user_id: str, refs: Sequence[tuple[str, str]]) -> dict[str, JournalEntry]:
        """The journal entries ``refs`` name, as (factor id, entry id), in one batched read, by entry id; an entry
        that is gone or no longer reads is left out (logged)."""
        return read_entries(self.paths, user_id, refs)

    def history(self, user_id: str, factor_id: str, *, page_size: int, cursor: str | None) -> HistoryPage:
        """Journal entries newest observation first, a page at a time (pass ``next_cursor`` on).  An entry that
        no longer reads is left out of its page (logged), never the page."""
        journal = self.paths.journal(user_id, factor_id)
        query = journal.order_by("observed_at", direction=firestore.Query.DESCENDING)
        query = query.order_by("__name__", direction=firestore.Query.DESCENDING)
        if cursor:
            anchor = journal.document(cursor).get()
            if not anchor.exists:
                raise InvalidInputError(f"unknown history cursor {cursor!r}")
            query = query.start_after(anchor)
        snapshots = list(query.limit(page_size + 1).stream())
        page = snapshots[:page_size]
        entries = [entry for s in page if (entry := _entry_or_none(user_id, factor_id, s))]
        more = len(snapshots) > page_size
        return HistoryPage(entries=entries, next_cursor=page[-1].id if more else None)

    def effective_entry_at(self, user_id: str, factor_id: str, at: datetime) -> JournalEntry | None:
        """The newest entry on the factor's value timeline observed at or before ``at``."""
        query = (
            self.paths.journal(user_id, factor_id)
            .where(filter=FieldFilter("effective", "==", True))
            .where(filter=FieldFilter("observed_at", "<=", at))
            .order_by("observed_at", direction=firestore.Query.DESCENDING)
            .limit(1)
        )
        snapshots = list(query.stream())
        return JournalEntry.model_validate(snapshots[0].to_dict()) if snapshots else None


def read_entries(paths: Paths, user_id: str, refs: Sequence[tuple[str, str]]) -> dict[str, JournalEntry]:
    """The journal entries ``refs`` name, as (factor id, entry id), in one batched read (``get_all``), by entry id;
    an entry that is gone or no longer reads is left out (logged)."""
    documents = [paths.journal(user_id, factor_id).document(entry_id) for factor_id, entry_id in refs]
    found: dict[str, JournalEntry] = {}
    for snapshot in paths.client.get_all(documents) if documents else []:
        if snapshot.exists and (entry := _entry_or_none(user_id, snapshot.reference.parent.parent.id, snapshot)):
            found[snapshot.id] = entry
    return found


def _entry_or_none(user_id: str, factor_id: str, snapshot: firestore.DocumentSnapshot) -> JournalEntry | None:
    try:
        return JournalEntry.model_validate(snapshot.to_dict())
    except ValidationError as error:
        log.warning(
            "journal entry %s of factor %s of user %s was damaged (%s)",
            snapshot.id,
            factor_id,
            user_id,
            describe(error),
        )
        return None
