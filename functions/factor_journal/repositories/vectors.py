"""Embeddings of journal entries, and the nearest-neighbour search over one person's entries.

Where they live: ``users/{uid}/journal_vectors/{entry_id}``, one document per journal entry that carries a
person's words or an extractor's rationale (``embedding.entry_said``), written in the transaction that writes
the entry (``FactorChanges``).  Not on the entry itself: the person's app reads their journal entries
directly, security rules cannot hide one field of a readable document, and a vector is server-only (the
rules deny every client read of ``journal_vectors``).  The document holds::

    user_id, factor_id, entry_id, kind, observed_at    what the vector belongs to (user_id: the pre-filter)
    embedding                                          the vector (a Firestore vector value)
    embedding_model, embedding_dimensions              which model made it: the search compares only vectors
                                                       of the running model; ``reembed`` replaces the others
    said_digest                                        a digest of the embedded text (a changed text is stale)

The search (``nearest``) is a collection-group query on ``journal_vectors`` filtered to the person and the
running model **before** the nearest-neighbour search (``where(user_id == …).where(embedding_model == …)
.find_nearest(…)``, cosine distance, ``distance_result_field``), served by the vector index in
firestore.indexes.json: never a search over everyone's entries filtered afterwards.  Every hit is checked to
be the person's (a broken pre-filter fails loudly instead of leaking another person's words).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter
from google.cloud.firestore_v1.base_vector_query import DistanceMeasure
from google.cloud.firestore_v1.vector import Vector
from pydantic import ValidationError

from factor_journal.embedding import Embedder, entry_said, text_digest
from factor_journal.errors import InvalidInputError
from factor_journal.models import JournalEntry
from factor_journal.repositories.client import Repository, run_transaction
from factor_journal.repositories.paths import VECTORS

log = logging.getLogger(__name__)

DISTANCE_FIELD = "vector_distance"
VECTOR_FIELD = "embedding"
MODEL_FIELD = "embedding_model"
REEMBED_CHUNK = 100  # vectors written per transaction by ``reembed`` (under Firestore's 500 writes)


class ForeignHitError(RuntimeError):
    """A nearest-neighbour search returned a vector that is not the asking person's (the pre-filter failed)."""


@dataclass(frozen=True)
class VectorHit:
    """One entry the search found: which, and how far (cosine distance, 0 = same direction, 2 = opposite)."""

    entry_id: str
    factor_id: str
    distance: float

    @property
    def similarity(self) -> float:
        return 1.0 - self.distance


def vector_document(entry: JournalEntry, vector: Sequence[float], embedder: Embedder, said: str) -> dict[str, Any]:
    """The vector document of ``entry`` (see the module's docstring)."""
    return {
        "user_id": entry.user_id,
        "factor_id": entry.factor_id,
        "entry_id": entry.entry_id,
        "kind": str(entry.kind),
        "observed_at": entry.observed_at,
        VECTOR_FIELD: Vector(list(vector)),
        MODEL_FIELD: embedder.model_id,
        "embedding_dimensions": embedder.dimensions,
        "said_digest": text_digest(said),
    }


def is_current(document: dict[str, Any] | None, embedder: Embedder, said: str) -> bool:
    """Whether a stored vector document is the running model's embedding of ``said``."""
    return bool(
        document
        and document.get(MODEL_FIELD) == embedder.model_id
        and document.get("embedding_dimensions") == embedder.dimensions
        and document.get("said_digest") == text_digest(said)
    )


@dataclass
class ReembedReport:
    """What ``reembed`` found and did; ``stale`` counts vectors of another model or text, ``missing`` entries
    that carry words but had no vector, ``orphans`` vectors whose entry is gone."""

    people: int = 0
    entries: int = 0
    current: int = 0
    stale: int = 0
    missing: int = 0
    orphans: int = 0
    written: int = 0
    removed: int = 0
    models: dict[str, int] = field(default_factory=dict)

    @property
    def needs_work(self) -> int:
        return self.stale + self.missing + self.orphans


class JournalVectors(Repository):
    """Vector documents of journal entries: written with the entry, searched per person, re-embedded."""

    # Written in the entry's transaction ------------------------------------------------------------

    def write(
        self,
        transaction: firestore.Transaction,
        entry: JournalEntry,
        vector: Sequence[float],
        embedder: Embedder,
        said: str,
    ) -> None:
        """Write ``entry``'s vector in ``transaction`` (the one that writes the entry)."""
        transaction.set(
            self.paths.vector(entry.user_id, entry.entry_id), vector_document(entry, vector, embedder, said)
        )

    def delete(self, transaction: firestore.Transaction, user_id: str, entry_id: str) -> None:
        transaction.delete(self.paths.vector(user_id, entry_id))

    # The search -------------------------------------------------------------------------------------

    def nearest(self, user_id: str, query_vector: Sequence[float], model_id: str, limit: int) -> list[VectorHit]:
        """The person's ``limit`` entries nearest to ``query_vector`` among the vectors of ``model_id``, nearest
        first: pre-filtered to the person and the model, then the nearest-neighbour search (cosine)."""
        if not isinstance(user_id, str) or not user_id or "/" in user_id:
            raise InvalidInputError(f"user id must be a non-empty string without '/', got {user_id!r}")
        query = (
            self.client.collection_group(VECTORS)
            .where(filter=FieldFilter("user_id", "==", user_id))
            .where(filter=FieldFilter(MODEL_FIELD, "==", model_id))
            .find_nearest(
                vector_field=VECTOR_FIELD,
                query_vector=Vector(list(query_vector)),
                limit=limit,
                distance_measure=DistanceMeasure.COSINE,
                distance_result_field=DISTANCE_FIELD,
            )
        )
        hits = []
        for snapshot in query.stream():  # type: ignore[call-arg]  # the SDK's stub types find_nearest's result oddly
            data = snapshot.to_dict() or {}
            owner = snapshot.reference.parent.parent
            if data.get("user_id") != user_id or owner is None or owner.id != user_id:
                raise ForeignHitError(f"the search for one person returned {snapshot.reference.path}")
            hits.append(VectorHit(snapshot.id, str(data.get("factor_id")), float(data.get(DISTANCE_FIELD, 2.0))))
        return sorted(hits, key=lambda hit: (hit.distance, hit.entry_id))

    def entries(self, user_id: str, hits: Sequence[VectorHit]) -> dict[str, JournalEntry]:
        """The journal entries the hits belong to (one batched read), by entry id; an entry that is gone or no
        longer reads is left out."""
        refs = [self.paths.journal(user_id, hit.factor_id).document(hit.entry_id) for hit in hits]
        found: dict[str, JournalEntry] = {}
        for snapshot in self.client.get_all(refs) if refs else []:
            if not snapshot.exists:
                continue
            try:
                found[snapshot.id] = JournalEntry.model_validate(snapshot.to_dict())
            except ValidationError:
                log.warning("journal entry %s of user %s does not read: left out of the search", snapshot.id, user_id)
        return found

    # Keeping them current -----------------------------------------------------------------------------

    def user_ids(self, after: str | None = None, page: int = 200) -> Iterator[str]:
        """Every user id, in document-id order after ``after`` (a resumable scan)."""
        users = self.client.collection("users")
        while True:
            query = users.order_by("__name__").limit(page)
            if after:
                query = query.start_after({"__name__": users.document(after)})
            ids = [snapshot.id for snapshot in query.select([]).stream()]
            yield from ids
            if len(ids) < page:
                return
            after = ids[-1]

    def _journal(self, user_id: str) -> list[JournalEntry]:
        entries = []
        for factor in self.paths.factors(user_id).list_documents():
            for snapshot in factor.collection("journal").stream():
                try:
                    entries.append(JournalEntry.model_validate(snapshot.to_dict()))
                except ValidationError:
                    log.warning("journal entry %s of user %s does not read: not embedded", snapshot.id, user_id)
        return entries

    def reembed_user(
        self,
        user_id: str,
        embedder: Embedder,
        report: ReembedReport,
        *,
        dry_run: bool = False,
        chunk: int = REEMBED_CHUNK,
    ) -> None:
        """Bring one person's vectors to ``embedder``: embed every entry that carries words and has no current
        vector (another model, another text, none), delete vectors whose entry is gone.  Idempotent: a second
        run finds everything current and writes nothing.  Each chunk is written in a transaction that reads the
        person's profile first, so a person erased meanwhile gets nothing written back."""
        report.people += 1
        stored = {s.id: s.to_dict() or {} for s in self.paths.vectors(user_id).stream()}
        for document in stored.values():
            model = str(document.get(MODEL_FIELD))
            report.models[model] = report.models.get(model, 0) + 1
        todo: list[tuple[JournalEntry, str]] = []
        spoken: set[str] = set()
        for entry in self._journal(user_id):
            said = entry_said(entry)
            if said is None:
                continue
            report.entries += 1
            spoken.add(entry.entry_id)
            existing = stored.get(entry.entry_id)
            if is_current(existing, embedder, said):
                report.current += 1
                continue
            report.stale += existing is not None
            report.missing += existing is None
            todo.append((entry, said))
        orphans = sorted(set(stored) - spoken)
        report.orphans += len(orphans)
        if dry_run:
            return
        for start in range(0, len(todo), chunk):
            part = todo[start : start + chunk]
            vectors = embedder.embed_documents([said for _, said in part])  # before the transaction
            if self._write_chunk(user_id, part, vectors, embedder, []):
                report.written += len(part)
        for start in range(0, len(orphans), chunk):
            if self._write_chunk(user_id, [], [], embedder, orphans[start : start + chunk]):
                report.removed += len(orphans[start : start + chunk])

    def _write_chunk(
        self,
        user_id: str,
        part: list[tuple[JournalEntry, str]],
        vectors: list[list[float]],
        embedder: Embedder,
        orphans: list[str],
    ) -> bool:
        profile = self.paths.user(user_id)

        @firestore.transactional
        def run(transaction: firestore.Transaction) -> bool:
            if not profile.get(transaction=transaction).exists:
                return False  # erased meanwhile: nothing about them is written back
            for (entry, said), vector in zip(part, vectors, strict=True):
                self.write(transaction, entry, vector, embedder, said)
            for entry_id in orphans:
                self.delete(transaction, user_id, entry_id)
            return True

        return run_transaction(self.client, run, timeout=self.contention_timeout)
