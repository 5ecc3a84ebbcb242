"""``FactorJournalStore``: the one place that reads and writes Firestore.

Layout (per user; nothing is shared between users)::

    users/{uid}                                  UserProfile
    users/{uid}/factors/{factor_id}              FactorState
    users/{uid}/factors/{factor_id}/journal/{id} JournalEntry
    users/{uid}/metadata/assessment              {"assessment_summary": AssessmentSummary}

Promises:

* Every change writes its journal entries, the factor documents and the
  summary in one transaction; concurrent changes of one user serialise on the
  summary document and lose nothing.
* The summary is maintained incrementally: a change reads the user, the
  summary and the factors it touches (plus a receipt when one is given),
  never a scan of all factors or of any journal.
* Bad input raises a typed error from ``factor_journal.errors`` before
  anything is written.
"""

from __future__ import annotations

import hashlib
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from datetime import UTC, datetime
from typing import Any

from google.api_core import exceptions as api_exceptions
from google.api_core import retry as api_retry
from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter
from google.cloud.firestore_v1.field_path import FieldPath

from factor_journal import transitions
from factor_journal.catalog import Catalog, load_catalog
from factor_journal.conversation import InvalidTurnError, Turn, parse_turn
from factor_journal.errors import (
    DerivedFactorError,
    InvalidConfidenceError,
    InvalidInputError,
    MissingRationaleError,
    NoConflictError,
    NotAssessedError,
    UnknownFactorError,
    UnknownUserError,
    ValueOutOfScaleError,
)
from factor_journal.graph import FactorGraph, graph_for
from factor_journal.models import (
    SERVER_MANAGED_PROFILE_FIELDS,
    ArchetypeNeed,
    AssessmentSummary,
    EntryKind,
    FactorExplanation,
    FactorReference,
    FactorState,
    HistoryPage,
    InferenceStatus,
    InferredUpdate,
    JournalEntry,
    LastConversation,
    Source,
    UserProfile,
)
from factor_journal.rollup import leave_organisation, person_row, shard_of, snapshot_document
from factor_journal.summary import build_summary
from factor_journal.transitions import Transition

SUMMARY_FIELD = "assessment_summary"
EXCERPT_LIMIT = 1200  # a journal entry's excerpt: 2-3 exchanges
LAST_EXCERPT_CHARS = 1000  # the "where were we" card's excerpt (its most recent part)
RECEIPT_DONE = frozenset({"processed", "no_update"})

Plan = Callable[[dict[str, FactorState], datetime], list[Transition]]


@dataclass
class OpStats:
    """Document reads and writes this store has issued (retried attempts included)."""

    reads: int = 0
    writes: int = 0
    transactions: int = 0

    def reset(self) -> None:
        self.reads = self.writes = self.transactions = 0


@dataclass(frozen=True)
class TurnReceipt:
    """Makes the analysis of one conversation turn exactly-once.

    In the same transaction as the factor changes, the outcome is written to the
    turn (``extraction``) and the session's "where were we" fields are moved
    forward; a turn whose outcome already says done is not applied again.
    """

    session_id: str
    turn_id: str
    observed_at: datetime
    details: dict[str, Any] = dataclass_field(default_factory=dict)


@dataclass(frozen=True)
class ChangeResult:
    entries: list[JournalEntry]
    summary: AssessmentSummary | None
    duplicate: bool = False
    previous_outcome: dict[str, Any] | None = None

    @property
    def entry_ids(self) -> list[str]:
        return [entry.entry_id for entry in self.entries]


TRANSACTION_ATTEMPTS = 5


def _is_contention(error: BaseException) -> bool:
    """An aborted transaction (or the client's 'attempts exhausted' wrapper around one)."""
    return isinstance(error, api_exceptions.Aborted) or (
        type(error) is ValueError and isinstance(error.__cause__, api_exceptions.Aborted)
    )


def _now() -> datetime:
    return datetime.now(UTC)


def entry_id_for(key: str | None, factor_id: str) -> str:
    """A journal entry id: deterministic for an idempotency key, random otherwise."""
    if key is None:
        return uuid.uuid4().hex[:20]
    return hashlib.sha256(f"{key}|{factor_id}".encode()).hexdigest()[:20]


class FactorJournalStore:
    def __init__(
        self,
        client: firestore.Client,
        catalog: Catalog | None = None,
        *,
        contention_timeout: float = 120.0,
        summary_by_scan: bool = False,
    ) -> None:
        """``summary_by_scan`` switches to the design's baseline (rebuild the summary by
        reading every factor and the journals of unconfirmed ones); benchmarks only."""
        self.client = client
        self.catalog = catalog or load_catalog()
        self.graph: FactorGraph = graph_for(self.catalog)
        self.contention_timeout = contention_timeout
        self._user_locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()
        self.summary_by_scan = summary_by_scan
        self.stats = OpStats()

    # Paths ------------------------------------------------------------------------------

    def _user_ref(self, user_id: str) -> firestore.DocumentReference:
        return self.client.collection("users").document(user_id)

    def _summary_ref(self, user_id: str) -> firestore.DocumentReference:
        return self._user_ref(user_id).collection("metadata").document("assessment")

    def _factor_ref(self, user_id: str, factor_id: str) -> firestore.DocumentReference:
        return self._user_ref(user_id).collection("factors").document(factor_id)

    def _journal(self, user_id: str, factor_id: str) -> firestore.CollectionReference:
        return self._factor_ref(user_id, factor_id).collection("journal")

    def org_ref(self, org_id: str) -> firestore.DocumentReference:
        return self.client.collection("organisations").document(org_id)

    def session_ref(self, user_id: str, session_id: str) -> firestore.DocumentReference:
        return self._user_ref(user_id).collection("conversations").document(session_id)

    def turns(self, user_id: str, session_id: str) -> firestore.CollectionReference:
        return self.session_ref(user_id, session_id).collection("turns")

    # Users ------------------------------------------------------------------------------

    def register_user(self, profile: UserProfile) -> None:
        """Create (or update) a user and give them an empty summary if they have none."""
        now = _now()
        profile = profile.model_copy(update={"created_at": profile.created_at or now})

        @firestore.transactional
        def run(transaction: firestore.Transaction) -> None:
            user_snapshot, summary_snapshot = (
                self._user_ref(profile.user_id).get(transaction=transaction),
                self._summary_ref(profile.user_id).get(transaction=transaction),
            )
            self.stats.reads += 2
            moved_from = (user_snapshot.to_dict() or {}).get("org_id") if user_snapshot.exists else None
            if moved_from and moved_from != profile.org_id:  # the old organisation loses row and manager at once
                leave_organisation(transaction, self.client, profile.user_id, moved_from, self.stats)
            document = profile.to_document()
            if user_snapshot.exists:  # never reset what the pipeline and the reminder job keep
                document = {k: v for k, v in document.items() if k not in SERVER_MANAGED_PROFILE_FIELDS}
            transaction.set(self._user_ref(profile.user_id), document, merge=True)
            self.stats.writes += 1
            if summary_snapshot.exists:
                summary = AssessmentSummary.model_validate(summary_snapshot.to_dict()[SUMMARY_FIELD])
            else:
                summary = build_summary(self.catalog, self.graph, {}, None, now)
                transaction.set(self._summary_ref(profile.user_id), {SUMMARY_FIELD: summary.to_document()})
                self.stats.writes += 1
            if profile.org_id:
                known = user_snapshot.to_dict() or {} if user_snapshot.exists else {}
                self._write_row(transaction, profile, summary, known.get("last_active"))

        self.run_transaction(run)

    def get_user(self, user_id: str) -> UserProfile | None:
        snapshot = self._user_ref(user_id).get()
        self.stats.reads += 1
        return UserProfile.model_validate(snapshot.to_dict()) if snapshot.exists else None

    # Conversations ----------------------------------------------------------------------

    def start_session(self, user_id: str, session_id: str | None = None, *, started_at: datetime | None = None) -> str:
        """Create a conversation session for a registered user; returns its id."""
        if self.get_user(user_id) is None:
            raise UnknownUserError(user_id)
        ref = self.session_ref(user_id, session_id) if session_id else self._user_ref(user_id).collection("conversations").document()
        started = started_at or _now()
        ref.set({"session_id": ref.id, "started_at": started}, merge=True)
        self.stats.writes += 1
        return ref.id

    def add_turn(
        self, user_id: str, session_id: str, role: str, text: str, *,
        created_at: datetime | None = None, turn_id: str | None = None,
    ) -> str:  # fmt: skip
        """Write a conversation turn where the trigger listens; returns its id."""
        collection = self.turns(user_id, session_id)
        ref = collection.document(turn_id) if turn_id else collection.document()
        ref.set({"role": role, "text": text, "created_at": created_at or firestore.SERVER_TIMESTAMP})
        self.stats.writes += 1
        return ref.id

    def turn_data(self, user_id: str, session_id: str, turn_id: str) -> dict[str, Any] | None:
        snapshot = self.turns(user_id, session_id).document(turn_id).get()
        self.stats.reads += 1
        return snapshot.to_dict() if snapshot.exists else None

    def wait_for_analysis(self, user_id: str, session_id: str, turn_id: str, timeout: float) -> str | None:
        """The turn's extraction status once the trigger has analysed it, or None after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            status = ((self.turn_data(user_id, session_id, turn_id) or {}).get("extraction") or {}).get("status")
            if status or time.monotonic() >= deadline:
                return status
            time.sleep(0.2)

    def session_data(self, user_id: str, session_id: str) -> dict[str, Any] | None:
        snapshot = self.session_ref(user_id, session_id).get()
        self.stats.reads += 1
        return snapshot.to_dict() if snapshot.exists else None

    def recent_turns(self, user_id: str, session_id: str, *, before: datetime, limit: int) -> list[Turn]:
        """Up to ``limit`` valid turns of the session created before ``before``, oldest first."""
        query = (
            self.turns(user_id, session_id)
            .where(filter=FieldFilter("created_at", "<", before))
            .order_by("created_at", direction=firestore.Query.DESCENDING)
            .limit(limit)
        )
        snapshots = list(query.stream())
        self._count_query(snapshots)
        turns = []
        for snapshot in reversed(snapshots):
            try:
                turns.append(parse_turn(snapshot.id, snapshot.to_dict()))
            except InvalidTurnError:
                continue  # an invalid turn is recorded as failed on its own; it is no context
        return turns

    def session_turns(self, user_id: str, session_id: str) -> list[tuple[str, dict[str, Any]]]:
        """Every turn of a session, oldest first, as (turn id, document)."""
        snapshots = list(self.turns(user_id, session_id).order_by("created_at").stream())
        self._count_query(snapshots)
        return [(snapshot.id, snapshot.to_dict() or {}) for snapshot in snapshots]

    def session_ids(self, user_id: str) -> list[str]:
        snapshots = list(self._user_ref(user_id).collection("conversations").stream())
        self._count_query(snapshots)
        return [snapshot.id for snapshot in snapshots]

    def record_turn_failure(self, user_id: str, session_id: str, turn_id: str, details: dict[str, Any]) -> None:
        """Mark a turn failed (with why), unless it was processed meanwhile; counts the attempts."""
        turn_ref = self.turns(user_id, session_id).document(turn_id)

        @firestore.transactional
        def run(transaction: firestore.Transaction) -> None:
            snapshot = turn_ref.get(transaction=transaction)
            self.stats.reads += 1
            if not snapshot.exists:
                return
            previous = (snapshot.to_dict() or {}).get("extraction") or {}
            if previous.get("status") in RECEIPT_DONE:
                return
            outcome = {
                **details,
                "status": "failed",
                "entry_ids": [],
                "attempts": int(previous.get("attempts", 0)) + 1,
                "failed_at": _now(),
            }
            transaction.set(turn_ref, {"extraction": outcome}, merge=True)
            self.stats.writes += 1

        self.run_transaction(run)

    # Validation -------------------------------------------------------------------------

    def _assessable(self, factor_id: str) -> None:
        if not isinstance(factor_id, str) or not self.catalog.has_factor(factor_id):
            raise UnknownFactorError(str(factor_id))
        if self.catalog.factor(factor_id).is_composite:
            raise DerivedFactorError(factor_id)

    def _check_value(self, factor_id: str, value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
            raise InvalidInputError(f"value for {factor_id!r} must be a number, got {value!r}")
        scale = self.catalog.factor(factor_id).scale
        if not scale.contains(value):
            raise ValueOutOfScaleError(factor_id, value, scale.min, scale.max)
        return float(value)

    @staticmethod
    def _check_confidence(confidence: Any) -> float:
        if isinstance(confidence, bool) or not isinstance(confidence, int | float) or not 0 <= confidence <= 1:
            raise InvalidConfidenceError(confidence)
        return float(confidence)

    @staticmethod
    def _check_rationale(rationale: Any, what: str) -> str:
        if not isinstance(rationale, str) or not rationale.strip():
            raise MissingRationaleError(what)
        return rationale.strip()

    def validate_update(self, update: InferredUpdate) -> InferredUpdate:
        """The update with its fields checked against the catalog; raises a typed error otherwise."""
        self._assessable(update.factor_id)
        value = self._check_value(update.factor_id, update.value)
        confidence = self._check_confidence(update.confidence)
        rationale = self._check_rationale(update.rationale, f"the update of {update.factor_id!r}")
        for source in update.inferred_from:
            if not self.catalog.has_factor(source):
                raise UnknownFactorError(source)
        return update.model_copy(
            update={
                "value": value,
                "confidence": confidence,
                "rationale": rationale,
                "conversation_excerpt": update.conversation_excerpt[:EXCERPT_LIMIT],
                "inferred_from": sorted(set(update.inferred_from) - {update.factor_id}),
            }
        )

    # The transactional core -------------------------------------------------------------

    def run_transaction(self, function: Callable[[firestore.Transaction], Any]) -> Any:
        """Run a transactional function; contention is retried with jittered exponential backoff.

        The client retries an aborted commit at once; when several writers of one
        user contend (the emulator in particular) that can livelock, so each round
        of ``TRANSACTION_ATTEMPTS`` is itself retried after a growing, random pause.
        """
        self.stats.transactions += 1
        retry = api_retry.Retry(
            predicate=_is_contention, initial=0.02, maximum=1.0, multiplier=2.0, timeout=self.contention_timeout
        )
        return retry(lambda: function(self.client.transaction(max_attempts=TRANSACTION_ATTEMPTS)))()

    def _user_lock(self, user_id: str) -> threading.Lock:
        """Serialises this process's changes of one user: they would only contend on the summary.
        Writers in other processes are still serialised by the transaction itself."""
        with self._locks_guard:
            return self._user_locks.setdefault(user_id, threading.Lock())

    def _change(
        self,
        user_id: str,
        factor_ids: Sequence[str],
        plan: Plan,
        receipt: TurnReceipt | None = None,
    ) -> ChangeResult:
        """Read what a change needs, apply ``plan`` to the states, write everything atomically."""
        if not isinstance(user_id, str) or not user_id or "/" in user_id:
            raise InvalidInputError(f"user id must be a non-empty string without '/', got {user_id!r}")
        composites = sorted({c for fid in factor_ids for c in self.graph.composites_of(fid)})
        touched = list(dict.fromkeys([*factor_ids, *composites]))

        @firestore.transactional
        def run(transaction: firestore.Transaction) -> ChangeResult:
            refs = [self._user_ref(user_id), self._summary_ref(user_id)]
            refs += [self._factor_ref(user_id, fid) for fid in touched]
            if receipt is not None:
                turn_ref = self.turns(user_id, receipt.session_id).document(receipt.turn_id)
                session_ref = self.session_ref(user_id, receipt.session_id)
                refs += [turn_ref, session_ref]
            snapshots = {s.reference.path: s for s in self.client.get_all(refs, transaction=transaction)}
            self.stats.reads += len(refs)
            if not snapshots[refs[0].path].exists:
                raise UnknownUserError(user_id)
            if receipt is not None:
                previous = (snapshots[turn_ref.path].to_dict() or {}).get("extraction")
                if isinstance(previous, dict) and previous.get("status") in RECEIPT_DONE:
                    return ChangeResult(entries=[], summary=None, duplicate=True, previous_outcome=previous)

            summary_data = (snapshots[refs[1].path].to_dict() or {}).get(SUMMARY_FIELD)
            old_summary = AssessmentSummary.model_validate(summary_data) if summary_data else None
            if self.summary_by_scan:
                states = self._scan_states(user_id, transaction)
            else:
                states = dict(old_summary.factors) if old_summary else {}
            for fid in touched:
                data = snapshots[self._factor_ref(user_id, fid).path].to_dict()
                states[fid] = (
                    FactorState.model_validate(data)
                    if data
                    else FactorState(factor_id=fid, category=self.catalog.factor(fid).category)
                )

            now = _now()
            applied = plan(states, now)
            for change in applied:
                states[change.state.factor_id] = change.state
            flagged = self._flag_rechecks(applied, states, now)
            derived = self._derive_composites(user_id, composites, states, applied, now)
            applied += derived

            written = {change.state.factor_id for change in applied} | flagged
            for change in applied:
                transaction.set(self._journal(user_id, change.state.factor_id).document(change.entry.entry_id),
                                change.entry.to_document())  # fmt: skip
            for fid in written:
                transaction.set(self._factor_ref(user_id, fid), states[fid].to_document())
            last = self._last_conversation(applied) or (old_summary.last_conversation if old_summary else None)
            summary = build_summary(self.catalog, self.graph, states, last, now)
            transaction.set(self._summary_ref(user_id), {SUMMARY_FIELD: summary.to_document()})
            self.stats.writes += len(applied) + len(written) + 1
            user_data = snapshots[refs[0].path].to_dict() or {}
            last_active = user_data.get("last_active")
            if receipt is not None and (last_active is None or receipt.observed_at > last_active):
                last_active = receipt.observed_at
            self._write_derived(transaction, UserProfile.model_validate(user_data), summary, last_active, now)
            entries = [change.entry for change in applied]
            if receipt is not None:
                outcome = {
                    **receipt.details,
                    "status": "processed" if entries else "no_update",
                    "entry_ids": [entry.entry_id for entry in entries],
                    "factor_ids": sorted({entry.factor_id for entry in entries}),
                    "processed_at": now,
                }
                transaction.set(turn_ref, {"extraction": outcome}, merge=True)
                session = snapshots[session_ref.path].to_dict() or {}
                progress = self._session_progress(session, receipt, entries)
                transaction.set(session_ref, progress, merge=True)
                transaction.set(refs[0], {"usage": progress["usage"], "last_active": last_active}, merge=True)
                self.stats.writes += 3
            return ChangeResult(entries=entries, summary=summary)

        with self._user_lock(user_id):
            return self.run_transaction(run)

    def _write_derived(
        self, transaction: firestore.Transaction, profile: UserProfile, summary: AssessmentSummary,
        last_active: datetime | None, now: datetime,
    ) -> None:  # fmt: skip
        """The day's snapshot of the summary and the person's row in their organisation's roll-up."""
        day = now.strftime("%Y-%m-%d")
        transaction.set(self._user_ref(profile.user_id).collection("snapshots").document(day), snapshot_document(summary, day))
        self.stats.writes += 1
        if profile.org_id:
            self._write_row(transaction, profile, summary, last_active)

    def _write_row(
        self, transaction: firestore.Transaction, profile: UserProfile, summary: AssessmentSummary,
        last_active: datetime | None,
    ) -> None:  # fmt: skip
        """Replace the person's row in their organisation's roll-up shard (a blind write: no read)."""
        row = person_row(profile, summary, last_active)
        shard = self.org_ref(profile.org_id).collection("rollup").document(shard_of(profile.user_id))  # type: ignore[arg-type]
        transaction.set(shard, {"rows": {profile.user_id: row.to_document()}}, merge=[FieldPath("rows", profile.user_id)])
        self.stats.writes += 1

    def _session_progress(self, session: dict[str, Any], receipt: TurnReceipt, entries: list[JournalEntry]) -> dict[str, Any]:
        """The session's "where were we" fields, moved forward only by newer turns (delivery is out of order)."""
        progress: dict[str, Any] = {
            "session_id": receipt.session_id,
            "analysed_turns": firestore.Increment(1),
            "usage": {
                "prompt_tokens": firestore.Increment(int(receipt.details.get("prompt_tokens") or 0)),
                "response_tokens": firestore.Increment(int(receipt.details.get("response_tokens") or 0)),
            },
        }
        last_active = session.get("last_active")
        if last_active is None or receipt.observed_at >= last_active:
            progress["last_active"] = receipt.observed_at
            progress["last_turn_id"] = receipt.turn_id
        spoken = [entry for entry in entries if entry.source == Source.llm]
        topic_at = session.get("last_topic_at")
        if spoken and (topic_at is None or receipt.observed_at >= topic_at):
            topic = max(spoken, key=lambda entry: entry.confidence)
            progress.update(
                last_topic=self.graph.name(topic.factor_id),
                last_topic_factor_id=topic.factor_id,
                last_topic_at=receipt.observed_at,
                last_excerpt=topic.conversation_excerpt[-LAST_EXCERPT_CHARS:],
            )
        return progress

    def _flag_rechecks(self, applied: list[Transition], states: dict[str, FactorState], now: datetime) -> set[str]:
        """Flag inferred factors whose current value rests on a factor the user just corrected."""
        flagged: set[str] = set()
        for change in applied:
            if change.entry.kind != EntryKind.corrected:
                continue
            corrected = change.state.factor_id
            for fid, state in states.items():
                if (
                    corrected in state.inferred_from
                    and state.inference_status == InferenceStatus.unconfirmed
                    and state.is_assessed
                ):
                    reason = (
                        f"inferred from {self.graph.name(corrected)}, which the user corrected "
                        f"from {change.entry.previous_value} to {change.entry.new_value}"
                    )
                    states[fid] = state.model_copy(
                        update={"needs_recheck": True, "recheck_reason": reason, "last_updated": now}
                    )
                    flagged.add(fid)
        return flagged

    def _derive_composites(
        self, user_id: str, composites: list[str], states: dict[str, FactorState],
        applied: list[Transition], now: datetime,
    ) -> list[Transition]:  # fmt: skip
        changed = {change.state.factor_id for change in applied if change.entry.applied}
        derived: list[Transition] = []
        for cid in composites:
            causes = sorted(changed & set(self.catalog.factor(cid).composite or {}))
            if not causes:
                continue
            change = transitions.derive(
                self.catalog, self.catalog.factor(cid), states[cid], states,
                user_id, entry_id_for(None, cid), now, cause=", ".join(causes),
            )  # fmt: skip
            if change is not None:
                states[cid] = change.state
                derived.append(change)
        return derived

    def _last_conversation(self, applied: list[Transition]) -> LastConversation | None:
        spoken = [c.entry for c in applied if c.entry.source != Source.system and c.entry.kind != EntryKind.retracted]
        if not spoken:
            return None
        latest = max(spoken, key=lambda entry: (entry.observed_at, entry.confidence))
        return LastConversation(
            topic=self.graph.name(latest.factor_id),
            factor_id=latest.factor_id,
            session_id=latest.session_id,
            timestamp=latest.observed_at,
            excerpt=(latest.conversation_excerpt or latest.change_rationale)[-LAST_EXCERPT_CHARS:],
        )

    def _scan_states(self, user_id: str, transaction: firestore.Transaction) -> dict[str, FactorState]:
        """The baseline's full read: every factor document, and the journal of each unconfirmed one."""
        states: dict[str, FactorState] = {}
        for snapshot in self._user_ref(user_id).collection("factors").stream(transaction=transaction):
            self.stats.reads += 1
            state = FactorState.model_validate(snapshot.to_dict())
            if state.inference_status == InferenceStatus.unconfirmed:
                count = sum(1 for _ in self._journal(user_id, state.factor_id).stream(transaction=transaction))
                self.stats.reads += max(1, count)
                state = state.model_copy(update={"evidence_count": count})
            states[state.factor_id] = state
        return states

    # Operations -------------------------------------------------------------------------

    def record_inferences(
        self,
        user_id: str,
        updates: Iterable[InferredUpdate],
        *,
        receipt: TurnReceipt | None = None,
        idempotency_key: str | None = None,
        synthesize: Callable[[FactorState, InferredUpdate], InferredUpdate] | None = None,
    ) -> ChangeResult:
        """Apply inferred updates of one user atomically (validated first; nothing written on error).

        ``synthesize`` may turn each update into one that also weighs the factor's
        earlier evidence, given the state read inside the transaction.
        """
        validated = [self.validate_update(update) for update in updates]
        ids = list(dict.fromkeys(update.factor_id for update in validated))

        def plan(states: dict[str, FactorState], now: datetime) -> list[Transition]:
            changes = []
            for update in validated:
                state = states[update.factor_id]
                effective = self.validate_update(synthesize(state, update)) if synthesize else update
                change = transitions.infer(
                    self.catalog.factor(update.factor_id), state, effective, user_id,
                    entry_id_for(idempotency_key, update.factor_id), now,
                )  # fmt: skip
                states[update.factor_id] = change.state
                changes.append(change)
            return changes

        return self._change(user_id, ids, plan, receipt)

    def record_inference(self, user_id: str, update: InferredUpdate) -> JournalEntry:
        """Apply one inferred update; returns its journal entry."""
        return self.record_inferences(user_id, [update]).entries[0]

    def _single(self, user_id: str, factor_id: str, step: Callable[[FactorState, datetime], Transition]) -> JournalEntry:
        return self._change(user_id, [factor_id], lambda states, now: [step(states[factor_id], now)]).entries[0]

    def confirm(self, user_id: str, factor_id: str, *, session_id: str | None = None) -> JournalEntry:
        """The user confirms the current value (status confirmed, confidence +0.1, capped at 1)."""
        self._assessable(factor_id)

        def step(state: FactorState, now: datetime) -> Transition:
            if not state.is_assessed:
                raise NotAssessedError(factor_id)
            return transitions.confirm(state, user_id, entry_id_for(None, factor_id), now, session_id)

        return self._single(user_id, factor_id, step)

    def correct(
        self, user_id: str, factor_id: str, value: float, rationale: str, *, session_id: str | None = None
    ) -> JournalEntry:
        """The user provides the value (confidence 0.95); inferences resting on it are flagged for re-check."""
        self._assessable(factor_id)
        checked = self._check_value(factor_id, value)
        reason = self._check_rationale(rationale, f"the correction of {factor_id!r}")
        return self._single(
            user_id, factor_id,
            lambda state, now: transitions.correct(state, user_id, entry_id_for(None, factor_id), now, checked, reason, session_id),
        )  # fmt: skip

    def retract(self, user_id: str, factor_id: str, rationale: str, *, source: Source = Source.user) -> JournalEntry:
        """Withdraw a factor's value: it is unassessed again, and the withdrawal is journaled."""
        self._assessable(factor_id)
        reason = self._check_rationale(rationale, f"the retraction of {factor_id!r}")

        def step(state: FactorState, now: datetime) -> Transition:
            if not state.is_assessed:
                raise NotAssessedError(factor_id)
            return transitions.retract(state, user_id, entry_id_for(None, factor_id), now, reason, Source(source))

        return self._single(user_id, factor_id, step)

    def resolve_conflict(self, user_id: str, factor_id: str, *, accept: bool, rationale: str) -> JournalEntry:
        """Accept the held inference as the confirmed value, or reject it and keep the user's value."""
        self._assessable(factor_id)
        reason = self._check_rationale(rationale, f"resolving the conflict on {factor_id!r}")

        def step(state: FactorState, now: datetime) -> Transition:
            if state.open_conflict is None:
                raise NoConflictError(factor_id)
            return transitions.resolve_conflict(state, user_id, entry_id_for(None, factor_id), now, accept, reason)

        return self._single(user_id, factor_id, step)

    # Reads ------------------------------------------------------------------------------

    def summary(self, user_id: str) -> AssessmentSummary | None:
        """The precomputed summary: one document read."""
        snapshot = self._summary_ref(user_id).get()
        self.stats.reads += 1
        data = (snapshot.to_dict() or {}).get(SUMMARY_FIELD)
        return AssessmentSummary.model_validate(data) if data else None

    def factor(self, user_id: str, factor_id: str) -> FactorState:
        """The factor's current state (unassessed when never touched)."""
        if not self.catalog.has_factor(factor_id):
            raise UnknownFactorError(factor_id)
        snapshot = self._factor_ref(user_id, factor_id).get()
        self.stats.reads += 1
        if not snapshot.exists:
            return FactorState(factor_id=factor_id, category=self.catalog.factor(factor_id).category)
        return FactorState.model_validate(snapshot.to_dict())

    def _count_query(self, snapshots: list[Any]) -> None:
        self.stats.reads += max(1, len(snapshots))

    def history(self, user_id: str, factor_id: str, *, page_size: int = 20, cursor: str | None = None) -> HistoryPage:
        """Journal entries newest observation first, a page at a time (pass ``next_cursor`` on)."""
        if not self.catalog.has_factor(factor_id):
            raise UnknownFactorError(factor_id)
        if not 1 <= page_size <= 500:
            raise InvalidInputError(f"page_size must be between 1 and 500, got {page_size}")
        query = self._journal(user_id, factor_id).order_by("observed_at", direction=firestore.Query.DESCENDING)
        query = query.order_by("__name__", direction=firestore.Query.DESCENDING)
        if cursor:
            anchor = self._journal(user_id, factor_id).document(cursor).get()
            self.stats.reads += 1
            if not anchor.exists:
                raise InvalidInputError(f"unknown history cursor {cursor!r}")
            query = query.start_after(anchor)
        snapshots = list(query.limit(page_size + 1).stream())
        self._count_query(snapshots)
        entries = [JournalEntry.model_validate(s.to_dict()) for s in snapshots[:page_size]]
        more = len(snapshots) > page_size
        return HistoryPage(entries=entries, next_cursor=entries[-1].entry_id if more and entries else None)

    def factor_as_of(self, user_id: str, factor_id: str, at: datetime) -> FactorState:
        """The factor as it stood at ``at`` on the observation timeline (what the user had said by then)."""
        if not self.catalog.has_factor(factor_id):
            raise UnknownFactorError(factor_id)
        query = (
            self._journal(user_id, factor_id)
            .where(filter=FieldFilter("effective", "==", True))
            .where(filter=FieldFilter("observed_at", "<=", at))
            .order_by("observed_at", direction=firestore.Query.DESCENDING)
            .limit(1)
        )
        snapshots = list(query.stream())
        self._count_query(snapshots)
        blank = FactorState(factor_id=factor_id, category=self.catalog.factor(factor_id).category)
        if not snapshots:
            return blank
        entry = JournalEntry.model_validate(snapshots[0].to_dict())
        return blank.model_copy(
            update={
                "current_value": entry.value_after,
                "current_confidence": entry.confidence_after,
                "inference_status": entry.status_after,
                "observed_at": entry.observed_at,
                "last_updated": entry.recorded_at,
                "inferred_from": entry.inferred_from,
                "last_entry_id": entry.entry_id,
            }
        )

    def summary_as_of(self, user_id: str, at: datetime) -> AssessmentSummary:
        """The whole summary as it stood at ``at``: one small query per factor ever assessed."""
        current = self.summary(user_id)
        if current is None:
            raise UnknownUserError(user_id)
        states = {fid: self.factor_as_of(user_id, fid, at) for fid in current.factors}
        states = {fid: state for fid, state in states.items() if state.last_entry_id is not None}
        last = None
        spoken = [s for s in states.values() if s.is_assessed and not self.catalog.factor(s.factor_id).is_composite]
        if spoken:
            latest = max(spoken, key=lambda state: state.observed_at)  # type: ignore[arg-type,return-value]
            entry = self._journal(user_id, latest.factor_id).document(latest.last_entry_id).get()  # type: ignore[arg-type]
            self.stats.reads += 1
            journal = JournalEntry.model_validate(entry.to_dict())
            last = LastConversation(
                topic=self.graph.name(latest.factor_id), factor_id=latest.factor_id,
                session_id=journal.session_id, timestamp=journal.observed_at,
                excerpt=(journal.conversation_excerpt or journal.change_rationale)[-LAST_EXCERPT_CHARS:],
            )  # fmt: skip
        return build_summary(self.catalog, self.graph, states, last, at)

    def explain(self, user_id: str, factor_id: str, *, history_limit: int = 5) -> FactorExplanation:
        """The factor's state, the journal behind it, and its neighbours in the graph with their values."""
        summary = self.summary(user_id)
        if summary is None:
            raise UnknownUserError(user_id)
        state = self.factor(user_id, factor_id)
        chain = self.history(user_id, factor_id, page_size=history_limit).entries

        def reference(fid: str) -> FactorReference:
            other = summary.factors.get(fid)
            return FactorReference(
                factor_id=fid, factor_name=self.graph.name(fid),
                value=other.current_value if other else None,
                confidence=other.current_confidence if other else 0.0,
            )  # fmt: skip

        return FactorExplanation(
            state=state,
            factor_name=self.graph.name(factor_id),
            reasoning_chain=chain,
            inferred_from=[reference(fid) for fid in state.inferred_from],
            depends_on=[reference(fid) for fid in self.graph.depends_on(factor_id)],
            dependents=[reference(fid) for fid in self.graph.dependents(factor_id)],
            needed_by=[
                ArchetypeNeed(
                    archetype_id=aid, name=self.graph.name(aid), min_value=p.min_value,
                    min_confidence=p.min_confidence,
                    met=state.current_value is not None and state.current_value >= p.min_value
                    and state.current_confidence >= p.min_confidence,
                )  # fmt: skip
                for aid, p in self.graph.archetypes_needing(factor_id)
            ],
        )

    def rebuild_summary_by_scan(self, user_id: str, *, write: bool = False) -> AssessmentSummary:
        """Recompute the summary from every factor document (test oracle; with ``write``, a repair)."""
        snapshots = list(self._user_ref(user_id).collection("factors").stream())
        self._count_query(snapshots)
        states = {s.id: FactorState.model_validate(s.to_dict()) for s in snapshots}
        current = self.summary(user_id)
        if current is None:
            raise UnknownUserError(user_id)
        summary = build_summary(self.catalog, self.graph, states, current.last_conversation, current.updated_at)
        if write:
            self._summary_ref(user_id).set({SUMMARY_FIELD: summary.to_document()})
            self.stats.writes += 1
        return summary
