"""The pure change planner: from what a change read to everything it writes.

``plan_change`` holds the domain rules of a change of one user's factors —
folding readings into evidence (``folding``), people's decisions
(``transitions``), re-check flags, composite derivation, the summary, "where
were we", the session's progress and the turn's outcome — and returns a
``ChangeSet``.  The factor-change repository reads inside a transaction, calls
it, and writes the change set; nothing here touches Firestore.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from factor_journal.catalog import Catalog
from factor_journal.composites import (
    composites_to_rederive,
    derive_composites,
    rederive_composite,
    timeline_factors,
)
from factor_journal.documents import AnalysisDetails, ExtractionOutcome, SessionDocument, TurnStatus
from factor_journal.folding import Reading, arrives_late, fold_reading, refold
from factor_journal.graph import FactorGraph
from factor_journal.models import (
    AssessmentSummary,
    EntryKind,
    FactorState,
    InferenceStatus,
    JournalEntry,
    LastConversation,
    Source,
)
from factor_journal.setaside import describe
from factor_journal.summary import build_summary
from factor_journal.transitions import Transition

LAST_EXCERPT_CHARS = 1000  # the "where were we" card's excerpt (its most recent part)

Step = Callable[[dict[str, FactorState], datetime], list[Transition]]
"""A person's decision: given the states, the transitions it makes (typed errors on bad requests)."""


@dataclass(frozen=True)
class TurnContext:
    """The conversation turn a change analyses (exactly once) and what was learned analysing it."""

    session_id: str
    turn_id: str
    observed_at: datetime
    details: AnalysisDetails = field(default_factory=AnalysisDetails)
    answer: str = ""  # the person's words in the turn: embedded before the change, the vector written with its outcome


@dataclass(frozen=True)
class ChangeInputs:
    """Everything a change reads, as read inside its transaction."""

    user_id: str
    summary: AssessmentSummary | None
    states: dict[str, FactorState]  # every known factor state, the touched ones freshly read
    journals: dict[str, list[JournalEntry]]  # factors folded again from their journal (late readings, damage)
    last_active: datetime | None
    now: datetime
    session: SessionDocument | None = None  # the turn's session, when the change analyses a turn
    # The stored journals of the composites a reading or decision arrives late for and of all their components
    # (chosen by the reader with ``timelines_to_read``): those composites are derived again along the
    # components' timelines.
    timelines: dict[str, list[JournalEntry]] = field(default_factory=dict)
    outcome: ExtractionOutcome | None = None  # the turn's outcome as read (not done): its attempts are carried on


@dataclass
class SessionProgress:
    """The session's "where were we" fields (token counts are amounts to add)."""

    session_id: str
    prompt_tokens: int
    response_tokens: int
    last_active: datetime | None = None
    last_turn_id: str | None = None
    last_topic: str | None = None
    last_topic_factor_id: str | None = None
    last_topic_at: datetime | None = None
    last_excerpt: str | None = None


@dataclass
class ChangeSet:
    entries: list[JournalEntry]  # this change's own journal entries
    rewritten: list[JournalEntry]  # older entries whose place on the timeline moved
    states: dict[str, FactorState]  # factor documents to write
    summary: AssessmentSummary
    last_active: datetime | None
    guarded: list[str] = field(default_factory=list)
    outcome: ExtractionOutcome | None = None
    session: SessionProgress | None = None
    removed: list[tuple[str, str]] = field(default_factory=list)  # (factor id, entry id) no longer derived


def entry_id_for(key: str | None, factor_id: str) -> str:
    """A journal entry id: deterministic for an idempotency key, random otherwise."""
    if key is None:
        import uuid

        return uuid.uuid4().hex[:20]
    return hashlib.sha256(f"{key}|{factor_id}".encode()).hexdigest()[:20]


def touched_factors(graph: FactorGraph, factor_ids: list[str]) -> list[str]:
    """The factors a change of ``factor_ids`` may write: them and the composites built on them."""
    composites = sorted({c for fid in factor_ids for c in graph.composites_of(fid)})
    return list(dict.fromkeys([*factor_ids, *composites]))


def late_factors(states: dict[str, FactorState], readings: list[Reading]) -> set[str]:
    """Factors a reading arrives late for: they are folded again from their journal."""
    return {r.update.factor_id for r in readings if arrives_late(states[r.update.factor_id], *r.key)}


class DamagedSummaryError(Exception):
    """The summary document exists but does not read as a summary (a bad write, a hand edit, an old shape).

    The summary is derived data: the factor documents hold every state it carries, so it is rebuilt from them
    (``summary.build_summary``). ``last_conversation`` is what could be saved of the damaged one.
    """

    def __init__(self, reason: str, last_conversation: LastConversation | None) -> None:
        super().__init__(reason)
        self.last_conversation = last_conversation


class DamagedFactorError(Exception):
    """A factor document exists but does not read as a factor state.

    The factor document is derived data too: its journal holds every observation it was folded from, so it is
    folded again from it (``folding.refold_damaged``).
    """


def stored_summary(data: Any) -> AssessmentSummary | None:
    """The summary a summary document's summary field holds (``None`` when there is none yet); raises
    ``DamagedSummaryError``, carrying the last conversation when that part still reads, when it does not
    validate."""
    if not data:
        return None
    try:
        return AssessmentSummary.model_validate(data)
    except ValidationError as error:
        last = data.get("last_conversation") if isinstance(data, Mapping) else None
        try:
            saved = LastConversation.model_validate(last) if last else None
        except ValidationError:
            saved = None
        raise DamagedSummaryError(describe(error), saved) from error


def stored_factor(document: Mapping[str, Any] | None) -> FactorState | None:
    """The state a factor document holds (``None`` when there is none yet); ``DamagedFactorError`` if it does
    not validate."""
    if not document:
        return None
    try:
        return FactorState.model_validate(document)
    except ValidationError as error:
        raise DamagedFactorError(describe(error)) from error


@dataclass(frozen=True)
class TurnRead:
    """What a change that analyses a turn learns from the turn and session documents it read."""

    outcome: ExtractionOutcome | None  # the turn's stored outcome
    session: SessionDocument | None = None  # the session as far as it still reads (None for a duplicate)
    session_damage: tuple[str, ...] = ()  # the session's fields that no longer read: it is rewritten whole
    # the turn no longer exists (deleted after its claim, its person erased): the change writes nothing, so the
    # turn is not recreated as a stub and its readings are not applied
    gone: bool = False

    @property
    def duplicate(self) -> bool:
        """The turn was analysed already: the change writes nothing (exactly once)."""
        return self.outcome is not None and self.outcome.is_done


def read_turn(
    session_id: str, turn_document: dict[str, Any] | None, session_document: dict[str, Any] | None
) -> TurnRead:
    """What a turn's change goes on from: a turn that no longer exists (``turn_document`` None) is gone and a
    turn whose outcome says done is a duplicate delivery (neither looks at its session); otherwise the session
    salvaged (``SessionDocument.salvaged``)."""
    if turn_document is None:
        return TurnRead(None, gone=True)
    outcome = ExtractionOutcome.of(turn_document)
    if outcome is not None and outcome.is_done:
        return TurnRead(outcome)
    session, damage = SessionDocument.salvaged(session_id, session_document)
    return TurnRead(outcome, session, damage)


def touched_states(
    catalog: Catalog,
    touched: Sequence[str],
    documents: Mapping[str, Mapping[str, Any] | None],
    known: Mapping[str, FactorState],
) -> tuple[dict[str, FactorState], dict[str, str]]:
    """Every factor state a change plans with — ``known`` (the summary's copies), each touched factor as its
    document (``documents``, by factor id) reads, blank when it has none — and the touched factors whose
    document is damaged (factor id → why): those keep the summary's copy (its re-check flag, set by another
    factor's correction) and are folded again from their journal."""
    states = dict(known)
    damaged: dict[str, str] = {}
    for fid in touched:
        try:
            state = stored_factor(documents.get(fid))
        except DamagedFactorError as damage:
            state, damaged[fid] = states.get(fid), str(damage)
        states[fid] = state or FactorState(factor_id=fid, category=catalog.factor(fid).category)
    return states, damaged


def journals_to_read(states: dict[str, FactorState], readings: list[Reading], damaged: Iterable[str]) -> list[str]:
    """The factors a change folds again from their journal (so reads it): those a reading arrives late for, and
    those whose document is damaged."""
    return sorted(late_factors(states, readings) | set(damaged))


def said_in_change(readings: Sequence[Reading], decided: Sequence[str], now: datetime) -> list[tuple[str, datetime]]:
    """(factor id, when observed) of what a change says: its readings at their observation time, and the factors
    of a person's decision (``decided``) now."""
    return [(r.update.factor_id, r.key[0]) for r in readings] + [(fid, now) for fid in decided]


def timelines_to_read(
    catalog: Catalog,
    graph: FactorGraph,
    states: dict[str, FactorState],
    refolded: Iterable[str],
    said: Iterable[tuple[str, datetime]],
) -> list[str]:
    """The factors whose journals a change reads to derive composites again along their components' timelines
    (``ChangeInputs.timelines``): the composites built on a factor folded again (``refolded``) or arriving late
    (``said``), and all their components."""
    return sorted(timeline_factors(catalog, composites_to_rederive(catalog, graph, states, refolded, said)))


def plan_change(
    catalog: Catalog,
    graph: FactorGraph,
    inputs: ChangeInputs,
    *,
    readings: list[Reading] = (),  # type: ignore[assignment]
    step: Step | None = None,
    turn: TurnContext | None = None,
) -> ChangeSet:
    """Everything a change writes: readings folded in observation order and/or a person's decision."""
    states = dict(inputs.states)
    now = inputs.now
    guarded: list[str] = []
    applied: list[Transition] = []
    rewritten: list[JournalEntry] = []
    by_factor: dict[str, list[Reading]] = {}
    for reading in readings:
        by_factor.setdefault(reading.update.factor_id, []).append(reading)
    for fid, journal in inputs.journals.items():
        own = by_factor.get(fid, [])
        state, changed = refold(catalog, states[fid], journal, own, inputs.user_id, now, guarded)
        mine = {r.entry_id for r in own}
        applied += [Transition(state, e) for e in changed if e.entry_id in mine]
        rewritten += [e for e in changed if e.entry_id not in mine]
        states[fid] = state
    for fid, own in by_factor.items():
        if fid in inputs.journals:
            continue
        for reading in sorted(own, key=lambda r: r.key):
            change = fold_reading(catalog, states[fid], reading, inputs.user_id, now, guarded)
            states[fid] = change.state
            applied.append(change)
    if step is not None:
        for change in step(states, now):
            states[change.state.factor_id] = change.state
            applied.append(change)

    moved = {c.state.factor_id for c in applied} | {e.factor_id for e in rewritten}
    flagged = _flag_rechecks(graph, applied, states, now)
    again = frozenset(fid for fid in inputs.timelines if catalog.factor(fid).is_composite)
    removed: list[tuple[str, str]] = []
    if again:
        timelines = _timelines(inputs.timelines, [c.entry for c in applied] + rewritten)
        for cid in sorted(again):
            result = rederive_composite(
                catalog, graph, cid, inputs.user_id, timelines, inputs.timelines.get(cid, []), now
            )
            states[cid] = result.state
            rewritten += result.written
            removed += [(cid, entry_id) for entry_id in result.removed]
    derived = derive_composites(catalog, graph, inputs.user_id, states, moved, now, except_for=again)
    written = moved | flagged | {c.state.factor_id for c in derived} | set(inputs.journals) | again
    entries = [c.entry for c in applied + derived]
    old_last = inputs.summary.last_conversation if inputs.summary else None
    summary = build_summary(catalog, graph, states, _last_conversation(graph, applied, old_last), now)

    last_active = inputs.last_active
    outcome = progress = None
    if turn is not None:
        if last_active is None or turn.observed_at > last_active:
            last_active = turn.observed_at
        own_entries = [c.entry for c in applied]
        outcome = ExtractionOutcome(
            **turn.details.model_dump(exclude={"guarded"}),
            guarded=guarded[:20],
            status=TurnStatus.processed if own_entries else TurnStatus.no_update,
            entry_ids=[e.entry_id for e in own_entries],
            factor_ids=sorted({e.factor_id for e in own_entries}),
            processed_at=now,
        )
        if inputs.outcome is not None:
            outcome.attempts = inputs.outcome.attempts
        progress = _session_progress(
            graph, inputs.session or SessionDocument(session_id=turn.session_id), turn, own_entries
        )
    return ChangeSet(
        entries=entries,
        rewritten=rewritten,
        states={fid: states[fid] for fid in written},
        summary=summary,
        last_active=last_active,
        guarded=guarded,
        outcome=outcome,
        session=progress,
        removed=removed,
    )


def _timelines(stored: dict[str, list[JournalEntry]], written: list[JournalEntry]) -> dict[str, list[JournalEntry]]:
    """Each factor's whole journal after this change: as stored, with this change's entries put in."""
    journals = {fid: {entry.entry_id: entry for entry in journal} for fid, journal in stored.items()}
    for entry in written:
        journals.setdefault(entry.factor_id, {})[entry.entry_id] = entry
    return {fid: list(entries.values()) for fid, entries in journals.items()}


def _flag_rechecks(
    graph: FactorGraph, applied: list[Transition], states: dict[str, FactorState], now: datetime
) -> set[str]:
    """Flag inferred factors whose current value rests on a factor the user just gave a value: corrected, or
    restored after a withdrawal (the reason says which)."""
    flagged: set[str] = set()
    for change in applied:
        if change.entry.kind not in (EntryKind.corrected, EntryKind.restored):
            continue
        corrected = change.state.factor_id
        for fid, state in states.items():
            if (
                corrected in state.inferred_from
                and state.inference_status == InferenceStatus.unconfirmed
                and state.is_assessed
            ):
                done = (
                    f"restored to {change.entry.new_value}"
                    if change.entry.kind == EntryKind.restored
                    else f"corrected from {change.entry.previous_value} to {change.entry.new_value}"
                )
                reason = f"inferred from {graph.name(corrected)}, which the user {done}"
                states[fid] = state.model_copy(
                    update={"needs_recheck": True, "recheck_reason": reason, "last_updated": now}
                )
                flagged.add(fid)
    return flagged


def _spoken_key(entry: JournalEntry) -> tuple[datetime, float, str]:
    """Order of what was said: newest observation, then the extractor's own confidence, then factor id
    (none of which depend on delivery order)."""
    confidence = entry.reading_confidence if entry.reading_confidence is not None else entry.confidence
    return (entry.observed_at, confidence, entry.factor_id)


def _said_at(observed_at: datetime, session_id: str | None, factor_id: str) -> tuple[datetime, str, str]:
    """A total order of what was said, for "where we were" (no tie left to delivery order)."""
    return (observed_at, session_id or "", factor_id)


def _last_conversation(
    graph: FactorGraph, applied: list[Transition], previous: LastConversation | None
) -> LastConversation | None:
    """ "Where we were": the newest observed exchange (a reading of the person's answer, its excerpt the last
    turns), never moved back by a late turn.  A person's decision about a reading (confirm, correct, withdraw,
    restore: in the say-back or on Review) is no exchange, its excerpt only the words decided on: it leaves
    "where we were" as it was, as the session's "where were we" (``_session_progress``) does."""
    spoken = [c.entry for c in applied if c.entry.source == Source.llm]
    if not spoken:
        return previous
    latest = max(spoken, key=_spoken_key)
    if previous is not None and _said_at(latest.observed_at, latest.session_id, latest.factor_id) <= _said_at(
        previous.timestamp, previous.session_id, previous.factor_id
    ):  # two things said at the same instant: the same one wins, whichever was analysed first
        return previous
    return LastConversation(
        topic=graph.name(latest.factor_id),
        factor_id=latest.factor_id,
        session_id=latest.session_id,
        timestamp=latest.observed_at,
        excerpt=(latest.conversation_excerpt or latest.change_rationale)[-LAST_EXCERPT_CHARS:],
    )


def _session_progress(
    graph: FactorGraph, session: SessionDocument, turn: TurnContext, entries: list[JournalEntry]
) -> SessionProgress:
    """The session's "where were we" fields, moved forward only by newer turns (delivery is out of order)."""
    progress = SessionProgress(
        session_id=turn.session_id,
        prompt_tokens=turn.details.prompt_tokens,
        response_tokens=turn.details.response_tokens,
    )
    last_active = session.last_active
    # Turns said at the same instant are ordered by turn id, so the position never depends on delivery order.
    newest = last_active is None or (turn.observed_at, turn.turn_id) >= (last_active, session.last_turn_id or "")
    if newest:
        progress.last_active = turn.observed_at
        progress.last_turn_id = turn.turn_id
    spoken = [entry for entry in entries if entry.source == Source.llm]
    topic_at = session.last_topic_at
    if spoken and (topic_at is None or turn.observed_at > topic_at or (turn.observed_at == topic_at and newest)):
        topic = max(spoken, key=lambda e: (e.reading_confidence or e.confidence, e.factor_id))
        progress.last_topic = graph.name(topic.factor_id)
        progress.last_topic_factor_id = topic.factor_id
        progress.last_topic_at = turn.observed_at
        progress.last_excerpt = topic.conversation_excerpt[-LAST_EXCERPT_CHARS:]
    return progress


def attention_after(attention_turns: list[str], turn: TurnContext | None) -> list[str]:
    """The person's turns needing attention once a change is written: a turn it analyses is done, so it needs
    nobody's attention any more (the list is written only when this differs from ``attention_turns``)."""
    done = f"{turn.session_id}/{turn.turn_id}" if turn is not None else None
    return [key for key in attention_turns if key != done]


_WHERE_WE_WERE = ("last_active", "last_turn_id", "last_topic", "last_topic_factor_id", "last_topic_at", "last_excerpt")


def moved_forward(progress: SessionProgress) -> dict[str, Any]:
    """The session's "where were we" fields a turn moves forward (those it leaves alone are not there)."""
    return {name: getattr(progress, name) for name in _WHERE_WE_WERE if getattr(progress, name) is not None}


def repaired_session(stored: SessionDocument, progress: SessionProgress) -> dict[str, Any]:
    """The whole session document after a turn, from what still read of a damaged one (its damaged fields at their
    defaults, so a damaged count starts again from this turn)."""
    return {
        **stored.to_document(),
        "analysed_turns": stored.analysed_turns + 1,
        "usage": {
            "prompt_tokens": stored.usage.prompt_tokens + progress.prompt_tokens,
            "response_tokens": stored.usage.response_tokens + progress.response_tokens,
        },
        **moved_forward(progress),
    }
