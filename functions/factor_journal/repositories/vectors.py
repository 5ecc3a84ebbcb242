"""Embeddings of journal entries and of people's answers, and the nearest-neighbour search over one person's.

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

Every answer a person gives carries a vector too, whatever became of it (``AnswerVectors``, below: in
``answer_vectors``, searched the same way), so what the reader missed stays findable.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from typing import Any

from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter
from google.cloud.firestore_v1.base_vector_query import DistanceMeasure
from google.cloud.firestore_v1.vector import Vector
from pydantic import ValidationError

from factor_journal.documents import ExtractionOutcome, TurnStatus
from factor_journal.embedding import Embedder, answer_said, entry_said, text_digest
from factor_journal.errors import InvalidInputError
from factor_journal.models import JournalEntry
from factor_journal.repositories.client import Repository, run_transaction
from factor_journal.repositories.journal import read_entries
from factor_journal.repositories.paths import ANSWER_VECTORS, TURNS, VECTORS

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


def nearest_documents(
    client: firestore.Client,
    group: str,
    user_id: str,
    query_vector: Sequence[float],
    model_id: str,
    limit: int,
    where: Mapping[str, Any] | None = None,
) -> list[tuple[str, dict[str, Any], float]]:
    """The person's ``limit`` vector documents of the collection group ``group`` nearest to ``query_vector`` among
    those of ``model_id`` (and with the field values ``where``) as (id, data, cosine distance): a collection-group
    query pre-filtered to the person, the model and ``where``, then the nearest-neighbour search, served by the
    group's vector index.  Every hit is checked to be the person's (``ForeignHitError``: a broken pre-filter fails
    loudly instead of leaking another person's words)."""
    if not isinstance(user_id, str) or not user_id or "/" in user_id:
        raise InvalidInputError(f"user id must be a non-empty string without '/', got {user_id!r}")
    query = client.collection_group(group).where(filter=FieldFilter("user_id", "==", user_id))
    for name, value in {MODEL_FIELD: model_id, **(where or {})}.items():
        query = query.where(filter=FieldFilter(name, "==", value))
    vector_query = query.find_nearest(
        vector_field=VECTOR_FIELD,
        query_vector=Vector(list(query_vector)),
        limit=limit,
        distance_measure=DistanceMeasure.COSINE,
        distance_result_field=DISTANCE_FIELD,
    )
    found = []
    for snapshot in vector_query.stream():  # type: ignore[call-arg]  # the SDK's stub types find_nearest's result oddly
        data = snapshot.to_dict() or {}
        owner = snapshot.reference.parent.parent
        if data.get("user_id") != user_id or owner is None or owner.id != user_id:
            raise ForeignHitError(f"the search for one person returned {snapshot.reference.path}")
        found.append((snapshot.id, data, float(data.get(DISTANCE_FIELD, 2.0))))
    return found


@dataclass
class Reembedded:
    """What ``reembed`` found and did for one kind of vector: ``stale`` counts vectors of another model or text (or,
    for an answer, another record of what became of it), ``missing`` the ones there should be and are not,
    ``orphans`` vectors whose entry or answer is gone."""

    current: int = 0
    stale: int = 0
    missing: int = 0
    orphans: int = 0
    written: int = 0
    removed: int = 0

    @property
    def needs_work(self) -> int:
        return self.stale + self.missing + self.orphans


@dataclass
class AnswersReembedded(Reembedded):
    """``Reembedded`` for the vectors of people's answers, and how many answers carry one."""

    answers: int = 0


@dataclass
class ReembedReport(Reembedded):
    """What ``reembed`` found and did: for journal entries (``entries``: those that carry words), and for
    people's answers (``answers``)."""

    people: int = 0
    entries: int = 0
    models: dict[str, int] = field(default_factory=dict)
    answers: AnswersReembedded = field(default_factory=AnswersReembedded)

    @property
    def needs_work(self) -> int:
        return super().needs_work + self.answers.needs_work


Pending = tuple[firestore.DocumentReference, str, Callable[[Sequence[float]], dict[str, Any]]]
"""A vector to write by ``reembed``: its document, the text to embed, and the document given the vector."""


class JournalVectors(Repository):
    """Vector documents of journal entries: written with the entry, searched per person, re-embedded; and those of
    people's answers (``answers``), re-embedded with them."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.answers = AnswerVectors(*args, **kwargs)

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

    # The search -------------------------------------------------------------------------------------

    def nearest(self, user_id: str, query_vector: Sequence[float], model_id: str, limit: int) -> list[VectorHit]:
        """The person's ``limit`` entries nearest to ``query_vector`` among the vectors of ``model_id``, nearest
        first: pre-filtered to the person and the model, then the nearest-neighbour search (cosine)."""
        found = nearest_documents(self.client, VECTORS, user_id, query_vector, model_id, limit)
        hits = [VectorHit(id_, str(data.get("factor_id")), distance) for id_, data, distance in found]
        return sorted(hits, key=lambda hit: (hit.distance, hit.entry_id))

    def entries(self, user_id: str, hits: Sequence[VectorHit]) -> dict[str, JournalEntry]:
        """The journal entries the hits belong to (one batched read), by entry id; an entry that is gone or no
        longer reads is left out."""
        return read_entries(self.paths, user_id, [(hit.factor_id, hit.entry_id) for hit in hits])

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
        vector (another model, another text, none), delete vectors whose entry is gone; then the same for their
        answers (``AnswerVectors.reembed_user``).  Idempotent: a second run finds everything current and writes
        nothing.  Each chunk is written in a transaction that reads the person's profile first, so a person
        erased meanwhile gets nothing written back."""
        report.people += 1
        stored = {s.id: s.to_dict() or {} for s in self.paths.vectors(user_id).stream()}
        for document in stored.values():
            model = str(document.get(MODEL_FIELD))
            report.models[model] = report.models.get(model, 0) + 1
        todo: list[Pending] = []
        spoken: set[str] = set()
        journal = self._journal(user_id)
        for entry in journal:
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
            ref = self.paths.vector(user_id, entry.entry_id)
            todo.append((ref, said, partial(vector_document, entry, embedder=embedder, said=said)))
        orphans = [self.paths.vector(user_id, entry_id) for entry_id in sorted(set(stored) - spoken)]
        report.orphans += len(orphans)
        if not dry_run:
            bring_current(self, user_id, todo, orphans, embedder, chunk, report)
        self.answers.reembed_user(user_id, embedder, report.answers, journal, dry_run=dry_run, chunk=chunk)


def bring_current(
    repository: Repository,
    user_id: str,
    todo: Sequence[Pending],
    orphans: Sequence[firestore.DocumentReference],
    embedder: Embedder,
    chunk: int,
    counts: Reembedded,
) -> None:
    """Write the ``todo`` vectors (embedded a chunk at a time, before its transaction) and delete the ``orphans``,
    a chunk per transaction that reads the person's profile first (a person erased meanwhile gets nothing written
    back), counting each chunk done in ``counts`` as it is done (an interrupted run says how far it got)."""
    for start in range(0, len(todo), chunk):
        part = todo[start : start + chunk]
        vectors = embedder.embed_documents([said for _, said, _ in part])
        writes = [(ref, document(vector)) for (ref, _, document), vector in zip(part, vectors, strict=True)]
        counts.written += len(part) if _write_chunk(repository, user_id, writes, []) else 0
    for start in range(0, len(orphans), chunk):
        part_removed = orphans[start : start + chunk]
        counts.removed += len(part_removed) if _write_chunk(repository, user_id, [], part_removed) else 0


def _write_chunk(
    repository: Repository,
    user_id: str,
    writes: Sequence[tuple[firestore.DocumentReference, dict[str, Any]]],
    deletes: Sequence[firestore.DocumentReference],
) -> bool:
    profile = repository.paths.user(user_id)

    @firestore.transactional
    def run(transaction: firestore.Transaction) -> bool:
        if not profile.get(transaction=transaction).exists:
            return False  # erased meanwhile: nothing about them is written back
        for ref, document in writes:
            transaction.set(ref, document)
        for ref in deletes:
            transaction.delete(ref)
        return True

    return run_transaction(repository.client, run, timeout=repository.contention_timeout)


# The answers people gave ------------------------------------------------------------------------------------


UNDERSTOOD_FIELD = "understood"  # whether the answer fed journal entries: the pre-filter of a search for the others
ANSWERED = frozenset({TurnStatus.processed, TurnStatus.no_update})
"""The answers that carry a vector: every one analysed, whatever became of it (read into entries, nothing
understood, refused by the screen); not an invalid turn, nor one over the rate limit until it is analysed."""


def answer_id_of(session_id: str, turn_id: str) -> str:
    """The id of an answer's vector document: a digest of where it was given (unique per person, as ids never hold
    a "/")."""
    return hashlib.sha256(f"{session_id}/{turn_id}".encode()).hexdigest()[:24]


@dataclass(frozen=True)
class Answered:
    """An answer a person gave, as its vector document records it: where and when, what became of it (its status,
    the screen's kind when refused) and the journal entries it fed (entry id -> factor id; none: not part of the
    assessment yet)."""

    user_id: str
    session_id: str
    turn_id: str
    said_at: datetime
    status: str
    screened: str | None = None
    entries: Mapping[str, str] = field(default_factory=dict)

    def document(self, vector: Sequence[float], embedder: Embedder, said: str) -> dict[str, Any]:
        return {
            "user_id": self.user_id,
            "session_id": self.session_id,
            "turn_id": self.turn_id,
            "said_at": self.said_at,
            "status": self.status,
            "screened": self.screened,
            "entries": dict(self.entries),
            UNDERSTOOD_FIELD: bool(self.entries),
            VECTOR_FIELD: Vector(list(vector)),
            MODEL_FIELD: embedder.model_id,
            "embedding_dimensions": embedder.dimensions,
            "said_digest": text_digest(said),
        }


@dataclass(frozen=True)
class AnswerHit:
    """One answer the search found: where it was given and when, the journal entries it fed (entry id -> factor id;
    none: not part of the assessment yet), and how far (cosine distance)."""

    answer_id: str
    session_id: str
    turn_id: str
    said_at: datetime | None
    entries: Mapping[str, str]
    distance: float

    @property
    def similarity(self) -> float:
        return 1.0 - self.distance


class AnswerVectors(Repository):
    """Vector documents of the answers people gave (``users/{uid}/answer_vectors/{answer_id}``), understood or not:
    written in the transaction that settles the turn (``FactorChanges``), server-only like the journal's, with the
    same model bookkeeping; searched per person; re-embedded from the turns.  The document::

        user_id, session_id, turn_id, said_at         whose answer, where and when (user_id: the pre-filter)
        status, screened                              what became of it: processed or no_update, the screen's kind
        entries, understood                           the journal entries it fed {entry_id: factor_id} ({}:
                                                      none), and whether it fed any (a search's pre-filter)
        embedding, embedding_model, embedding_dimensions, said_digest     as a journal entry's vector

    What is embedded is the person's words alone (``embedding.answer_said``), whole; the words stay in the turn."""

    def ref(self, user_id: str, session_id: str, turn_id: str) -> firestore.DocumentReference:
        """Where the vector of the answer in ``turn_id`` of ``session_id`` is kept."""
        return self.paths.answer_vector(user_id, answer_id_of(session_id, turn_id))

    def fed(
        self, transaction: firestore.Transaction, ref: firestore.DocumentReference, entries: dict[str, str]
    ) -> None:
        """In ``transaction``: the answer whose vector is at ``ref`` (which exists) fed ``entries`` too (entry id ->
        factor id), as when its person says what it was about; it is then cited through them, no longer as "not
        part of the assessment yet"."""
        if entries:
            transaction.set(ref, {"entries": entries, UNDERSTOOD_FIELD: True}, merge=True)

    def write(
        self,
        transaction: firestore.Transaction,
        answer: Answered,
        vector: Sequence[float],
        embedder: Embedder,
        said: str,
    ) -> None:
        """Write ``answer``'s vector in ``transaction`` (the one that settles its turn)."""
        ref = self.ref(answer.user_id, answer.session_id, answer.turn_id)
        transaction.set(ref, answer.document(vector, embedder, said))

    def nearest(
        self, user_id: str, query_vector: Sequence[float], model_id: str, limit: int, *, unread_only: bool = False
    ) -> list[AnswerHit]:
        """The person's ``limit`` answers nearest to ``query_vector`` among the vectors of ``model_id`` (only those
        that fed no journal entry, ``unread_only``), nearest first (``nearest_documents``: pre-filtered to the
        person, the model and, for ``unread_only``, ``understood == False``)."""
        where = {UNDERSTOOD_FIELD: False} if unread_only else None
        hits = [
            AnswerHit(
                answer_id=id_,
                session_id=str(data.get("session_id")),
                turn_id=str(data.get("turn_id")),
                said_at=data.get("said_at"),
                entries={str(k): str(v) for k, v in (data.get("entries") or {}).items()},
                distance=distance,
            )
            for id_, data, distance in nearest_documents(
                self.client, ANSWER_VECTORS, user_id, query_vector, model_id, limit, where
            )
        ]
        return sorted(hits, key=lambda hit: (hit.distance, hit.answer_id))

    def words(self, user_id: str, hits: Sequence[AnswerHit]) -> dict[str, str]:
        """What the person said in each answer (one batched read of the turns), by answer id; an answer whose turn
        is gone or holds no text is left out."""
        refs = {self.paths.turn(user_id, hit.session_id, hit.turn_id).path: hit for hit in hits}
        found: dict[str, str] = {}
        for snapshot in self.client.get_all([self.client.document(path) for path in refs]) if refs else []:
            text = (snapshot.to_dict() or {}).get("text") if snapshot.exists else None
            if isinstance(text, str) and text.strip():
                found[refs[snapshot.reference.path].answer_id] = text
        return found

    def _answers(self, user_id: str, journal: Sequence[JournalEntry]) -> dict[str, tuple[Answered, str]]:
        """Every answer of the person that carries a vector (``ANSWERED``), from their turns, by answer id, with the
        text embedded; the entries each fed are those its outcome lists that are in ``journal``."""
        factor_of = {entry.entry_id: entry.factor_id for entry in journal}
        answers = {}
        for session in self.paths.sessions(user_id).list_documents():
            for snapshot in session.collection(TURNS).stream():
                data = snapshot.to_dict() or {}
                outcome = ExtractionOutcome.of(data)
                text = data.get("text")
                said = answer_said(text) if isinstance(text, str) else None
                at = data.get("created_at")
                if data.get("role") != "user" or outcome is None or outcome.status not in ANSWERED or not said:
                    continue
                answer = Answered(
                    user_id=user_id,
                    session_id=session.id,
                    turn_id=snapshot.id,
                    said_at=at if isinstance(at, datetime) else outcome.processed_at or datetime.now(UTC),
                    status=str(outcome.status),
                    screened=str(outcome.screened.kind) if outcome.screened else None,
                    entries={eid: factor_of[eid] for eid in outcome.entry_ids if eid in factor_of},
                )
                answers[answer_id_of(session.id, snapshot.id)] = (answer, said)
        return answers

    def reembed_user(
        self,
        user_id: str,
        embedder: Embedder,
        report: AnswersReembedded,
        journal: Sequence[JournalEntry],
        *,
        dry_run: bool = False,
        chunk: int = REEMBED_CHUNK,
    ) -> None:
        """Bring one person's answer vectors to ``embedder`` and to their turns: embed every answer whose vector is
        missing, of another model or text, or records another outcome or other entries (``journal``: the person's
        entries, read by the caller), delete vectors whose answer is gone.  Idempotent, like the journal's."""
        stored = {s.id: s.to_dict() or {} for s in self.paths.answer_vectors(user_id).stream()}
        todo: list[Pending] = []
        answers = self._answers(user_id, journal)
        for answer_id, (answer, said) in answers.items():
            report.answers += 1
            existing = stored.get(answer_id)
            recorded = (
                {k: existing.get(k) for k in ("status", "screened", "entries", UNDERSTOOD_FIELD)} if existing else None
            )
            if is_current(existing, embedder, said) and recorded == {
                "status": answer.status,
                "screened": answer.screened,
                "entries": dict(answer.entries),
                UNDERSTOOD_FIELD: bool(answer.entries),
            }:
                report.current += 1
                continue
            report.stale += existing is not None
            report.missing += existing is None
            ref = self.paths.answer_vector(user_id, answer_id)
            todo.append((ref, said, partial(answer.document, embedder=embedder, said=said)))
        orphans = [self.paths.answer_vector(user_id, answer_id) for answer_id in sorted(set(stored) - set(answers))]
        report.orphans += len(orphans)
        if not dry_run:
            bring_current(self, user_id, todo, orphans, embedder, chunk, report)
