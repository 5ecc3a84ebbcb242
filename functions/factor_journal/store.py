"""``FactorJournalStore``: the domain's API over one user's factors, journals and conversations.

It validates requests and composes the repositories (``factor_journal.repositories``),
which are the only code that talks to Firestore.  The store is the one door to them: the services and
the dashboard hold a store, never a client, and reach Firestore through its methods or the named
facades it owns (``tests/test_one_door.py`` keeps it so):

* ``ledger`` — turns as work to do (``TurnLedger``: claim, settle, failures, rate count, attention,
  due and unclaimed turns), over ``People``, which also keeps profiles and sessions;
* ``changes`` — ``FactorChanges``: read → plan (``factor_journal.planner``) → write, one transaction per change;
* ``journal`` — ``JournalReads``: the summary, factor states, history pages, as-of states;
* ``vectors`` — the embeddings of journal entries and (``vectors.answers``) of every answer: search, re-embedding;
* ``organisations`` — organisation documents, roll-up rows, the figures' shards, daily figures;
* ``mail`` and ``links`` — queued reminder mail, who is due one, opt-outs; link records;
* ``personal_data`` — a person's export and erasure;
* ``nightly_runs`` — the nightly run and its task markers;
* ``set_aside`` — the damaged documents set aside, for the team (``factor_journal.setaside``).

``client``, ``paths``, ``org_ref`` and ``turns`` hand out Firestore objects for tests and benchmarks
that set up documents directly; the package and the dashboard never use them.

Promises:

* Every change writes its journal entries, the factor documents and the summary
  in one transaction; concurrent changes of one user lose nothing.
* The summary is maintained incrementally: a change reads the user, the summary
  and the factors it touches (and, only when a reading arrives late, that
  factor's journal), never a scan of all factors.
* A factor's state is a function of its observations ordered by when they were
  said, not of the order they arrived in (``factor_journal.folding``).
* Bad input raises a typed error from ``factor_journal.errors`` before anything is written.
* ``stats`` counts every document read and write the store's client issues.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any

from factor_journal import transitions
from factor_journal.catalog import Catalog, load_catalog
from factor_journal.conversation import Turn
from factor_journal.documents import HeardReading, latest_session_id
from factor_journal.errors import (
    InvalidInputError,
    NoConflictError,
    NotAssessedError,
    UnknownFactorError,
    UnknownUserError,
)
from factor_journal.folding import Reading
from factor_journal.graph import FactorGraph, graph_for
from factor_journal.models import (
    ArchetypeNeed,
    AssessmentSummary,
    FactorExplanation,
    FactorReference,
    FactorState,
    HistoryPage,
    InferredUpdate,
    JournalEntry,
    LastConversation,
    SaidIn,
    Source,
    UserProfile,
)
from factor_journal.planner import LAST_EXCERPT_CHARS, TurnContext, entry_id_for
from factor_journal.repositories.changes import ChangeResult, FactorChanges, Told
from factor_journal.repositories.client import (
    CollectionReference,
    CountedClient,
    DocumentReference,
    FirestoreClient,
    OpStats,
    Transaction,
    connect,
    run_transaction,
)
from factor_journal.repositories.journal import JournalReads
from factor_journal.repositories.ledger import TurnLedger
from factor_journal.repositories.links import LinkRecords
from factor_journal.repositories.mail import Mail
from factor_journal.repositories.nightly_runs import NightlyRuns
from factor_journal.repositories.organisations import OrganisationRecords
from factor_journal.repositories.paths import Paths
from factor_journal.repositories.people import People, TurnRef
from factor_journal.repositories.personal_data import PersonalData
from factor_journal.repositories.row_rewrites import RowRewrites
from factor_journal.repositories.set_aside import SetAsideRecords
from factor_journal.repositories.vectors import JournalVectors
from factor_journal.rollup import PersonRow
from factor_journal.summary import build_summary
from factor_journal.transitions import Transition
from factor_journal.validation import assessable, checked_reading, rationale_given, still_as_seen, value_on_scale

EXCERPT_LIMIT = 1200  # a journal entry's excerpt: 2-3 exchanges

__all__ = ["ChangeResult", "FactorJournalStore", "TurnContext", "TurnLedger", "TurnRef", "entry_id_for"]


class FactorJournalStore:
    def __init__(
        self, client: FirestoreClient, catalog: Catalog | None = None, *, contention_timeout: float = 120.0
    ) -> None:
        self.client: CountedClient = CountedClient.like(client)
        self.catalog = catalog or load_catalog()
        self.graph: FactorGraph = graph_for(self.catalog)
        self.paths = Paths(self.client)
        self._people = People(self.client, self.catalog, self.graph, contention_timeout=contention_timeout)
        self._rows = RowRewrites(self.client, self.catalog, self.graph, contention_timeout=contention_timeout)
        self.ledger = TurnLedger(self._people)
        self.changes = FactorChanges(self.client, self.catalog, self.graph, contention_timeout=contention_timeout)
        self.journal = JournalReads(self.client, self.catalog, self.graph)
        self.organisations = OrganisationRecords(self.client)
        self.mail = Mail(self.client)
        self.links = LinkRecords(self.client)
        self.personal_data = PersonalData(self.client)
        self.nightly_runs = NightlyRuns(self.client)
        self.set_aside = SetAsideRecords(self.client)

    @classmethod
    def connect(
        cls, project: str, database: str = "(default)", catalog: Catalog | None = None, **options: Any
    ) -> FactorJournalStore:
        """A store over its own counted client for the project's database: the emulator's when
        FIRESTORE_EMULATOR_HOST is set, otherwise production with the runtime's default credentials."""
        return cls(connect(project, database), catalog, **options)

    @property
    def vectors(self) -> JournalVectors:
        """The embeddings of journal entries and answers (search, re-embedding), as ``changes`` writes them."""
        return self.changes.vectors

    @property
    def project(self) -> str:
        """The Google Cloud project the store's database belongs to."""
        return str(self.client.project)

    @property
    def stats(self) -> OpStats:
        return self.client.stats

    def run_transaction(self, function: Callable[[Transaction], Any]) -> Any:
        return run_transaction(self.client, function)

    def org_ref(self, org_id: str) -> DocumentReference:
        return self.paths.organisation(org_id)

    def turns(self, user_id: str, session_id: str) -> CollectionReference:
        return self.paths.turns(user_id, session_id)

    # People and conversations ---------------------------------------------------------------

    def register_user(self, profile: UserProfile) -> None:
        """Create (or update) a user (``People.register``: an organisation move moves their row at once)."""
        self._people.register(profile)

    def get_user(self, user_id: str) -> UserProfile | None:
        return self._people.get(user_id)

    def set_manager(self, user_id: str, org_id: str, manager: bool) -> None:
        """Make the member a manager of ``org_id`` or take that away (``People.set_manager``: one transaction;
        UnknownOrganisationError, with nothing written, when ``org_id`` does not exist)."""
        self._people.set_manager(user_id, org_id, manager)

    def rewrite_row(self, user_id: str, org_id: str, *, refresh_summary: bool = False) -> PersonRow | None:
        """Rewrite the member's roll-up row and figures from their profile and summary (``RowRewrites.rewrite_row``)."""
        return self._rows.rewrite_row(user_id, org_id, refresh_summary=refresh_summary)

    def age_row(self, user_id: str, org_id: str, now: datetime, ageing: Callable[[PersonRow], PersonRow]) -> Any:
        """Age the person's row to ``now`` if its time has come (``RowRewrites.age_row``); the row written or None."""
        return self._rows.age_row(user_id, org_id, now, ageing)

    def start_session(self, user_id: str, session_id: str | None = None, *, started_at: datetime | None = None) -> str:
        """Create a conversation session for a registered user; returns its id."""
        return self._people.start_session(user_id, session_id, started_at=started_at)

    def add_turn(
        self,
        user_id: str,
        session_id: str,
        role: str,
        text: str,
        *,
        created_at: datetime | None = None,
        turn_id: str | None = None,
        about: str | None = None,
    ) -> str:
        """Write a conversation turn where the trigger listens (an assistant's question with the factor it asks
        ``about``); returns its id."""
        return self._people.add_turn(
            user_id, session_id, role, text, created_at=created_at, turn_id=turn_id, about=about
        )

    def turn_data(self, user_id: str, session_id: str, turn_id: str) -> dict[str, Any] | None:
        return self._people.turn_data(user_id, session_id, turn_id)

    def analysis_status(self, user_id: str, session_id: str, turn_id: str) -> str | None:
        """The turn's stored analysis status (one read); None while it has none."""
        return self._people.analysis_status(user_id, session_id, turn_id)

    def wait_for_analysis(self, user_id: str, session_id: str, turn_id: str, timeout: float) -> str | None:
        """The turn's analysis status once the pipeline has finished with it, or as it stands after ``timeout``
        seconds."""
        return self._people.wait_for_analysis(user_id, session_id, turn_id, timeout)

    def session_data(self, user_id: str, session_id: str) -> dict[str, Any] | None:
        return self._people.session_data(user_id, session_id)

    def latest_session(self, user_id: str) -> str | None:
        """The id of the session the person was last active in, or None when they have none."""
        return self._people.latest_session(user_id)

    def activity(self, user_id: str, limit: int = 200) -> list[datetime]:
        """When the person was active, as far as their answers tell (newest first): each answer among the ``limit``
        newest turns of the session they were last active in, and the last activity of each other session."""
        sessions = self._people.sessions(user_id)
        latest = latest_session_id(sessions)
        if latest is None:
            return []
        times = self._people.answer_times(user_id, latest, limit)
        times += [s.last_active for s in sessions if s.session_id != latest and s.last_active is not None]
        return sorted(times, reverse=True)

    def recent_turns(self, user_id: str, session_id: str, *, before: datetime, limit: int) -> list[Turn]:
        """Up to ``limit`` valid turns of the session created before ``before``, oldest first."""
        return self._people.recent_turns(user_id, session_id, before=before, limit=limit)

    def session_turns(self, user_id: str, session_id: str) -> list[tuple[str, dict[str, Any]]]:
        """Every turn of a session, oldest first, as (turn id, document)."""
        return self._people.session_turns(user_id, session_id)

    def session_ids(self, user_id: str) -> list[str]:
        return self._people.session_ids(user_id)

    # Changes ----------------------------------------------------------------------------------

    def validate_update(self, update: InferredUpdate) -> InferredUpdate:
        """The update with its fields checked against the catalog; raises a typed error otherwise."""
        fid, value, confidence, rationale, sources = checked_reading(
            self.catalog, update.factor_id, update.value, update.confidence, update.rationale, update.inferred_from
        )
        return update.model_copy(
            update={
                "value": value,
                "confidence": confidence,
                "rationale": rationale,
                "inferred_from": sources,
                "conversation_excerpt": update.conversation_excerpt[:EXCERPT_LIMIT],
            }
        )

    def record_inferences(
        self,
        user_id: str,
        updates: Iterable[InferredUpdate],
        *,
        turn: TurnContext | None = None,
        idempotency_key: str | None = None,
        weigh: bool = False,
    ) -> ChangeResult:
        """Fold inferred readings of one user into their factors atomically (validated first; nothing
        written on error).  Each reading is weighed with the factor's earlier evidence in the order the
        readings were said (``observed_at``), whatever order they are recorded in.  With ``weigh`` each
        reading is bounded by the plausibility guard and weighed with the factor's earlier evidence (the
        pipeline's extractor readings); without, the newest reading stands as stated.  With ``turn``, the
        turn's outcome is written in the same transaction, exactly once; a turn deleted meanwhile gets nothing
        written (``missing`` in the result: the turn is not recreated)."""
        readings = []
        for update in updates:
            checked = self.validate_update(update)
            if checked.observed_at is None:
                checked = checked.model_copy(update={"observed_at": turn.observed_at if turn else _now()})
            readings.append(Reading(checked, entry_id_for(idempotency_key, checked.factor_id), weigh=weigh))
        ids = list(dict.fromkeys(r.update.factor_id for r in readings))
        return self.changes.apply(user_id, ids, readings=readings, turn=turn)

    def record_inference(self, user_id: str, update: InferredUpdate) -> JournalEntry:
        """Apply one inferred update; returns its journal entry."""
        return self.record_inferences(user_id, [update]).entries[0]

    def _decide(
        self,
        user_id: str,
        factor_id: str,
        step: Callable[[FactorState, datetime], Transition],
        words: str = "",
        told: Told | None = None,
    ) -> JournalEntry:
        """Apply a person's decision; ``words`` (what they said with it) is embedded before the transaction."""
        decision = [words] if words else []
        result = self.changes.apply(
            user_id, [factor_id], step=lambda states, now: [step(states[factor_id], now)], words=decision, told=told
        )
        return result.entries[0]

    def confirm(
        self, user_id: str, factor_id: str, *, said: SaidIn | None = None, seen: float | None = None
    ) -> JournalEntry:
        """The user confirms the current value (status confirmed, at the confidence of their own word).  ``said``:
        the answer and words confirmed, when confirmed in the conversation (the entry's provenance).  ``seen``: the
        value the person was shown when they confirmed it; when the transaction finds the factor's value is no
        longer it (changed elsewhere since), ``ValueChangedError`` and nothing is written."""
        assessable(self.catalog, factor_id)
        where = said or SaidIn()

        def step(state: FactorState, now: datetime) -> Transition:
            if not state.is_assessed:
                raise NotAssessedError(factor_id, "confirm")
            still_as_seen(factor_id, state.current_value, seen)
            return transitions.confirm(
                state,
                user_id,
                entry_id_for(None, factor_id),
                now,
                where.session_id,
                turn_id=where.turn_id,
                excerpt=where.words,
            )

        return self._decide(user_id, factor_id, step)

    def confirm_reading(self, user_id: str, factor_id: str, value: float, said: SaidIn) -> JournalEntry:
        """The person says what was understood from their answer (``value``) is right, in one transaction with the
        summary: the current value is confirmed when it agrees with the reading, otherwise the reading's value
        becomes theirs (``transitions.confirm_reading``)."""
        assessable(self.catalog, factor_id)
        checked = value_on_scale(self.catalog, factor_id, value)
        factor = self.catalog.factor(factor_id)
        return self._decide(
            user_id,
            factor_id,
            lambda state, now: transitions.confirm_reading(
                factor,
                state,
                user_id,
                entry_id_for(None, factor_id),
                now,
                checked,
                session_id=said.session_id,
                turn_id=said.turn_id,
                excerpt=said.words,
            ),
        )

    def correct(
        self,
        user_id: str,
        factor_id: str,
        value: float,
        rationale: str,
        *,
        said: SaidIn | None = None,
        seen: float | None = None,
        told: bool = False,
    ) -> JournalEntry:
        """The user provides the value (confidence 0.95); inferences resting on it are flagged for re-check.
        ``seen``: the value the person was shown when they corrected it; when the transaction finds the factor's
        value is no longer it (changed elsewhere since), ``ValueChangedError`` and nothing is written.  ``told``:
        the person says what their answer (``said``) was about, where nothing, or nothing sure, was understood from
        it; the answer's turn keeps it in the same transaction (``documents.told_readings``), for the say-back."""
        assessable(self.catalog, factor_id)
        checked = value_on_scale(self.catalog, factor_id, value)
        reason = rationale_given(rationale, f"the correction of {factor_id!r}")
        where = said or SaidIn()

        def step(state: FactorState, now: datetime) -> Transition:
            still_as_seen(factor_id, state.current_value, seen)
            return transitions.correct(
                state,
                user_id,
                entry_id_for(None, factor_id),
                now,
                checked,
                reason,
                where.session_id,
                turn_id=where.turn_id,
                excerpt=where.words,
            )

        kept = None
        if told:
            if where.session_id is None or where.turn_id is None:
                raise InvalidInputError("what an answer was about needs the answer (its session and turn)")
            heard = HeardReading(
                factor_id=factor_id, value=checked, confidence=transitions.USER_PROVIDED_CONFIDENCE, quote=where.words
            )
            kept = Told(where.session_id, where.turn_id, heard)
        return self._decide(user_id, factor_id, step, words=reason, told=kept)

    def retract(
        self, user_id: str, factor_id: str, rationale: str, *, source: Source = Source.user, said: SaidIn | None = None
    ) -> JournalEntry:
        """Withdraw a factor's value: it is unassessed again, and the withdrawal is journaled."""
        assessable(self.catalog, factor_id)
        reason = rationale_given(rationale, f"the retraction of {factor_id!r}")
        where = said or SaidIn()

        def step(state: FactorState, now: datetime) -> Transition:
            if not state.is_assessed:
                raise NotAssessedError(factor_id, "retract")
            return transitions.retract(
                state,
                user_id,
                entry_id_for(None, factor_id),
                now,
                reason,
                Source(source),
                session_id=where.session_id,
                turn_id=where.turn_id,
                excerpt=where.words,
            )

        return self._decide(user_id, factor_id, step, words=reason)

    def resolve_conflict(self, user_id: str, factor_id: str, *, accept: bool, rationale: str) -> JournalEntry:
        """Accept the held inference as the confirmed value, or reject it and keep the user's value."""
        assessable(self.catalog, factor_id)
        reason = rationale_given(rationale, f"resolving the conflict on {factor_id!r}")

        def step(state: FactorState, now: datetime) -> Transition:
            if state.open_conflict is None:
                raise NoConflictError(factor_id)
            return transitions.resolve_conflict(state, user_id, entry_id_for(None, factor_id), now, accept, reason)

        return self._decide(user_id, factor_id, step, words=reason)

    # Reads ------------------------------------------------------------------------------------

    def summary(self, user_id: str) -> AssessmentSummary | None:
        """The precomputed summary: one document read.

        A damaged summary document is never shown or passed on: what is returned is rebuilt from the factor
        documents (not written here; the user's next change rewrites it, as ``rebuild_summary_by_scan(write=True)``
        does at once).
        """
        document = self.journal.summary_document(user_id)
        return self.journal.summary_from(user_id, document, _now())[0]

    def _known(self, factor_id: str) -> None:
        if not isinstance(factor_id, str) or not self.catalog.has_factor(factor_id):
            raise UnknownFactorError(str(factor_id))

    def _blank(self, factor_id: str) -> FactorState:
        return FactorState(factor_id=factor_id, category=self.catalog.factor(factor_id).category)

    def factor(self, user_id: str, factor_id: str) -> FactorState:
        """The factor's current state (unassessed when never touched)."""
        self._known(factor_id)
        return self.journal.factor(user_id, factor_id) or self._blank(factor_id)

    def history(self, user_id: str, factor_id: str, *, page_size: int = 20, cursor: str | None = None) -> HistoryPage:
        """Journal entries newest observation first, a page at a time (pass ``next_cursor`` on)."""
        self._known(factor_id)
        if not 1 <= page_size <= 500:
            raise InvalidInputError(f"page_size must be between 1 and 500, got {page_size}")
        return self.journal.history(user_id, factor_id, page_size=page_size, cursor=cursor)

    def factor_as_of(self, user_id: str, factor_id: str, at: datetime) -> FactorState:
        """The factor as it stood at ``at`` on the observation timeline (what the user had said by then); a
        composite as its components stood then."""
        self._known(factor_id)
        composite = self.catalog.factor(factor_id)
        if composite.is_composite:
            parts = {fid: self.factor_as_of(user_id, fid, at) for fid in composite.composite or {}}
            return transitions.composite_state(self.catalog, composite, self._blank(factor_id), parts)
        entry = self.journal.effective_entry_at(user_id, factor_id, at)
        if entry is None:
            return self._blank(factor_id)
        return self._blank(factor_id).model_copy(
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
        said = [fid for fid in current.factors if not self.catalog.factor(fid).is_composite]
        states = {fid: self.factor_as_of(user_id, fid, at) for fid in said}
        states = {fid: state for fid, state in states.items() if state.last_entry_id is not None}
        for fid in current.factors:  # a composite is what its components were then, never its own journal
            composite = self.catalog.factor(fid)
            if composite.is_composite:
                state = transitions.composite_state(self.catalog, composite, self._blank(fid), states)
                if state.is_assessed:
                    states[fid] = state
        last = None
        spoken = [s for s in states.values() if s.is_assessed and not self.catalog.factor(s.factor_id).is_composite]
        if spoken:
            latest = max(spoken, key=lambda state: (state.observed_at, state.factor_id))
            journal = self.journal.entry(user_id, latest.factor_id, latest.last_entry_id)  # type: ignore[arg-type]
            if journal is not None:
                last = LastConversation(
                    topic=self.graph.name(latest.factor_id),
                    factor_id=latest.factor_id,
                    session_id=journal.session_id,
                    timestamp=journal.observed_at,
                    excerpt=(journal.conversation_excerpt or journal.change_rationale)[-LAST_EXCERPT_CHARS:],
                )
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
                factor_id=fid,
                factor_name=self.graph.name(fid),
                value=other.current_value if other else None,
                confidence=other.current_confidence if other else 0.0,
            )

        return FactorExplanation(
            state=state,
            factor_name=self.graph.name(factor_id),
            reasoning_chain=chain,
            inferred_from=[reference(fid) for fid in state.inferred_from],
            depends_on=[reference(fid) for fid in self.graph.depends_on(factor_id)],
            dependents=[reference(fid) for fid in self.graph.dependents(factor_id)],
            needed_by=[
                ArchetypeNeed(
                    archetype_id=aid,
                    name=self.graph.name(aid),
                    min_value=p.min_value,
                    min_confidence=p.min_confidence,
                    met=state.current_value is not None
                    and state.current_value >= p.min_value
                    and state.current_confidence >= p.min_confidence,
                )
                for aid, p in self.graph.archetypes_needing(factor_id)
            ],
        )

    def rebuild_summary_by_scan(self, user_id: str, *, write: bool = False) -> AssessmentSummary:
        """Recompute the summary from every factor document (test oracle; with ``write``, a repair)."""
        states = self.journal.factor_states(user_id)
        current = self.summary(user_id)
        if current is None:
            raise UnknownUserError(user_id)
        summary = build_summary(self.catalog, self.graph, states, current.last_conversation, current.updated_at)
        if write:
            self.journal.write_summary(user_id, summary)
        return summary


def _now() -> datetime:
    return datetime.now(UTC)
