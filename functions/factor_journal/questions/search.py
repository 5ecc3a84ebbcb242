"""Ask why: which factors a question is about, and what the person said about them, found by name or by meaning.

When the question names no factor (``find_factors``): the whole assessment for a question about it, what changed
in a time for a question about one, else a **second chance by meaning** (``semantic_factors``): the catalog's
factors ranked against the question by the embedded model (the extractor's own detector), and the person's own
journal searched by similarity (``find_nearest`` pre-filtered to the person, ``repositories.vectors``); the factors
of the entries found are the ones the answer is about; the person's answers are searched too, so an answer the
reader understood nothing from is found as well (``unread_answers``).  For factors with nothing recorded under them,
what the person said near them under other factors (``said_nearby``).  Every answer says which path found its evidence
(``FoundBy``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Literal, NamedTuple

from factor_journal.catalog import Catalog
from factor_journal.embedding import Embedder, EmbeddingError, default_embedder, spoken_lines
from factor_journal.models import AssessmentSummary, JournalEntry
from factor_journal.questions.intent import QuestionIntent, about_the_whole_intent, question_topic
from factor_journal.repositories.vectors import AnswerHit, VectorHit
from factor_journal.store import FactorJournalStore
from factor_journal.vocabulary import content_words, factor_vocabulary

log = logging.getLogger(__name__)

FoundBy = Literal["names", "model", "standing", "journal", "nearest", "catalog", "recent", "none"]
SEARCH_LIMIT = 8  # entries the nearest-neighbour search returns
MIN_SIMILARITY = 0.2  # cosine similarity below which a journal entry is not about the question
NEAR_TIE = 0.1  # factors scoring this close to the best are near ties: both are cited
WEAK_SIMILARITY = 0.16  # the floor for a status question that would otherwise get the whole assessment ...
CORROBORATING_RANKS = 3  # ... when the entry's factor is among the catalog's likeliest for the question
CATALOG_WEIGHT = 0.5  # how much the catalog's likelihood (0-1) adds to a journal entry's similarity (docs/ask.md)
MAX_SEMANTIC_FACTORS = 2  # factors an answer found by meaning is about
MATCHES_PER_FACTOR = 3

Matches = dict[str, list[tuple[JournalEntry, float]]]  # factor id -> the entries the search found, with similarity
EmbedderChoice = Embedder | None | Literal["default"]
"""What embeds a question: an embedder, None (no journal search) or "default" (the process's, ``FJ_EMBEDDER``)."""


def resolve_embedder(embedder: EmbedderChoice) -> Embedder | None:
    """The embedder ``embedder`` names ("default": the process's, loaded only when a search needs it)."""
    return default_embedder() if embedder == "default" else embedder


class Unread(NamedTuple):
    """An answer the person gave that fed no journal entry (not part of the assessment yet), found by meaning: the
    search's hit (where, when, how close) and the person's words."""

    hit: AnswerHit
    words: str


class ByMeaning(NamedTuple):
    """What the second chance by meaning found: the factors, how, the entries found for them (with their
    similarity), and the answers close to the question that fed no entry."""

    factors: list[str]
    found_by: FoundBy
    matched: Matches
    unread: list[Unread]


class Found(NamedTuple):
    """What the answer is about: the intent with its factors, how they were found, the entries the journal search
    found for them (with their similarity), whether the whole assessment stands in place of nothing found, and
    the person's answers close to the question that are not part of the assessment yet."""

    intent: QuestionIntent
    found_by: FoundBy
    matched: Matches
    in_place_of_nothing: bool = False
    unread: Sequence[Unread] = ()


def find_factors(
    store: FactorJournalStore,
    user_id: str,
    question: str,
    intent: QuestionIntent,
    summary: AssessmentSummary,
    embedder: EmbedderChoice,
) -> Found:
    """The factors a question is about: those it names; else, for a question about the whole assessment, the last
    topic and the blockers of the capabilities closest to being evaluated (``standing``); for a question about a
    time, every factor updated in it (``recent``); else the second chance by meaning (``semantic_factors``).  A
    status question that finds nothing gets the whole assessment in place of nothing; any other finds ``none``."""
    if intent.factor_ids or intent.archetype_ids:
        return Found(intent, "names", {})
    chosen: list[str] = []
    found_by: FoundBy = "names"
    matched: Matches = {}
    unread: list[Unread] = []
    if intent.question_type == "standing":  # "why are we stuck?", "why can't we do anything yet?"
        intent, chosen = about_the_whole_intent(intent, summary)
        found_by = "standing"
    elif intent.about_a_time:  # about a time, not a topic (since a visit with none before it: since ever)
        chosen = [
            fid
            for fid, state in summary.factors.items()
            if state.last_updated is not None
            and (intent.since is None or state.last_updated > intent.since)
            and not store.catalog.factor(fid).is_composite
        ]
        found_by = "recent"
    elif question:
        chosen, found_by, matched, unread = semantic_factors(
            store,
            user_id,
            question,
            resolve_embedder(embedder),
            own_words=intent.question_type == "what_said",
            rather_than_nothing=intent.question_type == "status" and summary.last_conversation is not None,
        )
    in_place_of_nothing = False
    if not chosen and intent.question_type == "status":
        # names nothing and matches nothing the person said ("so where are we?", "what's the hold-up?"): how the
        # whole assessment stands, with where we were
        intent, chosen = about_the_whole_intent(intent, summary)
        found_by, in_place_of_nothing = "standing", True
    elif not chosen and intent.question_type != "standing" and found_by != "recent":
        found_by = "none"  # (about the whole, with nothing blocked: still so; nothing changed since: said so)
    return Found(intent.model_copy(update={"factor_ids": chosen}), found_by, matched, in_place_of_nothing, unread)


def rank_catalog(catalog: Catalog, question: str) -> tuple[list[tuple[str, float]], float]:
    """The catalog's assessable factors ranked against the question by the semantic extractor's detector (the
    ranking candidate selection uses for a turn), most likely first, each with P(about); and the detector's
    floor (below it the extractor finds a factor unlikely).  ([], 1.0) when the embedded model cannot load."""
    try:
        import numpy as np

        from factor_journal.extraction.semantic import default_reader

        reader = default_reader(catalog)
        detected = reader.detect(reader.turn("", question))
    except Exception as error:  # the fallback must never fail a question: the journal search still runs
        log.warning("catalog ranking unavailable (%s: %s)", type(error).__name__, error)
        return [], 1.0
    order = np.argsort(-detected)
    ranked = [(reader.space.factors[i].id, float(detected[i])) for i in order]
    return ranked, float(reader.model.detect_floor)


def choose_factors(
    hits: Sequence[tuple[str, float]],
    catalog_likelihood: Mapping[str, float],
    *,
    own_words: bool,
    min_similarity: float = MIN_SIMILARITY,
    near_tie: float = NEAR_TIE,
    catalog_weight: float = CATALOG_WEIGHT,
    limit: int = MAX_SEMANTIC_FACTORS,
) -> list[str]:
    """The factors a question found by meaning is about, from the journal search's hits (factor, similarity) and
    the catalog's likelihood that the question is about each factor (the semantic extractor's detector):

    * when even the closest entry is less similar than ``min_similarity``, the journal holds nothing about the
      question (``[]``);
    * each factor found scores its closest entry's similarity plus ``catalog_weight`` times the catalog's
      likelihood: two independent readings of the question (what the person said that is nearest to it, and
      what answers about each factor sound like), so a close entry of an unlikely factor does not outrank a
      nearly as close entry of the factor the question is plainly about;
    * a question about the person's own words (``own_words``) is about the words: similarity alone;
    * the factors within ``near_tie`` of the best score, best first (a static embedding's similarities differ by
      that much on wording alone), whether or not they reach the floor; at most ``limit``.  Pure."""
    best: dict[str, float] = {}
    for factor_id, similarity in hits:
        best[factor_id] = max(best.get(factor_id, -1.0), similarity)
    if not best or max(best.values()) < min_similarity:
        return []
    weight = 0.0 if own_words else catalog_weight
    score = {fid: similarity + weight * catalog_likelihood.get(fid, 0.0) for fid, similarity in best.items()}
    top = max(score.values())
    near = sorted((fid for fid in score if score[fid] >= top - near_tie), key=lambda fid: (-score[fid], fid))
    return near[:limit]


def semantic_factors(
    store: FactorJournalStore,
    user_id: str,
    question: str,
    embedder: Embedder | None,
    own_words: bool,
    rather_than_nothing: bool = False,
) -> ByMeaning:
    """The second chance for a question that names no factor.  First the catalog's factors ranked against the
    question; then what the person said nearest to it (``find_nearest`` pre-filtered to the person and the running
    model), in their journal and among their answers: those that fed no entry, or for a question about their own
    words all of them, an answer that fed entries counting as a hit on those entries (``with_answers``: its words
    whole, where an entry's excerpt keeps 240 characters); the factors of the entries found, each weighed with the
    catalog's likelihood (``choose_factors``).  When the journal holds nothing close, the catalog's likeliest
    factor if the detector finds it likely (found by ``catalog``); else, when the question would otherwise be
    answered with the whole assessment (``rather_than_nothing``), the person's entries nearest to it down to
    ``WEAK_SIMILARITY`` whose factor the catalog ranks among its ``CORROBORATING_RANKS`` likeliest (two weak
    readings that agree are more likely about the question than the assessment as a whole; found by ``nearest``,
    shown with their similarity); else nothing (``none``).  Whatever was found, the answers close to the question
    that fed no entry (``unread_answers``), when they are close to it and about as close as what was understood
    nearest to it or closer (a near tie: a loosely related answer is not cited beside a close entry)."""
    topic = question_topic(question)
    ranked, floor = rank_catalog(store.catalog, topic)
    likelihood = dict(ranked)
    hits: list[VectorHit] = []
    answers: list[AnswerHit] = []
    if embedder is not None:
        try:
            query = embedder.embed_query(topic)
            hits = store.vectors.nearest(user_id, query, embedder.model_id, SEARCH_LIMIT)
            # "what did I say about …": every answer, its words whole counting for the entries it fed; otherwise
            # only the answers that fed none (the others are found through their entries)
            limit = SEARCH_LIMIT if own_words else MATCHES_PER_FACTOR
            answers = store.vectors.answers.nearest(user_id, query, embedder.model_id, limit, unread_only=not own_words)
        except EmbeddingError as error:
            log.warning("journal search unavailable (%s): the catalog's ranking only", error)
    if own_words:
        hits = with_answers(hits, answers)
    closest = max((hit.similarity for hit in hits), default=0.0)  # what was understood nearest to the question
    unread = unread_answers(store, user_id, answers, max(MIN_SIMILARITY, closest - NEAR_TIE))
    pairs = [(hit.factor_id, hit.similarity) for hit in hits]
    cited, found = _entries_found(store, user_id, hits, choose_factors(pairs, likelihood, own_words=own_words))
    if cited:
        return ByMeaning(cited, "journal", found, unread)
    likely = [fid for fid, p in ranked[:1] if p >= floor and not store.catalog.factor(fid).is_composite]
    if likely:
        return ByMeaning(likely, "catalog", {}, unread)
    if rather_than_nothing:
        corroborated = {fid for fid, _ in ranked[:CORROBORATING_RANKS]}
        weak = [(fid, similarity) for fid, similarity in pairs if fid in corroborated]
        chosen = choose_factors(weak, likelihood, own_words=own_words, min_similarity=WEAK_SIMILARITY)
        cited, found = _entries_found(store, user_id, hits, chosen)
        if cited:
            return ByMeaning(cited, "nearest", found, unread)
    return ByMeaning([], "none", {}, unread)


def with_answers(hits: Sequence[VectorHit], answers: Sequence[AnswerHit]) -> list[VectorHit]:
    """The journal search's hits with the answers that fed entries counted as hits on those entries, each entry at
    its closest, nearest first: an answer is cited through the entries it fed.  Pure."""
    closest: dict[str, VectorHit] = {}
    found = [*hits, *(VectorHit(eid, fid, a.distance) for a in answers for eid, fid in a.entries.items())]
    for hit in found:
        if hit.entry_id not in closest or hit.distance < closest[hit.entry_id].distance:
            closest[hit.entry_id] = hit
    return sorted(closest.values(), key=lambda hit: (hit.distance, hit.entry_id))


def unread_answers(
    store: FactorJournalStore,
    user_id: str,
    answers: Sequence[AnswerHit],
    min_similarity: float = MIN_SIMILARITY,
    limit: int = MATCHES_PER_FACTOR,
) -> list[Unread]:
    """The answers close to the question (at least ``min_similarity``) that fed no journal entry, nearest first, at
    most ``limit``, with the person's words (read from their turns; none read when none is close)."""
    close = [answer for answer in answers if not answer.entries and answer.similarity >= min_similarity][:limit]
    words = store.vectors.answers.words(user_id, close) if close else {}
    return [Unread(answer, words[answer.answer_id]) for answer in close if answer.answer_id in words]


def _entries_found(
    store: FactorJournalStore, user_id: str, hits: Sequence[VectorHit], chosen: list[str]
) -> tuple[list[str], Matches]:
    """The chosen factors that have entries to cite, in order, and those entries: each factor's hits as close as a
    near tie to its closest one (no read when nothing is chosen)."""
    if not chosen:
        return [], {}
    closest = {fid: max(hit.similarity for hit in hits if hit.factor_id == fid) for fid in chosen}
    entries = store.vectors.entries(user_id, [hit for hit in hits if hit.factor_id in chosen])
    found: Matches = {}
    for hit in hits:
        entry = entries.get(hit.entry_id)
        if entry is not None and hit.factor_id in chosen and hit.similarity >= closest[hit.factor_id] - NEAR_TIE:
            found.setdefault(hit.factor_id, []).append((entry, hit.similarity))
    return [fid for fid in chosen if fid in found], found


def factor_words(catalog: Catalog, factor_id: str) -> str:
    """What a factor is about in the catalog's words (its name, description, the three levels of its rubric and its
    interview questions): the text a search for what was said about it embeds."""
    factor = catalog.factor(factor_id)
    levels = [factor.rubric.low, factor.rubric.mid, factor.rubric.high]
    return " ".join([f"{factor.name}.", factor.description, *levels, *factor.elicitation_questions])


def speaks_of(catalog: Catalog, factor_id: str, said: str) -> bool:
    """Whether ``said`` uses the catalog's own words for the factor: every content word of one of its cue phrases
    ("budget approved" in "management approved a budget"; ``vocabulary.factor_vocabulary``).  Pure."""
    words = content_words(said)
    _, phrases = factor_vocabulary(catalog.factor(factor_id))
    return any(content_words(phrase) and content_words(phrase) <= words for phrase in phrases)


def said_nearby(
    store: FactorJournalStore, user_id: str, factor_ids: Sequence[str], embedder: Embedder
) -> list[tuple[JournalEntry, float]]:
    """For factors with nothing recorded under them: what the person said about them that was recorded under other
    factors (the entries, each with its similarity), nearest first, at most ``MATCHES_PER_FACTOR``; nothing when
    nothing was.  An entry is about such a factor when two readings agree: its vector is among the nearest to what
    the factor is about (``factor_words``; ``find_nearest`` pre-filtered to the person and the running model, one
    search per factor, at least ``WEAK_SIMILARITY`` close), and the person's words use the catalog's own words for it
    (``speaks_of``): a long factor text is loosely close to many answers, and an answer about another factor mentions
    this one in passing."""
    hits: dict[str, tuple[VectorHit, str]] = {}  # entry id -> its closest hit and the factor it is near
    for factor_id in factor_ids:
        try:
            vector = embedder.embed_query(factor_words(store.catalog, factor_id))
        except EmbeddingError as error:
            log.warning("journal search unavailable (%s): nothing said nearby is cited", error)
            return []
        for hit in store.vectors.nearest(user_id, vector, embedder.model_id, SEARCH_LIMIT):
            closer = hit.entry_id not in hits or hits[hit.entry_id][0].similarity < hit.similarity
            if hit.similarity >= WEAK_SIMILARITY and hit.factor_id not in factor_ids and closer:
                hits[hit.entry_id] = (hit, factor_id)
    nearest = sorted(hits.values(), key=lambda found: -found[0].similarity)
    entries = store.vectors.entries(user_id, [hit for hit, _ in nearest]) if nearest else {}
    cited = []
    for hit, factor_id in nearest:
        entry = entries.get(hit.entry_id)
        if entry is None:
            continue
        said = spoken_lines(entry.conversation_excerpt or "")[1] or entry.change_rationale
        if speaks_of(store.catalog, factor_id, said):
            cited.append((entry, hit.similarity))
    return cited[:MATCHES_PER_FACTOR]
