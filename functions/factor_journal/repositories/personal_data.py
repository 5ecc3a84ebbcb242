"""A person's right to their data: export everything held about them, and erase it.

Where a person's data lives (all of it; ``tests/factor_journal/test_privacy.py`` scans every
collection of the database after an erasure to prove it):

* ``users/{uid}`` and everything under it: profile, factors and their journals, the summary and
  other metadata, daily snapshots, conversations and their turns;
  and the embeddings of their journal entries (``users/{uid}/journal_vectors``): the export states that each
  exists (model, dimension, the entry it belongs to) instead of listing its floats, which are derived from
  words the export already holds and mean nothing to a reader;
* their roll-up row (``organisations/{org}/people/{uid}``, in any organisation, including ones they have
  left; and in a roll-up shard of the earlier row format, ``organisations/{org}/rollup/shard-NN``, until the
  nightly job has removed those) and their place on a ``managers`` list;
* their link records (``resume_links``, by ``user_id``);
* queued mail to them (``mail``, by ``user_id`` or by their address in ``to``).

Organisation figures (``organisations/{org}/figures``, ``organisations/{org}/daily``) are counts and sums
over people, not anyone's data: they stay, less the person's share (taken away with their row).

``PersonalData.export`` promises a JSON-ready dict of every one of those documents.
``PersonalData.erase`` promises that afterwards none of them exists, and is **resumable**: each
step is idempotent, so an interrupted erasure is finished by running it again.  The order: the mail
found only by the person's address (while the profile still gives it), then the profile, then the
links, mail queued meanwhile, roll-up rows, managers lists and everything under ``users/{uid}``.
The profile goes before the links on purpose: every writer about a person needs the profile (a
turn's commit, a reminder and the resume link it issues, an unsubscribe), so once it is gone no
new link or mail can appear behind the steps that delete them.  Access still ends at once: the
app's ``AccessChecker`` admits a resume or manager link only while the person's profile exists (re-
checked at least every ``links.RECORD_TTL``), so the open sessions lose access on their next
interaction as soon as the profile is deleted, before their link records are.  Its record
``privacy_log/{subject}`` and the log lines carry only ``subject`` (a SHA-256 of the user id),
the steps done and document counts: no name, address, id or words.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter
from google.cloud.firestore_v1.field_path import FieldPath
from google.cloud.firestore_v1.vector import Vector

from factor_journal.errors import InvalidInputError
from factor_journal.repositories.changes import roster_changed
from factor_journal.repositories.client import CountedClient, run_transaction
from factor_journal.repositories.paths import LINK_COLLECTION, MAIL_COLLECTION, Paths
from factor_journal.repositories.paths import PRIVACY_LOG as PRIVACY_LOG
from factor_journal.repositories.rows import put_row, row_from

LOG = logging.getLogger("factor_journal.privacy")
EXPORT_FORMAT = "factor-journal-export/1"


def subject_of(user_id: str) -> str:
    """The pseudonymous reference used in erasure records and logs (no personal data)."""
    return hashlib.sha256(f"factor-journal-subject:{user_id}".encode()).hexdigest()[:32]


def _json_ready(value: Any) -> Any:
    if isinstance(value, Vector):  # an embedding: said to exist, not dumped (see the module's docstring)
        return {"vector": "stored, server-only", "dimensions": len(value.to_map_value()["value"])}
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): _json_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_ready(v) for v in value]
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)  # GeoPoint, DocumentReference, ...


@dataclass
class ErasureReport:
    subject: str
    deleted: dict[str, int] = field(default_factory=dict)
    steps: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(self.deleted.values())


class PersonalData:
    """Export and erasure of one person's data, over the Firestore client (admin access)."""

    def __init__(self, client: firestore.Client) -> None:
        self.client = client

    # Where the data is ------------------------------------------------------------------------

    def _user_ref(self, user_id: str) -> firestore.DocumentReference:
        if not isinstance(user_id, str) or not user_id or "/" in user_id:
            raise InvalidInputError(f"user id must be a non-empty string without '/', got {user_id!r}")
        return self.client.collection("users").document(user_id)

    def _documents_under(self, reference: firestore.DocumentReference) -> Iterator[firestore.DocumentSnapshot]:
        """Every existing document in every subcollection below ``reference``, depth first."""
        for collection in reference.collections():
            for child in collection.list_documents():
                snapshot = child.get()
                if snapshot.exists:
                    yield snapshot
                yield from self._documents_under(child)

    def _rollup_rows(self, user_id: str) -> Iterator[tuple[firestore.DocumentReference, str, dict[str, Any]]]:
        """(row document, organisation id, row) for every organisation holding a row of the person (in the
        earlier format too: a map entry of a roll-up shard)."""
        paths = Paths(self.client)
        for organisation in self.client.collection("organisations").list_documents():
            row = paths.person_row(organisation.id, user_id).get()
            if row.exists:
                yield row.reference, organisation.id, row.to_dict() or {}
            legacy = paths.legacy_rollup(organisation.id).document(legacy_shard_of(user_id)).get()
            old = ((legacy.to_dict() or {}).get("rows") or {}).get(user_id) if legacy.exists else None
            if old is not None:
                yield legacy.reference, organisation.id, old

    def _managed(self, user_id: str) -> list[firestore.DocumentSnapshot]:
        query = self.client.collection("organisations").where(filter=FieldFilter("managers", "array_contains", user_id))
        return list(query.stream())

    def _links(self, user_id: str) -> list[firestore.DocumentSnapshot]:
        query = self.client.collection(LINK_COLLECTION).where(filter=FieldFilter("user_id", "==", user_id))
        return list(query.stream())

    def _mail(self, user_id: str, email: str | None) -> list[firestore.DocumentSnapshot]:
        """The person's mail: every mail document naming them as its subject (``user_id``), and one with no
        subject only by their address.  Addresses are not unique (a team mailbox, a person registered twice),
        so a mail that names another subject is never theirs, whoever it was sent to: it may carry that
        person's resume link."""
        mail = self.client.collection(MAIL_COLLECTION)
        found = {s.id: s for s in mail.where(filter=FieldFilter("user_id", "==", user_id)).stream()}
        if email:
            to = mail.where(filter=FieldFilter("to", "array_contains", email))
            found |= {s.id: s for s in to.stream() if not (s.to_dict() or {}).get("user_id")}
        return list(found.values())

    # Export -----------------------------------------------------------------------------------

    def export(self, user_id: str, now: datetime | None = None) -> dict[str, Any]:
        """Everything held about the person, JSON-ready (timestamps as ISO 8601), keyed by document path."""
        user_ref = self._user_ref(user_id)
        profile_snapshot = user_ref.get()
        profile = profile_snapshot.to_dict() if profile_snapshot.exists else None
        email = (profile or {}).get("email")
        documents = {s.reference.path: s.to_dict() for s in self._documents_under(user_ref)}
        return _json_ready(
            {
                "format": EXPORT_FORMAT,
                "user_id": user_id,
                "exported_at": now or datetime.now(UTC),
                "profile": profile,
                "documents": dict(sorted(documents.items())),
                "organisation_rows": {org_id: row for _, org_id, row in self._rollup_rows(user_id)},
                "manages": [s.id for s in self._managed(user_id)],
                "links": {s.id: s.to_dict() for s in self._links(user_id)},
                "mail": {s.id: s.to_dict() for s in self._mail(user_id, email)},
            }
        )

    def export_json(self, user_id: str) -> str:
        return json.dumps(self.export(user_id), ensure_ascii=False, indent=2)

    # Erasure ----------------------------------------------------------------------------------

    def erase(self, user_id: str, now: datetime | None = None) -> ErasureReport:
        """Delete everything held about the person; safe to run again (it finishes an interrupted run).

        What is still running about the person cannot leave anything behind: the profile goes early (after the
        mail found only by their address), and every writer about a person needs the profile (a turn's
        commit, a reminder, an unsubscribe); what was written before it went is found by the steps after."""
        user_ref = self._user_ref(user_id)
        subject = subject_of(user_id)
        report = ErasureReport(subject=subject)
        record = self.client.collection(PRIVACY_LOG).document(subject)
        started = now or datetime.now(UTC)
        record.set({"subject": subject, "action": "erase", "requested_at": started, "completed_at": None}, merge=True)
        profile = user_ref.get()
        email = (profile.to_dict() or {}).get("email") if profile.exists else None
        steps: list[tuple[str, Callable[[], int]]] = [
            ("mail", lambda: self._delete_all(self._mail(user_id, email))),  # while the address is known
            ("profile", lambda: self._delete_profile(user_ref)),  # from here on nothing new is written about them
            ("links", lambda: self._delete_all(self._links(user_id))),
            ("mail", lambda: self._delete_all(self._mail(user_id, None))),  # queued before the profile went
            ("organisation rows", lambda: self._erase_rows(user_id)),
            ("managers lists", lambda: self._erase_manager(user_id)),
            ("user documents", lambda: self._erase_below(user_ref)),
        ]
        LOG.info("erasure started: subject=%s", subject)
        for name, step in steps:
            count = step()
            report.deleted[name] = report.deleted.get(name, 0) + count
            report.steps.append(name)
            record.set({"steps": {name: report.deleted[name]}, "updated_at": datetime.now(UTC)}, merge=True)
            LOG.info("erasure step done: subject=%s step=%s documents=%d", subject, name, count)
        record.set({"completed_at": datetime.now(UTC), "total": report.total}, merge=True)
        LOG.info("erasure complete: subject=%s documents=%d", subject, report.total)
        return report

    def _delete_all(self, snapshots: list[firestore.DocumentSnapshot]) -> int:
        for snapshot in snapshots:
            snapshot.reference.delete()
        return len(snapshots)

    def _erase_rows(self, user_id: str) -> int:
        """Delete the person's row from every organisation's roll-up with its share of the figures, each with
        its roster change."""
        count, paths = 0, Paths(self.client)
        for reference, org_id, _ in self._rollup_rows(user_id):
            if reference.parent.id == "rollup":  # a shard of the earlier format: the person's entry only
                reference.update({FieldPath("rows", user_id).to_api_repr(): firestore.DELETE_FIELD})
            else:
                _drop_row(CountedClient.like(self.client), paths, org_id, user_id)
            count += 1
        return count

    def _erase_manager(self, user_id: str) -> int:
        managed = self._managed(user_id)
        for organisation in managed:
            organisation.reference.update({"managers": firestore.ArrayRemove([user_id])})
        return len(managed)

    def _erase_below(self, user_ref: firestore.DocumentReference) -> int:
        count = 0
        for collection in user_ref.collections():
            count += self.client.recursive_delete(collection)
        return count

    def _delete_profile(self, user_ref: firestore.DocumentReference) -> int:
        existed = user_ref.get().exists
        user_ref.delete()
        return int(existed)


LEGACY_ROLLUP_SHARDS = 64  # roll-up shards of row format 1 (every row of a shard in one document)


def legacy_shard_of(user_id: str) -> str:
    """The format-1 roll-up shard that held the person's row."""
    return f"shard-{int(hashlib.sha1(user_id.encode()).hexdigest(), 16) % LEGACY_ROLLUP_SHARDS:02d}"


def _drop_row(client: CountedClient, paths: Paths, org_id: str, user_id: str) -> None:
    """Delete the person's row in ``org_id`` with its share of the figures (and the roster change), in one
    transaction."""

    @firestore.transactional
    def run(transaction: firestore.Transaction) -> None:
        row = paths.person_row(org_id, user_id).get(transaction=transaction)
        organisation = paths.organisation(org_id).get(transaction=transaction)
        if not row.exists:
            return
        put_row(transaction, paths, org_id, user_id, row_from(row, org_id), None)
        if organisation.exists:
            roster_changed(transaction, paths, org_id)

    run_transaction(client, run)
