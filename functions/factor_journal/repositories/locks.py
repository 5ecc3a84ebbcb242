"""The user's commit lease: one writer of a user's factors at a time, across function instances.

All of a user's changes meet on one summary document.  Transactions alone keep
them correct, but concurrent transactions on one document wait on each other's
locks and abort (on the emulator each such wait costs seconds), so eight
instances analysing eight turns of one user would mostly fail.  Holding a
short lease document around the commit turns that into an orderly queue: a
create-only write to acquire (no transaction, no lock wait), a delete to
release, and an expiry so a crashed holder never blocks the user for long.
The transaction inside stays the guarantee of correctness.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime, timedelta

from google.api_core import exceptions as api_exceptions

from factor_journal.errors import FactorJournalError
from factor_journal.repositories.client import CountedClient, DocumentReference, jittered_sleep
from factor_journal.repositories.paths import Paths


class CommitBusyError(FactorJournalError):
    """The user's commit lease could not be had in time (a transient condition: retry later)."""


class CommitLeases:
    """Per-user commit leases (also serialising this process's own writers of a user without polling)."""

    def __init__(self, client: CountedClient, *, ttl: float = 30.0, wait: float = 90.0) -> None:
        self.paths = Paths(client)
        self.client = client
        self.ttl = ttl
        self.wait = wait
        self._local: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def local(self, user_id: str) -> threading.Lock:
        """This process's lock on the user's changes (no Firestore lease)."""
        with self._guard:
            return self._local.setdefault(user_id, threading.Lock())

    @contextmanager
    def held(self, user_id: str) -> Iterator[None]:
        """Hold the user's commit lease for the duration of the block (raises CommitBusyError on timeout)."""
        with self.local(user_id):
            ref = self.paths.commit_lease(user_id)
            token = uuid.uuid4().hex
            deadline = time.monotonic() + self.wait
            attempt = 0
            while True:
                try:
                    result = ref.create(
                        {"holder": token, "expires_at": datetime.now(UTC) + timedelta(seconds=self.ttl)}
                    )
                    break
                except api_exceptions.AlreadyExists:
                    attempt += 1
                    if attempt % 20 == 1:
                        self._break_if_expired(ref)
                    if time.monotonic() > deadline:
                        raise CommitBusyError(
                            f"another writer held user {user_id!r}'s commit lease for too long"
                        ) from None
                    jittered_sleep(min(attempt, 3), base=0.01, cap=0.04)
            try:
                yield
            finally:
                # release only our own lease (it may have expired and been taken over)
                with suppress(api_exceptions.FailedPrecondition, api_exceptions.NotFound):
                    ref.delete(option=self.client.write_option(last_update_time=result.update_time))

    def _break_if_expired(self, ref: DocumentReference) -> None:
        snapshot = ref.get()
        if not snapshot.exists:
            return
        expires = (snapshot.to_dict() or {}).get("expires_at")
        if expires is not None and expires > datetime.now(UTC):
            return
        with suppress(api_exceptions.FailedPrecondition, api_exceptions.NotFound):
            ref.delete(option=self.client.write_option(last_update_time=snapshot.update_time))
