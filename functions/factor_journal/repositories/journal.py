"""Reading a user's factors and their journals: the summary, factor states, history pages, as-of states."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter
from pydantic import ValidationError

from factor_journal.catalog import Catalog
from factor_journal.errors import InvalidInputError
from factor_journal.graph import FactorGraph
from factor_journal.models import AssessmentSummary, FactorState, HistoryPage, JournalEntry, LastConversation
from factor_journal.repositories.client import CountedClient
from factor_journal.repositories.paths import SUMMARY_FIELD, Paths
from factor_journal.summary import build_summary

log = logging.getLogger(__name__)


class DamagedSummaryError(Exception):
    """The summary document exists but does not read as a summary (a bad write, a hand edit, an old shape).

    The summary is derived data: the factor documents hold every state it carries, so callers rebuild it
    from them (``summary_of``). ``last_conversation`` is what could be saved of the damaged one.
    """

    def __init__(self, reason: str, last_conversation: LastConversation | None) -> None:
        super().__init__(reason)
        self.last_conversation = last_conversation


def parse_summary(document: Mapping[str, Any] | None) -> AssessmentSummary | None:
    """The summary held by a summary document (``None`` when there is none yet).

    Raises ``DamagedSummaryError`` when a summary is stored but does not validate.
    """
    data = (document or {}).get(SUMMARY_FIELD)
    if not data:
        return None
    try:
        return AssessmentSummary.model_validate(data)
    except ValidationError as error:
        reason = f"{error.error_count()} invalid field(s), first: {error.errors()[0]['loc']}"
        last = data.get("last_conversation") if isinstance(data, Mapping) else None
        try:
            saved = LastConversation.model_validate(last) if last else None
        except ValidationError:
            saved = None
        raise DamagedSummaryError(reason, saved) from error


def summary_of(
    reads: JournalReads, catalog: Catalog, graph: FactorGraph, user_id: str, document: Mapping[str, Any] | None,
    now: datetime, transaction: firestore.Transaction | None = None,
) -> tuple[AssessmentSummary | None, bool]:  # fmt: skip
    """The summary a summary document holds (``None`` when there is none yet), and whether it had to be rebuilt
    from the user's factor documents (read in ``transaction``) because the stored one was damaged (logged)."""
    try:
        return parse_summary(document), False
    except DamagedSummaryError as damage:
        states = reads.factor_states(user_id, transaction)
        log.warning("summary of user %s was damaged (%s): rebuilt from %d factors", user_id, damage, len(states))
        return build_summary(catalog, graph, states, damage.last_conversation, now), True


class JournalReads:
    def __init__(self, client: CountedClient) -> None:
        self.client = client
        self.paths = Paths(client)

    def summary_document(self, user_id: str) -> dict[str, Any] | None:
        return self.paths.summary(user_id).get().to_dict()

    def summary(self, user_id: str) -> AssessmentSummary | None:
        """The precomputed summary: one document read (``DamagedSummaryError`` if it does not validate)."""
        return parse_summary(self.summary_document(user_id))

    def write_summary(self, user_id: str, summary: AssessmentSummary) -> None:
        self.paths.summary(user_id).set({SUMMARY_FIELD: summary.to_document()})

    def factor(self, user_id: str, factor_id: str) -> FactorState | None:
        snapshot = self.paths.factor(user_id, factor_id).get()
        return FactorState.model_validate(snapshot.to_dict()) if snapshot.exists else None

    def factor_states(self, user_id: str, transaction: firestore.Transaction | None = None) -> dict[str, FactorState]:
        """Every factor document of the user (a scan: repairs and test oracles only)."""
        snapshots = self.paths.factors(user_id).stream(transaction=transaction)
        return {s.id: FactorState.model_validate(s.to_dict()) for s in snapshots}

    def entry(self, user_id: str, factor_id: str, entry_id: str) -> JournalEntry | None:
        snapshot = self.paths.journal(user_id, factor_id).document(entry_id).get()
        return JournalEntry.model_validate(snapshot.to_dict()) if snapshot.exists else None

    def history(self, user_id: str, factor_id: str, *, page_size: int, cursor: str | None) -> HistoryPage:
        """Journal entries newest observation first, a page at a time (pass ``next_cursor`` on)."""
        journal = self.paths.journal(user_id, factor_id)
        query = journal.order_by("observed_at", direction=firestore.Query.DESCENDING)
        query = query.order_by("__name__", direction=firestore.Query.DESCENDING)
        if cursor:
            anchor = journal.document(cursor).get()
            if not anchor.exists:
                raise InvalidInputError(f"unknown history cursor {cursor!r}")
            query = query.start_after(anchor)
        snapshots = list(query.limit(page_size + 1).stream())
        entries = [JournalEntry.model_validate(s.to_dict()) for s in snapshots[:page_size]]
        more = len(snapshots) > page_size
        return HistoryPage(entries=entries, next_cursor=entries[-1].entry_id if more and entries else None)

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
