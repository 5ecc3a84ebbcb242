"""Ask why with a model as intent router (``FJ_EXTRACTOR=gemini``; docs/ask.md, "The model as intent router").

The design's "LLM as intent router": one structured call reads the question (``IntentRouter``, Gemini in production:
``extraction.gemini.GeminiIntentReader``) against the catalog (its static prefix) and the person's **journal index**
(``journal_index``: each factor with something on record, its value and the last words the person said that were
recorded under it, newest first, within a token budget), and says what the question is about.  Its answer is
untrusted and checked before anything is read (``checked_intent``): unknown factor and project-type ids are dropped,
at most ``MAX_ROUTED_FACTORS`` factors are kept, a time frame is bounded.  ``route`` runs the call; a call that fails
(after the SDK's retries, or with output that is not an intent) is logged and the question is read by the embedded
rules and search instead, as without a model (``Routed.failure``; the answer says so in its "Found by" line).

What the answer is built from is found as before (``route_found``): the context of the factors the model named, from
Firestore, with citations from the journal, never from the model; a question about the whole assessment or about a
time as without a model; and when the model names no factor, the search by meaning (``search.find_factors``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import NamedTuple, Protocol

from factor_journal.catalog import Catalog
from factor_journal.extraction.base import ExtractionError
from factor_journal.extraction.prompts import IndexLine, IntentOutput
from factor_journal.models import AssessmentSummary
from factor_journal.questions.context import cite_entry
from factor_journal.questions.intent import CHANGED_WITHIN, QuestionIntent, implied_factors
from factor_journal.questions.search import EmbedderChoice, Found, find_factors
from factor_journal.store import FactorJournalStore

log = logging.getLogger(__name__)

MAX_ROUTED_FACTORS = 3  # the model's relevant factors kept, most relevant first (then composites' components)
MAX_DAYS = 3660  # a time frame further back than ten years is read as "since ever"
INDEX_WORDS_CHARS = 240  # the person's words per line of the index (an excerpt line's length)


class IntentRouter(Protocol):
    """A model that reads what a question is about (Gemini in production); raises ``ExtractionError`` on failure."""

    name: str

    def read_intent(self, question: str, index: Sequence[IndexLine]) -> IntentOutput: ...


class Routed(NamedTuple):
    """What routing gave: the checked intent (None when the model's reading is not used: no router, or its call
    failed), who read the question ("embedded" or the router's name), what of the model's output was dropped (ids
    the catalog does not have), and why the call failed (for the log; the answer says only that it did)."""

    intent: QuestionIntent | None
    by: str = "embedded"
    dropped: tuple[str, ...] = ()
    failure: str | None = None


def journal_index(store: FactorJournalStore, user_id: str, summary: AssessmentSummary) -> list[IndexLine]:
    """The person's journal index: every assessed factor (composites are derived: none) with its value and the last
    words the person said that were recorded under it (its latest entry's, read in one batched read; the
    rationale when the entry holds no words), the most recently updated first."""
    catalog = store.catalog
    states = [
        state
        for state in summary.factors.values()
        if state.last_entry_id
        and catalog.has_factor(state.factor_id)
        and not catalog.factor(state.factor_id).is_composite
    ]
    never = datetime.min.replace(tzinfo=UTC)
    states.sort(key=lambda state: (state.observed_at or state.last_updated or never, state.factor_id), reverse=True)
    entries = store.journal.entries(user_id, [(state.factor_id, state.last_entry_id or "") for state in states])
    lines = []
    for state in states:
        entry = entries.get(state.last_entry_id or "")
        citation = cite_entry(store.graph, entry) if entry is not None else None
        words = (citation.said or citation.rationale) if citation is not None else ""
        words = " ".join(words.split())
        if len(words) > INDEX_WORDS_CHARS:
            words = words[: INDEX_WORDS_CHARS - 1].rstrip() + "…"
        lines.append(IndexLine(state.factor_id, store.graph.name(state.factor_id), state.current_value, words))
    return lines


def checked_intent(output: IntentOutput, catalog: Catalog, now: datetime) -> tuple[QuestionIntent, list[str]]:
    """The model's intent as the answer may use it, and what was dropped: its relevant factors, then the factors it
    names, kept only if the catalog has them, at most ``MAX_ROUTED_FACTORS``; project types the catalog has; the
    prerequisites and components they imply (``intent.implied_factors``); a time frame of 1 to ``MAX_DAYS`` days, or
    since the person's last visit ("what changed?" with neither: the last ``CHANGED_WITHIN``, as without a model).
    Pure."""
    dropped = []
    factors: list[str] = []
    for factor_id in [*output.relevant_factors, *output.entities.factors]:
        if not catalog.has_factor(factor_id):
            dropped.append(factor_id)
        elif factor_id not in factors:
            factors.append(factor_id)
    archetypes = []
    known = {archetype.id for archetype in catalog.archetypes}
    for archetype_id in output.entities.project_types:
        if archetype_id not in known:
            dropped.append(archetype_id)
        elif archetype_id not in archetypes:
            archetypes.append(archetype_id)
    frame = output.entities.time_frame
    since_visit = frame.since_last_visit
    since = None
    if not since_visit and frame.days is not None and 1 <= frame.days <= MAX_DAYS:
        since = now - timedelta(days=frame.days)
    if output.question_type == "what_changed" and since is None and not since_visit:
        since = now - CHANGED_WITHIN
    intent = QuestionIntent(
        question_type=output.question_type,
        factor_ids=implied_factors(catalog, factors[:MAX_ROUTED_FACTORS], archetypes),
        archetype_ids=archetypes,
        needs_history=output.needs_history,
        needs_dependencies=output.needs_dependencies,
        since=since,
        since_visit=since_visit,
    )
    return intent, list(dict.fromkeys(dropped))


def route(
    router: IntentRouter | None,
    store: FactorJournalStore,
    user_id: str,
    question: str,
    summary: AssessmentSummary,
    now: datetime,
) -> Routed:
    """The question read by ``router`` against the catalog and the person's journal index, checked
    (``checked_intent``); ``Routed(None)`` without a router, and ``Routed(None, failure=…)`` when the call fails
    (logged): the embedded rules read the question then."""
    if router is None:
        return Routed(None)
    try:
        output = router.read_intent(question, journal_index(store, user_id, summary))
    except ExtractionError as error:
        log.warning("the intent router failed (%s): the question is read without it", error)
        return Routed(None, router.name, failure=str(error))
    intent, dropped = checked_intent(output, store.catalog, now)
    if dropped:
        log.warning("the intent router named what the catalog does not have, dropped: %s", ", ".join(dropped))
    return Routed(intent, router.name, tuple(dropped))


def route_found(
    store: FactorJournalStore,
    user_id: str,
    question: str,
    intent: QuestionIntent,
    summary: AssessmentSummary,
    embedder: EmbedderChoice,
) -> Found:
    """What the answer is about, from the model's checked intent: the factors and project types it named (found by
    ``model``), unless the question is about the whole assessment; otherwise, as without a model, the whole
    assessment, a time's changes, or the search by meaning (``search.find_factors``, with the model's type and time
    frame)."""
    if intent.question_type != "standing" and (intent.factor_ids or intent.archetype_ids):
        return Found(intent, "model", {})
    unnamed = intent.model_copy(update={"factor_ids": [], "archetype_ids": []})
    return find_factors(store, user_id, question, unnamed, summary, embedder)
