"""Factor changes: read → plan → write, one transaction per change of one user.

``FactorChanges.apply`` is read -> decide -> write in one transaction.  It reads
the user, the summary, the touched factors (and, for a turn, the turn and its
session); the pure planner (``factor_journal.planner``) decides from what was
read whether the turn is a duplicate (``read_turn``), what the states are and
which factor documents are damaged (``touched_states``), which journals must be
read as well (``journals_to_read``: late readings, damage; ``timelines_to_read``:
composites derived again), and then the change set (``plan_change``); the
repository writes all of it: journal entries, factor documents, the summary,
the day's snapshot, the person's roll-up row, and for a turn its outcome and the
session's "where were we".  A turn whose outcome already says done is not
applied again (exactly once), and a turn that no longer exists (deleted after its
claim) gets nothing applied and is not recreated (``ChangeResult.missing``).
Damaged derived documents (the summary, a factor document, the session) are
rebuilt from what they derive from and rewritten, and a damaged journal entry is
left out of its factor's fold; every damaged document the change met is set aside
in its transaction (``factor_journal.setaside``: marked or copied, listed, never
deleted), so a damaged document never fails a person's turn.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from google.cloud import firestore

from factor_journal.catalog import Catalog
from factor_journal.documents import TOLD, ExtractionOutcome, HeardReading, SessionDocument
from factor_journal.embedding import (
    Embedder,
    EmbeddingError,
    answer_said,
    default_embedder,
    entry_said,
    said_text,
)
from factor_journal.errors import AnswerNotFoundError, InvalidInputError, UnknownUserError
from factor_journal.folding import Reading
from factor_journal.graph import FactorGraph
from factor_journal.models import AssessmentSummary, FactorState, JournalEntry, UserProfile
from factor_journal.planner import (
    ChangeInputs,
    ChangeSet,
    SessionProgress,
    Step,
    TurnContext,
    attention_after,
    journals_to_read,
    moved_forward,
    plan_change,
    read_turn,
    repaired_session,
    said_in_change,
    timelines_to_read,
    touched_factors,
    touched_states,
)
from factor_journal.repositories.client import CountedClient, Repository, run_transaction
from factor_journal.repositories.journal import JournalReads
from factor_journal.repositories.locks import CommitLeases
from factor_journal.repositories.paths import SUMMARY_FIELD, Paths
from factor_journal.repositories.rows import put_row, read_row
from factor_journal.repositories.set_aside import write_set_aside
from factor_journal.repositories.vectors import Answered, JournalVectors
from factor_journal.rollup import PersonRow, person_row, snapshot_document
from factor_journal.setaside import DocumentKind, SetAside, distinct, set_aside

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ChangeResult:
    entries: list[JournalEntry]
    summary: AssessmentSummary | None
    duplicate: bool = False
    previous_outcome: ExtractionOutcome | None = None
    guarded: tuple[str, ...] = ()
    missing: bool = False  # the turn no longer existed at commit: nothing was written (nor the turn recreated)
    set_aside: tuple[str, ...] = ()  # where the damaged documents are that this change set aside

    @property
    def entry_ids(self) -> list[str]:
        return [entry.entry_id for entry in self.entries]


@dataclass(frozen=True)
class Told:
    """What a person told us an answer of theirs was about (a factor and its value, where nothing, or nothing sure,
    was understood from it), kept on its turn (``documents.TOLD``) by the transaction of their decision."""

    session_id: str
    turn_id: str
    reading: HeardReading


def write_row(
    transaction: firestore.Transaction,
    paths: Paths,
    catalog: Catalog,
    profile: UserProfile,
    summary: AssessmentSummary,
    last_active: datetime | None,
    old: PersonRow | None,
    now: datetime,
) -> PersonRow | None:
    """Replace the person's roll-up row in their organisation (``old``: the row as read in the transaction),
    with the figures moved by what changed; the row written (None: the person belongs to no organisation)."""
    if not profile.org_id:
        return None
    row = person_row(profile, summary, last_active, catalog, now)
    put_row(transaction, paths, profile.org_id, profile.user_id, old, row)
    return row


def roster_changed(writer: firestore.Transaction | firestore.WriteBatch, paths: Paths, org_id: str) -> None:
    """Count a change of who is in ``org_id`` (its document must exist): kept copies of its figures are stale."""
    writer.update(paths.organisation(org_id), {"roster": firestore.Increment(1)})


class FactorChanges(Repository):
    catalog: Catalog
    graph: FactorGraph

    def __init__(
        self, client: CountedClient, catalog: Catalog, graph: FactorGraph, *, contention_timeout: float = 120.0
    ) -> None:
        super().__init__(client, catalog, graph, contention_timeout=contention_timeout)
        self.leases = CommitLeases(client)
        self.reads = JournalReads(client, catalog, graph)
        self.vectors = JournalVectors(client, catalog, graph, contention_timeout=contention_timeout)
        self._embedder: Embedder | None | bool = False  # False: the process's default, resolved on first use

    @property
    def embedder(self) -> Embedder | None:
        """What embeds the words of new journal entries (``embedding.default_embedder``, from FJ_EMBEDDER,
        unless set); None writes no vectors."""
        if self._embedder is False:
            self._embedder = default_embedder()
        return self._embedder  # type: ignore[return-value]

    @embedder.setter
    def embedder(self, embedder: Embedder | None) -> None:
        self._embedder = embedder

    def embed_said(
        self, readings: Sequence[Reading], words: Sequence[str], answer: str | None = None
    ) -> dict[str, list[float]]:
        """The vectors of what a change's entries will say, computed before its transaction (a model call never
        runs inside one): the readings' answers and rationales, a person's ``words`` (a correction's reason) and
        the ``answer`` of the turn it settles (``embedding.answer_said``).  An embedding failure loses nothing: the
        entries and the answer are written without vectors (logged) and ``python -m factor_journal reembed`` fills
        them in."""
        embedder = self.embedder
        texts = [said_text(r.update.conversation_excerpt, r.update.rationale) for r in readings]
        texts += [said_text("", w) for w in words] + [answer or ""]
        texts = list(dict.fromkeys(t for t in texts if t))
        if embedder is None or not texts:
            return {}
        try:
            return dict(zip(texts, embedder.embed_documents(texts), strict=True))
        except EmbeddingError as error:
            log.warning("%d journal entries written without vectors (%s): run reembed", len(texts), error)
            return {}

    def apply(
        self,
        user_id: str,
        factor_ids: list[str],
        *,
        readings: list[Reading] = (),  # type: ignore[assignment]
        step: Step | None = None,
        turn: TurnContext | None = None,
        words: Sequence[str] = (),
        told: Told | None = None,
    ) -> ChangeResult:
        """Apply readings and/or a person's decision to one user's factors atomically; each new entry that
        carries words (``words``: what a person's decision says) gets its vector in the same transaction.  With
        ``turn``: a turn analysed already writes nothing (``duplicate``), nor does one that no longer exists
        (``missing``: deleted after its claim, it is not recreated and its readings are not applied).  With
        ``told`` (a person's decision about what an answer was about), the answer's turn keeps it, in the same
        transaction; ``AnswerNotFoundError`` and nothing written when that turn no longer exists."""
        if not isinstance(user_id, str) or not user_id or "/" in user_id:
            raise InvalidInputError(f"user id must be a non-empty string without '/', got {user_id!r}")
        touched = touched_factors(self.graph, list(factor_ids))
        paths = self.paths
        answer = answer_said(turn.answer) if turn is not None else None
        said_vectors = self.embed_said(list(readings), words, answer)

        @firestore.transactional
        def run(transaction: firestore.Transaction) -> ChangeResult:
            refs = [paths.user(user_id), paths.summary(user_id), *[paths.factor(user_id, fid) for fid in touched]]
            if turn is not None:
                refs += [paths.turn(user_id, turn.session_id, turn.turn_id), paths.session(user_id, turn.session_id)]
            told_ref = paths.turn(user_id, told.session_id, told.turn_id) if told is not None else None
            told_vector = self.vectors.answers.ref(user_id, told.session_id, told.turn_id) if told is not None else None
            told_refs = [ref for ref in (told_ref, told_vector) if ref is not None]
            snapshots = {s.reference.path: s for s in self.client.get_all([*refs, *told_refs], transaction=transaction)}
            user_snapshot = snapshots[refs[0].path]
            if not user_snapshot.exists:
                raise UnknownUserError(user_id)
            if told is not None and told_ref is not None and not snapshots[told_ref.path].exists:
                raise AnswerNotFoundError(told.turn_id)
            found: list[SetAside] = []  # damaged documents met by this change's reads: set aside by its writes
            read = None
            if turn is not None:
                read = read_turn(
                    turn.session_id, snapshots[refs[-2].path].to_dict(), snapshots[refs[-1].path].to_dict()
                )
                if read.gone:  # deleted after its claim: applying it would recreate it as a stub
                    log.info("turn %s/%s of user %s is gone: nothing applied", turn.session_id, turn.turn_id, user_id)
                    return ChangeResult(entries=[], summary=None, missing=True)
                if read.duplicate:
                    return ChangeResult(entries=[], summary=None, duplicate=True, previous_outcome=read.outcome)
                if read.session_damage:  # rewritten whole by this change, from what still reads
                    log.warning(
                        "session %s of user %s was damaged (%s): rewritten",
                        turn.session_id,
                        user_id,
                        ", ".join(read.session_damage),
                    )
            now = datetime.now(UTC)
            old_summary, _ = self.reads.summary_from(  # a damaged one is rebuilt here and rewritten by this change
                user_id, snapshots[refs[1].path].to_dict(), now, transaction, found
            )
            documents = {fid: snapshots[paths.factor(user_id, fid).path].to_dict() for fid in touched}
            states, damaged = touched_states(
                self.catalog, touched, documents, self.known_states(transaction, user_id, old_summary)
            )
            for fid, damage in damaged.items():  # folded again from its journal and rewritten by this change
                log.warning("factor %s of user %s was damaged (%s): journal folded again", fid, user_id, damage)
                path = paths.factor(user_id, fid).path
                found.append(set_aside(user_id, DocumentKind.factor, path, documents[fid], damage, now))
            journals = {  # a damaged entry is left out of its fold, and set aside below
                fid: self.reads.journal(user_id, fid, transaction, found)
                for fid in journals_to_read(states, list(readings), damaged)
            }
            said = said_in_change(list(readings), list(factor_ids) if step is not None else [], now)
            timelines = {  # a composite built on a factor folded again is derived again along its components
                fid: journals[fid] if fid in journals else self.reads.journal(user_id, fid, transaction, found)
                for fid in timelines_to_read(self.catalog, self.graph, states, journals, said)
            }
            user_data = user_snapshot.to_dict() or {}
            org_id = user_data.get("org_id")
            row = read_row(paths, org_id, user_id, transaction, found) if isinstance(org_id, str) and org_id else None
            inputs = ChangeInputs(
                user_id=user_id,
                summary=old_summary,
                states=states,
                journals=journals,
                last_active=user_data.get("last_active"),
                session=read.session if read else None,
                now=now,
                timelines=timelines,
                outcome=read.outcome if read else None,
            )
            plan = plan_change(self.catalog, self.graph, inputs, readings=list(readings), step=step, turn=turn)
            profile = UserProfile.model_validate(user_data)
            repaired = read.session if read is not None and read.session_damage else None
            if repaired is not None and turn is not None:
                damage = f"fields that no longer read: {', '.join(read.session_damage)}"  # type: ignore[union-attr]
                session_path, stored = paths.session(user_id, turn.session_id).path, snapshots[refs[-1].path].to_dict()
                found.append(set_aside(user_id, DocumentKind.session, session_path, stored, damage, now))
            self._write(transaction, user_id, profile, plan, inputs.now, turn, repaired, row)
            self._write_vectors(transaction, plan.entries, said_vectors)
            if turn is not None and answer is not None and plan.outcome is not None:
                self._write_answer_vector(transaction, user_id, turn, answer, plan, said_vectors)
            if told is not None and told_ref is not None:
                kept = {**told.reading.to_document(), "told_at": now}
                kept.pop("factor_id", None)
                transaction.set(told_ref, {TOLD: {told.reading.factor_id: kept}}, merge=True)
                if told_vector is not None and snapshots[told_vector.path].exists:  # part of the assessment now
                    fed = {e.entry_id: e.factor_id for e in plan.entries if e.factor_id == told.reading.factor_id}
                    self.vectors.answers.fed(transaction, told_vector, fed)
            write_set_aside(transaction, paths, user_id, found, profile_exists=True)
            return ChangeResult(
                entries=plan.entries,
                summary=plan.summary,
                guarded=tuple(plan.guarded),
                set_aside=tuple(record.path for record in distinct(found)),
            )

        if turn is None:  # a person's decision or a direct write: serialised within this process only
            with self.leases.local(user_id):
                return run_transaction(self.client, run, timeout=self.contention_timeout)
        with self.leases.held(user_id):
            return run_transaction(self.client, run, timeout=self.contention_timeout)

    def known_states(
        self, transaction: firestore.Transaction, user_id: str, summary: AssessmentSummary | None
    ) -> dict[str, FactorState]:
        """Every factor state a change plans with: the summary carries them all (no scan)."""
        return dict(summary.factors) if summary else {}

    def _write_vectors(
        self, transaction: firestore.Transaction, entries: list[JournalEntry], said_vectors: dict[str, list[float]]
    ) -> None:
        """The vectors of the change's new entries that carry words, beside them in the transaction (an entry
        rewritten by a refold keeps its words, so its vector stands)."""
        embedder = self.embedder
        if embedder is None:
            return
        for entry in entries:
            said = entry_said(entry)
            if said is None:
                continue
            vector = said_vectors.get(said)
            if vector is None and embedder.local:  # in-process and cheap: no I/O inside the transaction
                vector = embedder.embed_documents([said])[0]
            if vector is None:
                log.warning("journal entry %s of user %s has no vector yet: run reembed", entry.entry_id, entry.user_id)
                continue
            self.vectors.write(transaction, entry, vector, embedder, said)

    def _write_answer_vector(
        self,
        transaction: firestore.Transaction,
        user_id: str,
        turn: TurnContext,
        said: str,
        plan: ChangeSet,
        said_vectors: dict[str, list[float]],
    ) -> None:
        """The vector of the person's answer in the turn this change settles, whatever became of it (read into
        entries, nothing understood, refused by the screen), beside its outcome in the transaction, with the
        entries it fed (none: not part of the assessment yet)."""
        embedder, outcome = self.embedder, plan.outcome
        if embedder is None or outcome is None:
            return
        vector = said_vectors.get(said)
        if vector is None and embedder.local:  # in-process and cheap: no I/O inside the transaction
            vector = embedder.embed_documents([said])[0]
        if vector is None:
            log.warning("answer %s of user %s has no vector yet: run reembed", turn.turn_id, user_id)
            return
        fed = set(outcome.entry_ids)
        answer = Answered(
            user_id=user_id,
            session_id=turn.session_id,
            turn_id=turn.turn_id,
            said_at=turn.observed_at,
            status=str(outcome.status),
            screened=str(outcome.screened.kind) if outcome.screened else None,
            entries={entry.entry_id: entry.factor_id for entry in plan.entries if entry.entry_id in fed},
        )
        self.vectors.answers.write(transaction, answer, vector, embedder, said)

    def _write(
        self,
        transaction: firestore.Transaction,
        user_id: str,
        profile: UserProfile,
        plan: ChangeSet,
        now: datetime,
        turn: TurnContext | None,
        repaired: SessionDocument | None = None,
        row: PersonRow | None = None,
    ) -> None:
        """The change's writes; ``repaired`` (what still read of a damaged session) makes the session
        document be written whole instead of merged into; ``row``: the person's roll-up row as read."""
        paths = self.paths
        for entry in [*plan.entries, *plan.rewritten]:
            transaction.set(paths.journal(user_id, entry.factor_id).document(entry.entry_id), entry.to_document())
        for factor_id, entry_id in plan.removed:  # a composite's entries from states that never held
            transaction.delete(paths.journal(user_id, factor_id).document(entry_id))
        for fid, state in plan.states.items():
            transaction.set(paths.factor(user_id, fid), state.to_document())
        transaction.set(paths.summary(user_id), {SUMMARY_FIELD: plan.summary.to_document()})
        day = now.strftime("%Y-%m-%d")
        transaction.set(paths.snapshot(user_id, day), snapshot_document(plan.summary, day).to_document())
        attention = attention_after(profile.attention_turns, turn)
        if attention != profile.attention_turns:  # the turn is done: it needs nobody's attention any more
            profile = profile.model_copy(update={"attention_turns": attention})
            transaction.set(paths.user(user_id), {"attention_turns": attention}, merge=True)
        write_row(transaction, paths, self.catalog, profile, plan.summary, plan.last_active, row, now)
        if turn is not None and plan.outcome is not None and plan.session is not None:
            turn_ref = paths.turn(user_id, turn.session_id, turn.turn_id)
            transaction.set(turn_ref, {"extraction": plan.outcome.to_document()}, merge=True)
            session_ref = paths.session(user_id, turn.session_id)
            if repaired is None:
                transaction.set(session_ref, _session_fields(plan.session), merge=True)
            else:
                transaction.set(session_ref, repaired_session(repaired, plan.session))
            usage = _usage(plan.session)
            transaction.set(paths.user(user_id), {"usage": usage, "last_active": plan.last_active}, merge=True)


def _usage(progress: SessionProgress) -> dict[str, Any]:
    return {
        "prompt_tokens": firestore.Increment(progress.prompt_tokens),
        "response_tokens": firestore.Increment(progress.response_tokens),
    }


def _session_fields(progress: SessionProgress) -> dict[str, Any]:
    """The fields a turn merges into its session: counts added, "where were we" moved forward."""
    return {
        "session_id": progress.session_id,
        "analysed_turns": firestore.Increment(1),
        "usage": _usage(progress),
        **moved_forward(progress),
    }
