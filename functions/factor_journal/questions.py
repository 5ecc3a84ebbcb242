"""Answering "why?" questions from the journal, in the design's two stages.

1. **Intent**: what kind of question it is and which factors (and archetypes)
   it needs, whether history and dependencies are needed, and from when.
   When the question names no factor or archetype in the catalog's words, a
   **semantic second chance** (``semantic_factors``): the catalog's factors
   ranked against the question by the embedded model (the extractor's own
   detector), and the person's own journal searched by similarity
   (``find_nearest`` pre-filtered to the person, ``repositories.vectors``); the
   factors of the entries found are the ones the answer is about.  Every answer
   says which path found its evidence (``Answer.found_by``).
2. **Context**: the current state, latest change, history and dependencies of
   those factors, assembled within a token budget in that priority order.

Then an answer is composed from the context — by Gemini in production, by a
deterministic composer offline.  Every answer carries the dated journal
evidence it rests on (``citations``) and says so plainly when there is none.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Literal, Protocol

from pydantic import BaseModel, Field

from factor_journal import freshness
from factor_journal.catalog import Catalog
from factor_journal.embedding import Embedder, EmbeddingError, default_embedder, spoken_lines
from factor_journal.graph import FactorGraph
from factor_journal.guidance import CLARIFYING, next_tier_statement, question_asked
from factor_journal.models import AssessmentSummary, FactorState, JournalEntry, Source
from factor_journal.page_models import RETURN_AFTER
from factor_journal.repositories.vectors import VectorHit
from factor_journal.store import FactorJournalStore
from factor_journal.vocabulary import clip, content_words, factor_vocabulary

log = logging.getLogger(__name__)

QuestionType = Literal["why_blocker", "why_value", "what_changed", "what_if", "status", "what_said", "standing"]
FoundBy = Literal["names", "standing", "journal", "nearest", "catalog", "recent", "none"]
FOUND_BY_TEXT = {
    "names": "the factors and capabilities the question names",
    "standing": "where your assessment stands: its decision tier and the project types closest to being evaluated",
    "journal": "a search of your own journal by meaning (the entries closest to your question)",
    "nearest": "the entries of your journal nearest to your question, though none is close to it (their factor is among"
    " those the catalog finds likeliest for it)",
    "catalog": "the catalog's factors ranked by meaning against your question (nothing in your journal was close)",
    "recent": "what changed in the time the question asks about (it names no factor: every factor updated since)",
    "none": "nothing: the question names no factor and nothing close to it was found",
    "nearby": "a search of your own journal by meaning for what you said nearest to it, recorded under another factor",
}
UNSEARCHED = ("what_changed", "standing")  # a time's changes, the whole assessment: no search for what was said nearby
STATUS_WORDS = {"unassessed": "not assessed", "user_provided": "yours"}
"""A factor's status as the person reads it on every page ("yours", not "user provided": ``dashboard/labels.py``)."""
DEFAULT_BUDGET_TOKENS = 5000
EXCERPT_CHARS = 200
RATIONALE_CHARS = 400
"""A reader's rationale fits whole (its quote of at most 160 characters, the question's 100, the reading and how it
was weighed), so a page can reword it; only a person's long reason is cut."""
SEARCH_LIMIT = 8  # entries the nearest-neighbour search returns
MIN_SIMILARITY = 0.2  # cosine similarity below which a journal entry is not about the question
NEAR_TIE = 0.1  # factors scoring this close to the best are near ties: both are cited
WEAK_SIMILARITY = 0.16  # the floor for a status question that would otherwise get the whole assessment ...
CORROBORATING_RANKS = 3  # ... when the entry's factor is among the catalog's likeliest for the question
CATALOG_WEIGHT = 0.5  # how much the catalog's likelihood (0-1) adds to a journal entry's similarity (docs/ask.md)
MAX_SEMANTIC_FACTORS = 2  # factors an answer found by meaning is about
STANDING_CAPABILITIES = 2  # the capabilities closest to being evaluated that a question about the whole answers with
MATCHES_PER_FACTOR = 3


def estimate_tokens(value: object) -> int:
    """About four characters per token of the JSON form: an estimate, used for budgeting."""
    return max(1, len(json.dumps(value, default=str)) // 4)


class QuestionIntent(BaseModel):
    question_type: QuestionType
    factor_ids: list[str] = Field(default_factory=list)
    archetype_ids: list[str] = Field(default_factory=list)
    needs_history: bool = False
    needs_dependencies: bool = False
    since: datetime | None = None
    since_visit: bool = False  # "since my last visit": ``since`` is when the person's previous visit ended

    @property
    def about_a_time(self) -> bool:
        """A question about what changed in a time (since a date, or since the person's last visit, which may have
        had none before it): answered with what was recorded in it, not with a topic."""
        return self.question_type == "what_changed" and (self.since is not None or self.since_visit)


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
    estimated_tokens: int = 0
    budget_tokens: int = DEFAULT_BUDGET_TOKENS
    truncated: bool = False
    found_by: FoundBy = "names"


class Phrase(BaseModel):
    """A piece of an answer's line: plain text, shown as it is (``strong`` for the app's own emphasis, a factor's
    or capability's name; someone's words are never strong).  The app escapes every phrase (docs/security.md)."""

    text: str
    strong: bool = False


class AnswerLine(BaseModel):
    """One line of an answer, laid out by ``kind``: a sentence, a point under it, a detail under a point, or
    ``words``: someone's words quoted under the point before it."""

    kind: Literal["sentence", "point", "detail", "words"] = "sentence"
    phrases: list[Phrase] = Field(default_factory=list)

    @property
    def plain(self) -> str:
        return "".join(phrase.text for phrase in self.phrases)


def _line(kind: Literal["sentence", "point", "detail", "words"], *parts: str | tuple[str]) -> AnswerLine:
    """A line from its parts: a string is plain, a 1-tuple ``(name,)`` is strong."""
    phrases = [Phrase(text=p[0], strong=True) if isinstance(p, tuple) else Phrase(text=p) for p in parts]
    return AnswerLine(kind=kind, phrases=[p for p in phrases if p.text])


_INDENT = {"sentence": "", "point": "- ", "detail": "  - ", "words": "    "}


def plain_text(lines: Sequence[AnswerLine]) -> str:
    """The answer as plain text (no Markup: a log, the CLI, a test): points as "- ", someone's words indented."""
    return "\n".join(_INDENT[line.kind] + line.plain for line in lines)


def clip_lines(text: str, limit: int) -> str:
    """The last lines of ``text`` that fit in ``limit`` characters (a conversation excerpt ends with the turn that
    was analysed); a last line longer than that is ``clip``-ped."""
    kept: list[str] = []
    for line in reversed([line for line in (text or "").splitlines() if line.strip()]):
        if kept and sum(len(k) + 1 for k in kept) + len(line) > limit:
            break
        kept.insert(0, line.strip() if len(line) <= limit else clip(line, limit))
    return "\n".join(kept)


class Answer(BaseModel):
    text: str
    lines: list[AnswerLine] = Field(default_factory=list)  # the text, laid out; someone's words always plain
    citations: list[Citation]
    has_evidence: bool
    intent: QuestionIntent
    composer: str
    found_by: FoundBy = "names"


class AnswerComposer(Protocol):
    name: str

    def compose(self, question: str, context: QuestionContext) -> str: ...


class Writer(AnswerComposer, Protocol):
    """A model that writes for people: answers to "why?" questions and the next interview question
    phrased to follow the conversation (Gemini in production; None means the offline composer)."""

    def phrase_question(self, question: str, last_exchange: str) -> str: ...


# Stage 1: intent ---------------------------------------------------------------------------

SINCE_VISIT = re.compile(
    r"\bsince\s+(?:(?:my|our|the|your)\s+)?(?:last|previous)\s+(?:visit|session|conversation|chat|talk|time|log-?in)\b"
    r"|\bsince\s+(?:i|we)\s+(?:last\s+)?(?:spoke|talked|chatted|met|visited|came|logged\s+(?:in|on)|checked\s+in)\b"
    r"|\bsince\s+(?:i|we)\s+(?:was|were)\s+(?:last\s+)?(?:here|in|on\s+here|by)\b"
    r"|\bsince\s+(?:i|we)\s+(?:last\s+)?(?:looked|checked)\b"
    r"|\bsince\s+last\s+(?:visit|session|we\s+(?:spoke|talked|met))\b"
)
"""A question about what changed since the person was last here ("since my last visit", "since last time", "since
we last spoke", "since I was here"): from when their previous visit ended, not a fixed span."""

_SINCE_PATTERNS = [
    (re.compile(r"last\s+month|past\s+month|a\s+month\s+ago"), timedelta(days=30)),
    (re.compile(r"last\s+week|past\s+week|a\s+week\s+ago"), timedelta(days=7)),
    (re.compile(r"yesterday"), timedelta(days=1)),
    (re.compile(r"last\s+(\d+)\s+days|past\s+(\d+)\s+days"), None),
]


OWN_WORDS = re.compile(
    r"\b(what|where|when|how)\s+(did|have|had)\s+(i|we)\s+(say|said|tell|told|mention|mentioned|put|describe)"
    r"|\bdid\s+(i|we)\s+(say|tell|mention|talk)|\b(i|we)\s+(said|told\s+you|mentioned)\b"
    r"|\bmy\s+(own\s+)?words\b"
)
"""A question about what the person said ("What did I say about …", "Did I mention …"): answered from the
entries holding their words."""

_ABOUT_THE_WHOLE = (
    r"(why\s+)?(are|am)\s+(we|i)\s+(still\s+|so\s+)?stuck",
    r"what('s|\s+is|\s+are)?\s+(holding|keeping|holds|keeps)\s+(us|me)\s+back",
    r"what\s+(should|must|do|can|would|shall)\s+(we|i)\s+((need|have)\s+to\s+)?"
    r"(do|fix|improve|tackle|change|work\s+on|focus\s+on|start\s+with)",
    r"where\s+(should|do|can|would|shall)\s+(we|i)\s+(start|begin)",
    r"what('s|\s+is|\s+are)\s+(the\s+|our\s+|my\s+)?"
    r"(priority|priorities|next\s+steps?|(biggest\s+|main\s+)?(gaps?|blockers?|problems?|obstacles?)|missing)",
    r"(the\s+|our\s+)?next\s+steps?",
    r"how\s+(are|am)\s+(we|i)\s+doing",
    r"where\s+(do|are)\s+(we|i)\s+(stand|standing)",
    r"how\s+(far\s+(along\s+)?|ready\s+)are\s+(we|i)",
    r"why\s+(can'?t|cannot|can\s+not)\s+(we|i)\s+(do|evaluate|start|try)\s+(anything|any\s+ai|any\s+projects?|ai)",
    r"why\s+(are|am)\s+(we|i)\s+(only|still|just)\s+(at\s+|in\s+|on\s+)?(the\s+)?(this\s+)?(tier|level|stage|TIERS)",
    r"(how\s+(do|can|could|would)\s+(we|i)\s+(get|move|go)|what\s+(would|will|does\s+it\s+take\s+to)\s+(get|take)"
    r"\s+(us|me))(\s+up)?\s+to\s+(the\s+)?next\s+(level|tier|stage)",
)
_WHOLE_TAILS = (
    r"first|next|now|yet|today|still|then|here|overall|anyway|exactly|really|actually|so\s+far|in\s+general"
    r"|at\s+the\s+moment|right\s+now|(with|for|on|in)\s+ai|to\s+(get\s+started|get\s+going|improve|progress"
    r"|move\s+(forward|on|ahead)|get\s+(to\s+)?(the\s+)?next\s+(level|tier|stage))"
)


def about_the_whole(question: str, catalog: Catalog) -> bool:
    """Whether a question is about the whole assessment in everyday words ("Why are we stuck?", "What should we fix
    first?", "How are we doing?", "Why are we only Exploratory?"): the whole question is such a frame, with nothing
    after it but words like "first", "now" or "with AI" -- "What should we do about the vans?" is about the vans.
    Pure."""
    text = re.sub(r"[^\w\s'€<>–-]", " ", question.lower().replace("’", "'"))
    text = " ".join(text.split())
    tiers = "|".join(re.escape(tier.name.lower()) for tier in catalog.decision_tiers)
    frames = "|".join(f"(?:{frame.replace('TIERS', tiers)})" for frame in _ABOUT_THE_WHOLE)
    lead = r"(?:(?:so|ok|okay|and|but|then|honestly|hi|hey|please|tell\s+me)\s+)*"
    return re.fullmatch(rf"{lead}(?:{frames})(?:\s+(?:{_WHOLE_TAILS}))*", text) is not None


def analyse_intent(question: str, catalog: Catalog, graph: FactorGraph, now: datetime | None = None) -> QuestionIntent:
    """Stage 1, deterministic: the question's type, the factors and archetypes it names, and from when."""
    text = " ".join(question.lower().split())
    now = now or datetime.now(UTC)
    factors = catalog.factors_named_in(text)
    archetypes = catalog.archetypes_named_in(text)
    since = None
    since_visit = SINCE_VISIT.search(text) is not None  # when that was is the person's activity's: answer_question
    for pattern, delta in [] if since_visit else _SINCE_PATTERNS:
        match = pattern.search(text)
        if match:
            days = delta or timedelta(days=int(next(g for g in match.groups() if g)))
            since = now - days
            break
    if OWN_WORDS.search(text):
        kind: QuestionType = "what_said"
    elif not factors and not archetypes and about_the_whole(question, catalog):
        kind = "standing"
    elif re.search(r"\bwhat\s+if\b|\bif\s+we\s+(improve|raise|fix|invest)|\bwould\s+(it|we)\s+unlock", text):
        kind = "what_if"
    elif re.search(r"what('s|\s+has|\s+have)?\s+changed|\bsince\b|\bprogress\b", text):
        kind = "what_changed"
        since = since or (None if since_visit else now - timedelta(days=30))
    elif archetypes or re.search(r"\bwhy\s+(can'?t|cannot|can\s+not|not)\b|\bblock", text):
        kind = "why_blocker"
    elif re.search(r"\bwhy\b|\bhow\s+come\b|\bexplain\b", text):
        kind = "why_value"
    else:
        kind = "status"
    for archetype_id in archetypes:  # a blocker question needs the prerequisites
        factors.extend(p.factor for p in catalog.archetype(archetype_id).prerequisites)
    for factor_id in list(factors):  # a composite is explained by its components
        factors.extend(catalog.factor(factor_id).composite or {})
    return QuestionIntent(
        question_type=kind,
        factor_ids=list(dict.fromkeys(factors)),
        archetype_ids=archetypes,
        needs_history=kind in ("why_value", "what_changed", "why_blocker", "what_said"),
        needs_dependencies=kind in ("why_value", "what_if", "why_blocker"),
        since=since,
        since_visit=since_visit,
    )


def previous_visit_end(activity: Sequence[datetime], now: datetime, gap: timedelta = RETURN_AFTER) -> datetime | None:
    """When the person's previous visit ended, from the times they were active (their answers, in any order), read
    back from ``now``: the visit in progress is the run of activity each within ``gap`` of the next, the latest within
    ``gap`` of now (as the conversation page tells a return from a reload: ``page_models.RETURN_AFTER``); the
    previous visit ended at the latest activity before that run.  None when there was no earlier visit.  Pure."""
    later = now
    for moment in sorted((moment for moment in activity if moment <= now), reverse=True):
        if later - moment >= gap:
            return moment
        later = moment
    return None


# Stage 1, second chance: by meaning -----------------------------------------------------------


def question_topic(question: str) -> str:
    """What a question is about, without its frame about the person's words ("What did I say about the vans?"
    is about "the vans"): the text that is embedded and ranked."""
    text = " ".join(question.split())
    frame = r"(?:" + OWN_WORDS.pattern + r")(\s+(you|to\s+you))?(\s+(anything|something))?"
    topic = re.sub(frame + r"(\s+(about|regarding|on|of|concerning))?", " ", text, flags=re.IGNORECASE)
    topic = " ".join(topic.split()).strip(" ?.!,")
    return topic or text


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


Matches = dict[str, list[tuple[JournalEntry, float]]]


def semantic_factors(
    store: FactorJournalStore,
    user_id: str,
    question: str,
    embedder: Embedder | None,
    own_words: bool,
    rather_than_nothing: bool = False,
) -> tuple[list[str], FoundBy, Matches]:
    """The second chance for a question that names no factor: (factors, how they were found, the entries the
    journal search found for them with their similarity).  First the catalog's factors ranked against the
    question; then the person's own entries nearest to it (``find_nearest`` pre-filtered to the person and the
    running model); the factors of the entries found, each weighed with the catalog's likelihood
    (``choose_factors``).  When the journal holds nothing close, the catalog's likeliest factor if the
    detector finds it likely (found by ``catalog``); else, when the question would otherwise be answered with the
    whole assessment (``rather_than_nothing``), the person's entries nearest to it down to ``WEAK_SIMILARITY`` whose
    factor the catalog ranks among its ``CORROBORATING_RANKS`` likeliest (two weak readings that agree are more
    likely about the question than the assessment as a whole; found by ``nearest``, shown with their
    similarity); else nothing (``none``)."""
    topic = question_topic(question)
    ranked, floor = rank_catalog(store.catalog, topic)
    likelihood = dict(ranked)
    hits: list[VectorHit] = []
    if embedder is not None:
        try:
            hits = store.vectors.nearest(user_id, embedder.embed_query(topic), embedder.model_id, SEARCH_LIMIT)
        except EmbeddingError as error:
            log.warning("journal search unavailable (%s): the catalog's ranking only", error)
    pairs = [(hit.factor_id, hit.similarity) for hit in hits]
    cited, found = _entries_found(store, user_id, hits, choose_factors(pairs, likelihood, own_words=own_words))
    if cited:
        return cited, "journal", found
    likely = [fid for fid, p in ranked[:1] if p >= floor and not store.catalog.factor(fid).is_composite]
    if likely:
        return likely, "catalog", {}
    if rather_than_nothing:
        corroborated = {fid for fid, _ in ranked[:CORROBORATING_RANKS]}
        weak = [(fid, similarity) for fid, similarity in pairs if fid in corroborated]
        chosen = choose_factors(weak, likelihood, own_words=own_words, min_similarity=WEAK_SIMILARITY)
        cited, found = _entries_found(store, user_id, hits, chosen)
        if cited:
            return cited, "nearest", found
    return [], "none", {}


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
) -> list[Citation]:
    """For factors with nothing recorded under them: what the person said about them that was recorded under other
    factors, nearest first, at most ``MATCHES_PER_FACTOR``; nothing when nothing was.  An entry is about such a
    factor when two readings agree: its vector is among the nearest to what the factor is about (``factor_words``;
    ``find_nearest`` pre-filtered to the person and the running model, one search per factor, at least
    ``WEAK_SIMILARITY`` close), and the person's words use the catalog's own words for it (``speaks_of``): a long
    factor text is loosely close to many answers, and an answer about another factor mentions this one in passing."""
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
            cited.append(_citation(store.graph, entry, hit.similarity))
    return cited[:MATCHES_PER_FACTOR]


# Stage 2: context within a budget ----------------------------------------------------------


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


def _citation(graph: FactorGraph, entry: JournalEntry, similarity: float | None = None) -> Citation:
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


def build_context(
    store: FactorJournalStore,
    user_id: str,
    intent: QuestionIntent,
    summary: AssessmentSummary,
    budget_tokens: int = DEFAULT_BUDGET_TOKENS,
    matched: Matches | None = None,
) -> QuestionContext:
    """Stage 2: current state and latest change (and the entries a journal search found for the factor,
    ``matched``, nearest first), then history, then dependencies, within the budget."""
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
            latest_change=_citation(graph, entries[0]) if entries else None,
            matched=[_citation(graph, e, sim) for e, sim in (matched or {}).get(fid, [])[:MATCHES_PER_FACTOR]],
        )
        cost = estimate_tokens(item.model_dump())
        if used + cost > budget_tokens:
            context.truncated = True
            break
        context.factors[fid] = item
        used += cost

    if intent.needs_history and used < budget_tokens * 0.7:  # priority 2: history
        for fid, item in context.factors.items():
            older = [_citation(graph, e) for e in histories.get(fid, [])[1:5]]
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


# Composition -------------------------------------------------------------------------------


def _date(moment: datetime) -> str:
    return moment.strftime("%d %b %Y")


def _value(value: float | None) -> str:
    return "not assessed yet" if value is None else f"{value:g}/100"


def _capability(context: QuestionContext, archetype_id: str) -> str:
    """A capability as a person reads it: its name from the catalog ("Machine-learning automation"), never its id."""
    return context.capability_names.get(archetype_id) or archetype_id.replace("_", " ").capitalize()


class OfflineComposer:
    """Deterministic answers from the context: the facts, each with its dated evidence; factors and capabilities
    by their names."""

    name = "offline"

    def compose(self, question: str, context: QuestionContext) -> str:
        return plain_text(self.compose_lines(question, context))

    def compose_lines(self, question: str, context: QuestionContext) -> list[AnswerLine]:
        """The answer laid out line by line (``AnswerLine``): names strong, someone's words plain."""
        intent = context.intent
        lines: list[AnswerLine] = _standing(context)
        if intent.question_type in ("why_blocker", "standing") and intent.archetype_ids:
            for archetype_id in intent.archetype_ids:
                blockers = context.blocked.get(archetype_id, [])
                if not blockers:
                    lines.append(
                        _line(
                            "sentence",
                            "You can already evaluate ",
                            (_capability(context, archetype_id),),
                            ": its prerequisites are met.",
                        )
                    )
                    continue
                lines.append(_line("sentence", (_capability(context, archetype_id),), " is blocked by:"))
                for blocker in blockers:
                    value = blocker["value"]
                    shown = (
                        "not assessed yet" if value is None else f"{value:g} (confidence {blocker['confidence']:.0%})"
                    )
                    lines.append(
                        _line(
                            "point",
                            (str(blocker["factor_name"]),),
                            f": {shown}; needs ≥ {blocker['min_value']:g} at confidence ≥ "
                            f"{blocker['min_confidence']:.0%}",
                        )
                    )
        elif intent.question_type == "what_if":
            for fid, item in context.factors.items():
                unlocked = context.unlocks.get(fid, [])
                if unlocked:
                    names = ", ".join(_capability(context, u) for u in unlocked)
                    lines.append(
                        _line("sentence", "Raising ", (item.name,), f" to its thresholds would unlock: {names}.")
                    )
                else:
                    lines.append(
                        _line("sentence", "Improving ", (item.name,), " alone would not unlock a new capability yet.")
                    )
                dependents = [k for k, v in context.dependencies.items() if v.get("affects") == fid]
                if dependents:
                    rests = ", ".join(str(context.dependencies[d]["name"]) for d in dependents)
                    lines.append(_line("sentence", f"It rests on {rests}."))
        if intent.question_type == "standing":
            return lines + _where_to_start(context)
        if intent.question_type == "what_said" or context.found_by in ("journal", "nearest"):
            lines.extend(_own_words(context))
            if intent.question_type == "what_said" and lines:
                return lines
        for item in context.factors.values():
            if intent.question_type in ("why_value", "status", "what_changed") or item.latest_change:
                status = STATUS_WORDS.get(item.status, item.status.replace("_", " "))
                state = f" (confidence {item.confidence:.0%}, {status})" if item.value is not None else ""
                if intent.question_type != "what_if" or item.latest_change:
                    lines.append(_line("sentence", (item.name,), f" is {_value(item.value)}{state}."))
            if item.latest_change:
                change = item.latest_change
                lines.append(_line("point", f"{_date(change.date)} ({change.change}): ", change.rationale))
                said = change.said or spoken_lines(change.excerpt)[1]
                if said and said[:60] not in change.rationale:
                    lines.append(_line("words", f"“{said}”"))
            for older in item.history:
                lines.append(_line("detail", f"{_date(older.date)} ({older.change}): ", older.rationale))
        lines.extend(_nearby(context))
        if intent.question_type == "why_value":
            low = [d for d in context.dependencies.values() if d.get("value") is not None and d["value"] < 40]  # type: ignore[operator]
            if low:
                named = ", ".join(f"{d['name']} ({d['value']:g})" for d in low)
                lines.append(_line("sentence", f"Low factors it depends on: {named}."))
        if not lines and context.found_by != "recent":  # (nothing changed in the time asked about: said so after)
            lines.append(_line("sentence", "I could not tell which factor or capability the question is about."))
        return lines


def _standing(context: QuestionContext) -> list[AnswerLine]:
    """Where the whole assessment stands, in the overview's words: the tier, how much is assessed and how surely,
    and what the next tier needs; nothing for a question about something in particular."""
    standing = context.standing
    if standing is None:
        return []
    lines = (
        [_line("sentence", "I found nothing in your assessment about that in particular; here is where it stands.")]
        if standing.in_place_of_nothing
        else []
    )
    lines += [
        _line(
            "sentence",
            "Your decision tier is ",
            (standing.tier_name,),
            f" ({standing.budget}): {standing.assessed} of {standing.total} factors assessed, "
            f"{standing.avg_confidence:.0%} sure on average.",
        ),
        _line("sentence", standing.next_tier),
    ]
    if standing.last_topic and standing.last_said:
        lines.append(
            _line("sentence", "Last time we talked about ", (standing.last_topic,), f" ({_date(standing.last_said)}).")
        )
    if context.intent.archetype_ids:
        lines.append(_line("sentence", "The project types closest to being evaluated, and what they still need:"))
    else:
        lines.append(_line("sentence", "Every project type can be evaluated."))
    return lines


def _where_to_start(context: QuestionContext) -> list[AnswerLine]:
    """What the blockers of the capabilities closest to being evaluated ask for: a value to improve in the company,
    or something to tell the assistant (not assessed yet, or not known surely enough)."""
    improve: dict[str, None] = {}
    tell: dict[str, str] = {}
    for blockers in context.blocked.values():
        for blocker in blockers:
            name = str(blocker["factor_name"])
            missing = blocker.get("missing") or []
            if blocker["value"] is None or "unassessed" in missing:  # type: ignore[operator]
                tell.setdefault(name, "not assessed yet")
            elif "value" in missing:  # type: ignore[operator]
                improve.setdefault(name)
            else:
                tell.setdefault(name, "not known surely enough yet")
    lines = []
    if improve:
        lines.append(_line("sentence", f"To improve in the company first: {', '.join(improve)}."))
    if tell:
        told = ", ".join(f"{name} ({why})" for name, why in tell.items())
        lines.append(_line("sentence", f"To tell the assistant more about: {told}."))
    return lines


def _own_words(context: QuestionContext) -> list[AnswerLine]:
    """What the person said that the journal search found, nearest first, with the factor it was read as."""
    matched = sorted(
        (c for item in context.factors.values() for c in item.matched), key=lambda c: -(c.similarity or 0.0)
    )
    if not matched:
        return []
    lines = [_line("sentence", "From what you said (found in your journal by meaning):")]
    for citation in matched:
        words = citation.said or citation.rationale
        lines.append(
            _line(
                "point",
                f"{_date(citation.date)}: “{words}” (read as ",
                (citation.factor_name,),
                f", {citation.change})",
            )
        )
    return lines


def _nearby(context: QuestionContext) -> list[AnswerLine]:
    """What the person said near the factors the answer is about, which have nothing recorded under them: said
    plainly to be recorded under another factor, each with that factor and its change."""
    nearby = context.nearby_under_other_factors
    if not nearby:
        return []
    names = " or ".join(item.name for item in context.factors.values())
    lines = [
        _line(
            "sentence",
            f"Nothing is recorded under {names} yet, but you said something near it, recorded under another factor "
            "(found in your journal by meaning):",
        )
    ]
    for citation in nearby:
        lines.append(
            _line(
                "point",
                f"{_date(citation.date)}: “{citation.said or citation.rationale}” (recorded under ",
                (citation.factor_name,),
                f", {citation.change})",
            )
        )
    return lines


def _citations(context: QuestionContext) -> list[Citation]:
    """The evidence: entries a journal search found first (nearest first), then the rest, newest first (the entries
    said near factors with nothing recorded under them among the first)."""
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
    return matched + sorted(found, key=lambda c: c.date, reverse=True)


def _from_when(intent: QuestionIntent) -> list[AnswerLine]:
    """For a question about what changed: from when the answer counts ("since your last visit, which ended …")."""
    if not intent.about_a_time:
        return []
    if intent.since_visit and intent.since is None:
        return [_line("sentence", "You have no earlier visit: here is everything recorded so far.")]
    assert intent.since is not None
    moment = f"{_date(intent.since)}, {intent.since.astimezone(UTC):%H:%M} UTC"
    if intent.since_visit:
        return [_line("sentence", f"Since your last visit, which ended with your answer of {moment}:")]
    return [_line("sentence", f"Since {_date(intent.since)}:")]


def _about_the_whole(intent: QuestionIntent, summary: AssessmentSummary) -> tuple[QuestionIntent, list[str]]:
    """A question about the whole assessment: answered with where we were and the capabilities closest to being
    evaluated with the factors that block them (the intent, retyped ``standing``, and the factors to cite, in the
    order the answer speaks of them: the last topic, then the blockers)."""
    nearest = summary.capabilities.cannot_evaluate_yet[:STANDING_CAPABILITIES]
    last = [summary.last_conversation.factor_id] if summary.last_conversation else []
    blocking = [*last, *(blocker.factor_id for capability in nearest for blocker in capability.blockers)]
    standing = intent.model_copy(
        update={
            "question_type": "standing",
            "archetype_ids": [capability.archetype_id for capability in nearest],
            "needs_history": False,
            "needs_dependencies": False,
        }
    )
    return standing, list(dict.fromkeys(blocking))


def answer_question(
    store: FactorJournalStore,
    user_id: str,
    question: str,
    composer: AnswerComposer | None = None,
    budget_tokens: int = DEFAULT_BUDGET_TOKENS,
    now: datetime | None = None,
    embedder: Embedder | None | Literal["default"] = "default",
) -> Answer:
    """Answer a question about the user's assessment with the dated journal evidence behind it, and say how
    the evidence was found (``found_by``): by the names in the question, else by meaning (the person's journal
    searched by similarity, or the catalog ranked against the question), else, for a question about how things stand,
    the whole assessment (``standing``).  ``embedder``
    embeds the question (default: the process's, ``FJ_EMBEDDER``; None: no journal search).  Confidences, the
    blockers and the tier are the summary's as they count at ``now`` (``freshness.assess``), as the pages show them."""
    question = (question or "").strip()[:500]
    stored = store.summary(user_id)
    if stored is None:
        raise ValueError(f"unknown user {user_id!r}")
    # As every page shows it: each confidence aged to now, and the capabilities and tier that follow from that
    now = now or datetime.now(UTC)
    summary = freshness.assess(store.catalog, store.graph, stored, now).summary
    intent = analyse_intent(question, store.catalog, store.graph, now)
    if intent.since_visit:  # "since my last visit": when the person's previous visit ended, by their answers
        intent.since = previous_visit_end(store.activity(user_id), now)
    found_by: FoundBy = "names"
    matched: Matches = {}
    in_place_of_nothing = False
    if not intent.factor_ids and not intent.archetype_ids:
        chosen: list[str] = []
        if intent.question_type == "standing":  # "why are we stuck?", "why can't we do anything yet?"
            intent, chosen, found_by = *_about_the_whole(intent, summary), "standing"
        elif intent.about_a_time:
            # about a time, not a topic (since a visit with none before it: since ever)
            chosen = [
                fid
                for fid, state in summary.factors.items()
                if state.last_updated is not None
                and (intent.since is None or state.last_updated > intent.since)
                and not store.catalog.factor(fid).is_composite
            ]
            found_by = "recent"
        elif question:
            model = default_embedder() if embedder == "default" else embedder
            chosen, found_by, matched = semantic_factors(
                store,
                user_id,
                question,
                model,
                own_words=intent.question_type == "what_said",
                rather_than_nothing=intent.question_type == "status" and summary.last_conversation is not None,
            )
        if not chosen and intent.question_type == "status":
            # names nothing and matches nothing the person said ("so where are we?", "what's the hold-up?"): how the
            # whole assessment stands, with where we were
            intent, chosen, found_by = *_about_the_whole(intent, summary), "standing"
            in_place_of_nothing = True
        elif not chosen and intent.question_type != "standing" and found_by != "recent":
            found_by = "none"  # (about the whole, with nothing blocked: still so; nothing changed since: said so)
        intent = intent.model_copy(update={"factor_ids": chosen})
    context = build_context(store, user_id, intent, summary, budget_tokens, matched=matched)
    context.found_by = found_by
    if found_by == "recent":  # changed since: a factor touched since (a re-fold, say) with no entry since is not
        context.factors = {fid: item for fid, item in context.factors.items() if item.latest_change}
    citations = _citations(context)
    unrecorded = [fid for fid, item in context.factors.items() if not store.catalog.factor(fid).is_composite]
    if unrecorded and not citations and intent.question_type not in UNSEARCHED:
        # nothing recorded under the factors the answer is about: before saying nothing said speaks to them, what
        # the person said near them, recorded under other factors
        model = default_embedder() if embedder == "default" else embedder
        if model is not None:
            context.nearby_under_other_factors = said_nearby(store, user_id, unrecorded[:MAX_SEMANTIC_FACTORS], model)
            citations = _citations(context)
    if intent.question_type == "standing":
        overall, last = summary.overall, summary.last_conversation
        context.standing = Standing(
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
    composer = composer or OfflineComposer()
    lines = _from_when(intent)
    if isinstance(composer, OfflineComposer):
        lines += composer.compose_lines(question, context)
    else:  # a model's answer: plain text, one sentence line per line it wrote
        lines += [_line("sentence", line) for line in composer.compose(question, context).splitlines() if line.strip()]
    if not citations and intent.about_a_time:
        lines.append(_line("sentence", "Nothing was recorded since then."))
    elif not citations:
        lines.append(
            _line(
                "sentence",
                "There is no journal evidence for this yet: nothing said in the conversations so far speaks to it.",
            )
        )
    found = FOUND_BY_TEXT[found_by]
    if context.nearby_under_other_factors:
        found += f" and, as nothing is recorded under it yet, {FOUND_BY_TEXT['nearby']}"
    lines.append(_line("sentence", f"Found by: {found}."))
    return Answer(
        text=plain_text(lines),
        lines=lines,
        citations=citations,
        has_evidence=bool(citations),
        intent=intent,
        composer=composer.name,
        found_by=found_by,
    )
