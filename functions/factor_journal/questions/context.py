"""Ask why, stage 2: the context an answer is composed from, within a token budget.

The current state, latest change, history and dependencies of the factors the question is about (found by
``questions.search``), in that priority order within the budget (``build_context``); for factors with nothing
recorded under them, what the person said near them under other factors; for a question about the whole, where
the assessment stands, and the person's answers close to the question that are not part of the assessment yet
(``gather_context``); and the dated journal evidence the answer cites (``citations``).
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

from pydantic import BaseModel, Field

from factor_journal import freshness
from factor_journal.embedding import spoken_lines
from factor_journal.graph import FactorGraph
from factor_journal.guidance import CLARIFYING, next_tier_statement, question_asked
from factor_journal.models import AssessmentSummary, FactorState, JournalEntry, Source
from factor_journal.questions.intent import QuestionIntent
from factor_journal.questions.search import (
    MATCHES_PER_FACTOR,
    MAX_SEMANTIC_FACTORS,
    EmbedderChoice,
    Found,
    FoundBy,
    Matches,
    Unread,
    resolve_embedder,
    said_nearby,
)
from factor_journal.store import FactorJournalStore
from factor_journal.vocabulary import clip

UNSEARCHED = ("what_changed", "standing")  # a time's changes, the whole assessment: no search for what was said nearby
DEFAULT_BUDGET_TOKENS = 5000
EXCERPT_CHARS = 200
RATIONALE_CHARS = 400
"""A reader's rationale fits whole (its quote of at most 160 characters, the question's 100, the reading and how it
was weighed), so a page can reword it; only a person's long reason is cut."""


def estimate_tokens(value: object) -> int:
    """About four characters per token of the JSON form: an estimate, used for budgeting."""
    return max(1, len(json.dumps(value, default=str)) // 4)


class Citation(BaseModel):
    factor_id: str
    factor_name: str
    date: datetime
    change: str  # "20 → 35"
    excerpt: str
    rationale: str
    entry_id: str | None = None
    said: str = ""  # the person's own words in the entry (the analysed turn), when it has them
    similarity: float | None = None  # for an entry found by the journal search: how close to the question


class UnassessedAnswer(BaseModel):
    """An answer the person gave that fed no journal entry, so is not part of the assessment yet, found by meaning:
    their words with the date, and where it was given (the conversation page shows it there)."""

    date: datetime
    said: str
    session_id: str
    turn_id: str
    similarity: float


class FactorContext(BaseModel):
    factor_id: str
    name: str
    value: float | None
    confidence: float
    status: str
    latest_change: Citation | None = None
    history: list[Citation] = Field(default_factory=list)
    matched: list[Citation] = Field(default_factory=list)  # entries the journal search found, nearest first


class Standing(BaseModel):
    """Where the whole assessment stands, as the overview says it: its tier and what the next one needs."""

    tier_name: str
    budget: str
    assessed: int
    total: int
    avg_confidence: float
    next_tier: str  # ``guidance.next_tier_statement``
    last_topic: str | None = None  # where we were: what was discussed last, and when
    last_said: datetime | None = None
    in_place_of_nothing: bool = False  # the question was not recognised as about the whole: nothing else was found


class QuestionContext(BaseModel):
    intent: QuestionIntent
    standing: Standing | None = None  # for a question about the whole assessment
    factors: dict[str, FactorContext] = Field(default_factory=dict)
    dependencies: dict[str, dict[str, object]] = Field(default_factory=dict)
    blocked: dict[str, list[dict[str, object]]] = Field(default_factory=dict)
    unlocks: dict[str, list[str]] = Field(default_factory=dict)
    capability_names: dict[str, str] = Field(default_factory=dict)  # archetype id -> its name, as a person reads it
    # For factors with nothing recorded under them: what the person said nearest to them, recorded under other
    # factors (``said_nearby``), nearest first
    nearby_under_other_factors: list[Citation] = Field(default_factory=list)
    # What the person said close to the question that is not part of the assessment yet, nearest first
    unassessed_answers: list[UnassessedAnswer] = Field(default_factory=list)
    estimated_tokens: int = 0
    budget_tokens: int = DEFAULT_BUDGET_TOKENS
    truncated: bool = False
    found_by: FoundBy = "names"


def clip_lines(text: str, limit: int) -> str:
    """The last lines of ``text`` that fit in ``limit`` characters (a conversation excerpt ends with the turn that
    was analysed); a last line longer than that is ``clip``-ped."""
    kept: list[str] = []
    for line in reversed([line for line in (text or "").splitlines() if line.strip()]):
        if kept and sum(len(k) + 1 for k in kept) + len(line) > limit:
            break
        kept.insert(0, line.strip() if len(line) <= limit else clip(line, limit))
    return "\n".join(kept)


_ANSWERING_A_CLARIFICATION = re.compile(r' \(answering "' + re.escape(CLARIFYING) + r'[^"]*"\)')


def as_asked(excerpt: str, rationale: str) -> tuple[str, str]:
    """An entry's excerpt and rationale with each clarification the assistant gave (the person had asked what its
    question meant: ``guidance.clarifying_question``) shown as the question it asked (``guidance.question_asked``),
    not as "Good question. I am asking about …": the excerpt's line, and the question a rationale quotes the answer
    as answering (an older rationale quoted the clarification's opening).  Pure."""
    lines = (excerpt or "").split("\n")
    turns = [("assistant" if line.startswith("Assistant:") else "user", line.partition(": ")[2]) for line in lines]
    shown = []
    for index, line in enumerate(lines):
        if line.startswith(f"Assistant: {CLARIFYING}"):
            line = f"Assistant: {question_asked(turns[: index + 1])}"
        shown.append(line)
    answers = [index for index, line in enumerate(lines) if line.startswith("User:")]
    asked = question_asked(turns[: answers[-1]]) if answers else ""
    if asked:
        rationale = _ANSWERING_A_CLARIFICATION.sub(lambda _: f' (answering "{clip(asked, 100)}")', rationale)
    return "\n".join(shown), rationale


def cite_entry(graph: FactorGraph, entry: JournalEntry, similarity: float | None = None) -> Citation:
    """A journal entry as an answer cites it: its factor by name, its date and change, its excerpt and rationale as
    asked (``as_asked``) and cut for the answer, the person's words, and, when a search found it, how close."""

    def show(value: float | None) -> str:
        return "unassessed" if value is None else f"{value:g}"

    said = spoken_lines(entry.conversation_excerpt or "")[1]
    if not said and Source(entry.source) == Source.user:  # a person's decision: its reason is their words
        said = entry.change_rationale
    excerpt, rationale = as_asked(entry.conversation_excerpt or "", entry.change_rationale)
    return Citation(
        factor_id=entry.factor_id,
        factor_name=graph.name(entry.factor_id),
        date=entry.observed_at,
        change=f"{show(entry.previous_value)} → {show(entry.new_value)}",
        excerpt=clip_lines(excerpt, EXCERPT_CHARS),
        rationale=clip(rationale, RATIONALE_CHARS),
        entry_id=entry.entry_id,
        said=clip(said, EXCERPT_CHARS * 2),
        similarity=None if similarity is None else round(similarity, 3),
    )


def cite_answer(unread: Unread) -> UnassessedAnswer:
    """An answer that fed no entry as an answer cites it: the person's words, cut for the answer, and its date."""
    hit = unread.hit
    return UnassessedAnswer(
        date=hit.said_at or datetime.now(UTC),
        said=clip(" ".join(unread.words.split()), EXCERPT_CHARS * 2),
        session_id=hit.session_id,
        turn_id=hit.turn_id,
        similarity=round(hit.similarity, 3),
    )


def build_context(
    store: FactorJournalStore,
    user_id: str,
    intent: QuestionIntent,
    summary: AssessmentSummary,
    budget_tokens: int = DEFAULT_BUDGET_TOKENS,
    matched: Matches | None = None,
) -> QuestionContext:
    """Current state and latest change (and the entries a journal search found for the factor, ``matched``,
    nearest first), then history, then dependencies, within the budget."""
    graph = store.graph
    context = QuestionContext(intent=intent, budget_tokens=budget_tokens)
    used = estimate_tokens(intent.model_dump())
    histories: dict[str, list[JournalEntry]] = {}

    def blank(fid: str) -> FactorState:
        return FactorState(factor_id=fid, category=store.catalog.factor(fid).category)

    for fid in intent.factor_ids:  # priority 1: current state + latest change
        state = summary.factors.get(fid) or blank(fid)
        entries = []
        if state.evidence_count or state.last_entry_id:
            entries = store.history(user_id, fid, page_size=6 if intent.needs_history else 1).entries
        if intent.since is not None:
            entries = [e for e in entries if e.observed_at > intent.since]  # said after it
        histories[fid] = entries
        item = FactorContext(
            factor_id=fid,
            name=graph.name(fid),
            value=state.current_value,
            confidence=state.current_confidence,
            status=str(state.inference_status),
            latest_change=cite_entry(graph, entries[0]) if entries else None,
            matched=[cite_entry(graph, e, sim) for e, sim in (matched or {}).get(fid, [])[:MATCHES_PER_FACTOR]],
        )
        cost = estimate_tokens(item.model_dump())
        if used + cost > budget_tokens:
            context.truncated = True
            break
        context.factors[fid] = item
        used += cost

    if intent.needs_history and used < budget_tokens * 0.7:  # priority 2: history
        for fid, item in context.factors.items():
            older = [cite_entry(graph, e) for e in histories.get(fid, [])[1:5]]
            cost = estimate_tokens([c.model_dump() for c in older])
            if used + cost > budget_tokens * 0.9:
                context.truncated = True
                break
            item.history = older
            used += cost

    if intent.needs_dependencies and used < budget_tokens * 0.85:  # priority 3: dependencies
        for fid in list(context.factors):
            for dep in graph.depends_on(fid):
                dependency = summary.factors.get(dep)
                entry: dict[str, object] = {
                    "value": dependency.current_value if dependency else None,
                    "affects": fid,
                    "name": graph.name(dep),
                }
                cost = estimate_tokens(entry)
                if used + cost > budget_tokens:
                    context.truncated = True
                    break
                context.dependencies[dep] = entry
                used += cost
            context.unlocks[fid] = graph.unlocks_if_improved(fid, summary.factors)
    for archetype_id in [*intent.archetype_ids, *(a for unlocked in context.unlocks.values() for a in unlocked)]:
        context.capability_names[archetype_id] = graph.name(archetype_id)
    for archetype_id in intent.archetype_ids:
        blocked = next((b for b in summary.capabilities.cannot_evaluate_yet if b.archetype_id == archetype_id), None)
        context.blocked[archetype_id] = [b.model_dump() for b in blocked.blockers] if blocked else []
    context.estimated_tokens = used
    return context


def citations(context: QuestionContext) -> list[Citation]:
    """The evidence: entries a journal search found first (nearest first), then the rest, newest first (the entries
    said near factors with nothing recorded under them among the first); for factors a model named (``model``), the
    rest factor by factor in the model's order, most relevant first, each newest first."""
    matched = sorted(
        (c for item in context.factors.values() for c in item.matched), key=lambda c: -(c.similarity or 0.0)
    )
    matched += context.nearby_under_other_factors
    seen = {c.entry_id for c in matched}
    found: list[Citation] = []
    for item in context.factors.values():
        for citation in [item.latest_change, *item.history]:
            if citation is not None and (citation.entry_id is None or citation.entry_id not in seen):
                seen.add(citation.entry_id)
                found.append(citation)
    if context.found_by == "model":
        return matched + found
    return matched + sorted(found, key=lambda c: c.date, reverse=True)


def standing_of(summary: AssessmentSummary, in_place_of_nothing: bool = False) -> Standing:
    """Where the whole assessment stands, in the overview's words: the tier, how much is assessed and how surely,
    what the next tier needs, and where we were."""
    overall, last = summary.overall, summary.last_conversation
    return Standing(
        tier_name=overall.decision_tier_name,
        budget=overall.decision_budget,
        assessed=overall.total_factors_assessed,
        total=overall.total_factors,
        avg_confidence=overall.avg_confidence,
        next_tier=next_tier_statement(summary),
        last_topic=last.topic if last else None,
        last_said=last.timestamp if last else None,
        in_place_of_nothing=in_place_of_nothing,
    )


def assessment_now(store: FactorJournalStore, user_id: str, now: datetime) -> AssessmentSummary:
    """The person's summary as every page shows it: each confidence aged to ``now``, and the capabilities and tier
    that follow from that (``freshness.assess``).  ValueError for an unknown person."""
    stored = store.summary(user_id)
    if stored is None:
        raise ValueError(f"unknown user {user_id!r}")
    return freshness.assess(store.catalog, store.graph, stored, now).summary


def gather_context(
    store: FactorJournalStore,
    user_id: str,
    found: Found,
    summary: AssessmentSummary,
    budget_tokens: int,
    embedder: EmbedderChoice,
) -> QuestionContext:
    """The context of what was found (``build_context``): for a question about a time, only factors with an entry
    in it; for factors with nothing recorded under them, what the person said near them under other factors
    (``said_nearby``), before an answer says nothing said speaks to them; for a question about the whole, where
    the assessment stands; and the answers found close to the question that are not part of the assessment yet."""
    intent = found.intent
    context = build_context(store, user_id, intent, summary, budget_tokens, matched=found.matched)
    context.found_by = found.found_by
    if found.found_by == "recent":  # changed since: a factor touched since (a re-fold, say) with no entry since is not
        context.factors = {fid: item for fid, item in context.factors.items() if item.latest_change}
    unrecorded = [fid for fid, item in context.factors.items() if not store.catalog.factor(fid).is_composite]
    if unrecorded and not citations(context) and intent.question_type not in UNSEARCHED:
        model = resolve_embedder(embedder)
        if model is not None:
            nearby = said_nearby(store, user_id, unrecorded[:MAX_SEMANTIC_FACTORS], model)
            context.nearby_under_other_factors = [cite_entry(store.graph, entry, sim) for entry, sim in nearby]
    if intent.question_type == "standing":
        context.standing = standing_of(summary, found.in_place_of_nothing)
    context.unassessed_answers = [cite_answer(unread) for unread in found.unread]
    return context
