"""Ask why, stage 1: what a question is about (pure).

The question's type, the factors and archetypes it names in the catalog's words, whether it needs history and
dependencies, and from when (a span, or since the person's last visit); a question about the whole assessment in
everyday words (``about_the_whole``), and the text a search by meaning embeds (``question_topic``).  Functions of
the question, the catalog and a clock: no Firestore, no model.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from pydantic import BaseModel, Field

from factor_journal.catalog import Catalog
from factor_journal.graph import FactorGraph
from factor_journal.models import AssessmentSummary, QuestionType
from factor_journal.page_models import RETURN_AFTER

STANDING_CAPABILITIES = 2  # the capabilities closest to being evaluated that a question about the whole answers with


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


SINCE_VISIT = re.compile(
    r"\bsince\s+(?:(?:my|our|the|your)\s+)?(?:last|previous)\s+(?:visit|session|conversation|chat|talk|time|log-?in)\b"
    r"|\bsince\s+(?:i|we)\s+(?:last\s+)?(?:spoke|talked|chatted|met|visited|came|logged\s+(?:in|on)|checked\s+in)\b"
    r"|\bsince\s+(?:i|we)\s+(?:was|were)\s+(?:last\s+)?(?:here|in|on\s+here|by)\b"
    r"|\bsince\s+(?:i|we)\s+(?:last\s+)?(?:looked|checked)\b"
    r"|\bsince\s+last\s+(?:visit|session|we\s+(?:spoke|talked|met))\b"
)
"""A question about what changed since the person was last here ("since my last visit", "since last time", "since
we last spoke", "since I was here"): from when their previous visit ended, not a fixed span."""

CHANGED_WITHIN = timedelta(days=30)  # "what changed?" with no time said: within the last month

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


def implied_factors(catalog: Catalog, factor_ids: Sequence[str], archetype_ids: Sequence[str]) -> list[str]:
    """The factors a question about ``factor_ids`` and ``archetype_ids`` needs, in order, each once: those, then
    each archetype's prerequisites (a blocker question needs them), then each composite's components (a composite
    is explained by them).  Every id must be the catalog's.  Pure."""
    factors = list(factor_ids)
    for archetype_id in archetype_ids:
        factors.extend(p.factor for p in catalog.archetype(archetype_id).prerequisites)
    for factor_id in list(factors):
        factors.extend(catalog.factor(factor_id).composite or {})
    return list(dict.fromkeys(factors))


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
        since = since or (None if since_visit else now - CHANGED_WITHIN)
    elif archetypes or re.search(r"\bwhy\s+(can'?t|cannot|can\s+not|not)\b|\bblock", text):
        kind = "why_blocker"
    elif re.search(r"\bwhy\b|\bhow\s+come\b|\bexplain\b", text):
        kind = "why_value"
    else:
        kind = "status"
    return QuestionIntent(
        question_type=kind,
        factor_ids=implied_factors(catalog, factors, archetypes),
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


def about_the_whole_intent(intent: QuestionIntent, summary: AssessmentSummary) -> tuple[QuestionIntent, list[str]]:
    """A question about the whole assessment: answered with where we were and the capabilities closest to being
    evaluated with the factors that block them (the intent, retyped ``standing``, and the factors to cite, in the
    order the answer speaks of them: the last topic, then the blockers).  Pure."""
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


def question_topic(question: str) -> str:
    """What a question is about, without its frame about the person's words ("What did I say about the vans?"
    is about "the vans"): the text that is embedded and ranked."""
    text = " ".join(question.split())
    frame = r"(?:" + OWN_WORDS.pattern + r")(\s+(you|to\s+you))?(\s+(anything|something))?"
    topic = re.sub(frame + r"(\s+(about|regarding|on|of|concerning))?", " ", text, flags=re.IGNORECASE)
    topic = " ".join(topic.split()).strip(" ?.!,")
    return topic or text
