"""Reading a user's factors and their journals: the summary, factor states, history pages, as-of states."""

from __future__ import annotations

from datetime import datetime

from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter

from factor_journal.errors import InvalidInputError
from factor_journal.models import AssessmentSummary, FactorState, HistoryPage, JournalEntry
from factor_journal.repositories.client import CountedClient
from factor_journal.repositories.paths import SUMMARY_FIELD, Paths


class JournalReads:
    def __init__(self, client: CountedClient) -> None:
        self.client = client
        self.paths = Paths(client)

    def summary(self, user_id: str) -> AssessmentSummary | None:
        """The precomputed summary: one document read."""
        data = (self.paths.summary(user_id).get().to_dict() or {}).get(SUMMARY_FIELD)
        return AssessmentSummary.model_validate(data) if data else None

    def write_summary(self, user_id: str, summary: AssessmentSummary) -> None:
        self.paths.summary(user_id).set({SUMMARY_FIELD: summary.to_document()})

    def factor(self, user_id: str, factor_id: str) -> FactorState | None:
        snapshot = self.paths.factor(user_id, factor_id).get()
        return FactorState.model_validate(snapshot.to_dict()) if snapshot.exists else None

    def factor_states(self, user_id: str) -> dict[str, FactorState]:
        """Every factor document of the user (a scan: repairs and test oracles only)."""
        return {s.id: FactorState.model_validate(s.to_dict()) for s in self.paths.factors(user_id).stream()}

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
