"""Queued mail (``mail/{id}``, the Firebase "Trigger Email" extension's collection) and who is due a reminder."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, Literal

from google.api_core import exceptions as api_exceptions
from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter
from pydantic import Field

from factor_journal.models import DocumentModel, UserProfile
from factor_journal.repositories.client import CountedClient, jittered_sleep
from factor_journal.repositories.paths import MAIL_COLLECTION as MAIL_COLLECTION
from factor_journal.repositories.paths import Paths


class MailMessage(DocumentModel):
    subject: str
    html: str
    headers: dict[str, str] = Field(default_factory=dict)


class MailDocument(DocumentModel):
    """One email for the Trigger Email extension to send."""

    to: list[str]
    message: MailMessage
    user_id: str
    kind: Literal["resume_reminder", "new_link"]
    created_at: datetime


class Mail:
    def __init__(self, client: CountedClient) -> None:
        self.client = client
        self.paths = Paths(client)

    def people_page(
        self, order_field: str, filters: list[tuple[str, str, Any]], after: tuple[Any, str] | None, page_size: int
    ) -> list[tuple[str, dict[str, Any]]]:
        """Profiles matching ``filters``, ordered by ``order_field`` then id, after the cursor (value, id)."""
        query: Any = self.client.collection("users")
        for name, op, value in filters:
            query = query.where(filter=FieldFilter(name, op, value))
        query = query.order_by(order_field).order_by("__name__")
        if after is not None:
            query = query.start_after({order_field: after[0], "__name__": after[1]})
        return [(snapshot.id, snapshot.to_dict() or {}) for snapshot in query.limit(page_size).stream()]

    def queue_once(
        self, user_id: str, mail_id: str, compose: Callable[[UserProfile], MailDocument | None]
    ) -> str | None:
        """Create ``mail/{mail_id}`` and set the person's ``last_reminded_at`` together (one batch: the mail
        is created only if it does not exist, the profile written only if unchanged since read), unless
        the person is gone, the mail exists already, or ``compose`` (given the profile as read) declines.
        No transaction, so two tasks racing on one person never wait on each other's locks: one wins."""
        user_ref = self.paths.user(user_id)
        mail_ref = self.client.collection(MAIL_COLLECTION).document(mail_id)
        for attempt in range(1, 20):
            user_snapshot = user_ref.get()
            if not user_snapshot.exists or mail_ref.get().exists:  # gone, or already reminded today
                return None
            document = compose(UserProfile.model_validate(user_snapshot.to_dict()))
            if document is None:
                return None
            batch = self.client.batch()
            batch.create(mail_ref, document.to_document())
            batch.update(
                user_ref,
                {"last_reminded_at": document.created_at},
                option=self.client.write_option(last_update_time=user_snapshot.update_time),
            )
            try:
                batch.commit()
                return mail_ref.id
            except api_exceptions.AlreadyExists:
                return None
            except (api_exceptions.FailedPrecondition, api_exceptions.Aborted):
                jittered_sleep(attempt)  # the profile changed meanwhile: decide again on the new one
        return None

    def exists(self, mail_id: str) -> bool:
        """Whether ``mail/{mail_id}`` was queued (one read)."""
        return bool(self.client.collection(MAIL_COLLECTION).document(mail_id).get().exists)

    def create_once(self, mail_id: str, document: MailDocument) -> bool:
        """Queue ``document`` as ``mail/{mail_id}`` for the person it names (``user_id``), unless that mail exists
        already or the person does not (then False, nothing written): one transaction with their profile, so an
        erasure running meanwhile never leaves a mail to them behind."""
        user = self.paths.user(document.user_id)
        mail = self.client.collection(MAIL_COLLECTION).document(mail_id)

        @firestore.transactional
        def run(transaction: firestore.Transaction) -> bool:
            if not user.get(transaction=transaction).exists or mail.get(transaction=transaction).exists:
                return False
            transaction.create(mail, document.to_document())
            return True

        return bool(run(self.client.transaction()))

    def opt_out(self, user_id: str, at: datetime) -> UserProfile | None:
        """Set the person's ``reminders_opt_out`` (idempotent); None when there is no such person."""
        reference = self.paths.user(user_id)
        snapshot = reference.get()
        if not snapshot.exists:
            return None
        profile = UserProfile.model_validate(snapshot.to_dict())
        if not profile.reminders_opt_out:
            try:  # an update, not a merge: a profile erased since the read is never recreated as a stub
                reference.update({"reminders_opt_out": True, "reminders_opt_out_at": at})
            except api_exceptions.NotFound:
                return None
        return profile.model_copy(update={"reminders_opt_out": True})
