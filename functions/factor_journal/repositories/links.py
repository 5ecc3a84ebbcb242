"""Link records: ``resume_links/{link_id}``, one per issued resume or manager link (clients never see them)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from google.cloud import firestore
from pydantic import Field

from factor_journal.errors import UnknownUserError
from factor_journal.models import DocumentModel
from factor_journal.repositories.client import FirestoreClient
from factor_journal.repositories.paths import LINK_COLLECTION as LINK_COLLECTION
from factor_journal.repositories.paths import Paths


class LinkRecord(DocumentModel):
    """What the server keeps about one link: who it opens, until when, whether it was withdrawn."""

    link_id: str
    user_id: str
    session_id: str | None = None
    kind: Literal["resume", "manager"]
    ttl_seconds: int = Field(gt=0)
    org_id: str | None = None
    created_at: datetime
    expires_at: datetime | None  # None (a damaged record) opens nothing
    revoked_at: datetime | None = None


class LinkRecords:
    def __init__(self, client: FirestoreClient) -> None:
        self.client = client
        self.paths = Paths(client)

    def create(self, record: LinkRecord) -> None:
        """Record a link for a person who exists when it is written (one transaction with their profile, so a
        link is never left behind by an erasure running meanwhile); UnknownUserError otherwise."""
        user = self.paths.user(record.user_id)
        link = self.client.collection(LINK_COLLECTION).document(record.link_id)

        @firestore.transactional
        def run(transaction: firestore.Transaction) -> None:
            if not user.get(transaction=transaction).exists:
                raise UnknownUserError(record.user_id)
            transaction.create(link, record.to_document())

        run(self.client.transaction())

    def get(self, link_id: str) -> LinkRecord | None:
        """The record (one read), or None when there is none or it is not a valid record."""
        snapshot = self.client.collection(LINK_COLLECTION).document(link_id).get()
        if not snapshot.exists:
            return None
        try:
            return LinkRecord.model_validate(snapshot.to_dict())
        except ValueError:
            return None

    def revoke(self, link_id: str, at: datetime) -> bool:
        """Mark the link withdrawn; False when there is no such link."""
        reference = self.client.collection(LINK_COLLECTION).document(link_id)
        if not reference.get().exists:
            return False
        reference.update({"revoked_at": at})
        return True
