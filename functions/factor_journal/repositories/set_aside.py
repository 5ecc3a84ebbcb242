"""Damaged documents set aside (``factor_journal.setaside``): written in the transaction that found them, listed.

``write_set_aside`` is what a transaction (a turn's commit, a profile update, a roll-up row's rewrite, a turn
settled or listed) calls for the damaged documents it found: each gets its record ``users/{uid}/set_aside/{id}``
with a copy of what it held, a journal entry or turn its ``set_aside`` mark in place, and the person's profile lists
their paths (``set_aside``).  Nothing is deleted.  ``SetAsideRecords`` lists the records (the CLI's ``set-aside``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from google.cloud import firestore
from pydantic import ValidationError

from factor_journal.repositories.client import CountedClient
from factor_journal.repositories.paths import SET_ASIDE, Paths
from factor_journal.setaside import MARK, SetAside, distinct

log = logging.getLogger(__name__)


def write_set_aside(
    writer: firestore.Transaction | firestore.WriteBatch,
    paths: Paths,
    user_id: str,
    found: Sequence[SetAside],
    *,
    profile_exists: bool,
) -> None:
    """Set ``found`` aside inside the caller's transaction or batch (blind writes, after its reads): each journal
    entry or turn marked where it is, and, when the person's profile exists (``profile_exists``), each record written
    with them and its place listed on their profile: nothing is written about someone who does not exist (nor a
    profile created).  Never deletes anything."""
    found = distinct(found)
    for record in found:
        log.warning("%s %s set aside (%s)", record.kind, record.path, record.error)
        if record.marked_in_place:
            writer.set(paths.client.document(record.path), {MARK: record.mark()}, merge=True)
        if profile_exists:
            writer.set(paths.set_aside(user_id).document(record.record_id), record.to_document())
    if found and profile_exists:
        writer.set(paths.user(user_id), {MARK: firestore.ArrayUnion([r.path for r in found])}, merge=True)


class SetAsideRecords:
    """The records of documents set aside, for the team (``python -m factor_journal set-aside``)."""

    def __init__(self, client: CountedClient) -> None:
        self.client = client
        self.paths = Paths(client)

    def listed(self, user_id: str | None = None) -> list[SetAside]:
        """Every record (of one person with ``user_id``; everyone's otherwise: a collection-group scan, for the
        team's tools only), oldest first.  A record that no longer reads itself is logged and left out."""
        stream = (self.paths.set_aside(user_id) if user_id else self.client.collection_group(SET_ASIDE)).stream()
        records = []
        for snapshot in stream:
            try:
                records.append(SetAside.model_validate(snapshot.to_dict()))
            except ValidationError:
                log.warning("set-aside record %s does not read", snapshot.reference.path)
        return sorted(records, key=lambda record: (record.found_at, record.path))
