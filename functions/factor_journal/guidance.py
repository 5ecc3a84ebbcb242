"""What to discuss next: the questions that unlock the most, and what the next tier needs.

Pure functions of the summary (no reads), shared by the overview page, the
conversation page (the assistant's next question) and the reminder emails.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from datetime import datetime

from pydantic import BaseModel

from factor_journal.catalog import Catalog
from factor_journal.graph import FactorGraph
from factor_journal.models import USER_BACKED, AssessmentSummary, FactorState

OPENED_BONUS = 1.0  # what the last answer opened up leads, as much as a capability it alone blocks


class SuggestedQuestion(BaseModel):
    factor_id: str
    factor_name: str
    question: str
    reason: str
    score: float
    stale: bool = False  # asked again because what was said has aged (freshness)
    verbatim: bool = False  # its words are the conversation's own (asked, explained, paused on): never rephrased


def said_surely(catalog: Catalog, state: FactorState) -> bool:
    """Whether an answer was said surely enough not to be asked again: its confidence as said is at least the
    catalog's ``recheck_below``, the one line under which an answer counts for too little (the line time takes
    an answer under when it is due for a re-check, ``freshness``).  A single clear answer is above it (a cue
    phrase reads at 0.55, a bare yes or no at 0.5): asking the same question again would only repeat it; the
    say-back and Review confirm it.  Pass the state as said, not aged: ageing brings an answer back only once it
    is due (``freshness.due_at``)."""
    return state.current_confidence >= catalog.freshness.recheck_below


def _said(when: datetime | None) -> str:
    return f"last said {when:%b %Y}" if when is not None else "said long ago"


def opened_by(catalog: Catalog, graph: FactorGraph, heard: Collection[str]) -> dict[str, str]:
    """The factors an answer about ``heard`` opens up: each heard factor's neighbours in the factor graph (what it
    rests on, and what rests on it), mapped to the heard factor that opened them (the first, in catalog order)."""
    opened: dict[str, str] = {}
    for source in (factor.id for factor in catalog.factors if factor.id in heard):
        for neighbour in [*graph.depends_on(source), *graph.dependents(source)]:
            if neighbour not in heard and catalog.has_factor(neighbour) and not catalog.factor(neighbour).is_composite:
                opened.setdefault(neighbour, source)
    return opened


def next_best_questions(
    catalog: Catalog,
    graph: FactorGraph,
    summary: AssessmentSummary,
    limit: int = 3,
    asked: set[str] | None = None,
    *,
    just_heard: Collection[str] = (),
    covered: Collection[str] = (),
    stale: Mapping[str, datetime | None] | None = None,
    as_said: AssessmentSummary | None = None,
) -> list[SuggestedQuestion]:
    """Elicitation questions of missing, low-confidence or re-check factors, those unlocking the most first.

    A factor already said surely enough (``said_surely``, judged on ``as_said``: the summary as stored when
    ``summary`` is aged) is not asked again, even when its value blocks a capability: the person told us, and
    asking again would not change what it blocks; it comes back only when flagged for a re-check or due for one.

    A factor scores for every blocked capability it blocks (more for capabilities
    with fewer blockers left), plus a little for the tier when it is unassessed
    (completeness) or weakly known (confidence).  ``asked`` skips questions
    already put to the user.  A value the person confirmed or gave is settled (not asked again unless flagged
    for a re-check or due for one).  ``stale`` (factor id -> when it was last said: the answers due
    for a re-check, ``freshness``) come first, those the most capability archetypes rest on
    first, then the oldest; pass an aged summary (``freshness.assess``) so what blocks a capability weighs
    effective confidence, with the stored one as ``as_said``.  ``just_heard``, the factors the last answer spoke
    to, are never asked next; what that answer opened up (``opened_by``) comes next, so the interview follows
    what the person just said.  A factor the session already ``covered`` (asked about, in whatever words, or
    heard an answer speak to) is not asked again in it, unless a correction flagged it for a re-check.
    """
    asked = asked or set()
    stale = stale or {}
    said = (as_said or summary).factors
    opened = opened_by(catalog, graph, just_heard)
    blocked_by: dict[str, list[tuple[str, int]]] = {}
    for capability in summary.capabilities.cannot_evaluate_yet:
        for blocker in capability.blockers:
            blocked_by.setdefault(blocker.factor_id, []).append((capability.name, len(capability.blockers)))
    suggestions = []
    for factor in catalog.assessable_factors:
        if factor.id in just_heard:
            continue
        state = summary.factors.get(factor.id)
        unassessed = state is None or not state.is_assessed
        weak = not unassessed and not said_surely(catalog, said.get(factor.id, state))  # type: ignore[arg-type]
        recheck = state is not None and state.needs_recheck
        if not recheck and (factor.id in covered or asked.intersection(factor.elicitation_questions)):
            continue  # this session asked about it already, in whatever words, or heard an answer speak to it
        aged = factor.id in stale and not unassessed
        settled = state is not None and state.inference_status in USER_BACKED and not (recheck or aged)
        if settled or not (unassessed or weak or recheck or aged):
            continue  # well known already: asking again would not unlock anything, only a change in it would
        unlocks = blocked_by.get(factor.id, [])
        score = (
            sum(1.0 / count for _, count in unlocks) + (0.3 if unassessed else 0.0) + (0.2 if weak or recheck else 0.0)
        )
        resting = sum(1 for a in catalog.archetypes if any(p.factor == factor.id for p in a.prerequisites))
        if aged:
            score = 10.0 + resting + score  # stale first, the most unlocks resting on it first
        if factor.id in opened:
            score += OPENED_BONUS
        question = next((q for q in factor.elicitation_questions if q not in asked), None)
        if question is None or score <= 0:
            continue
        if aged:
            rest = f"; {resting} project type{'s rest' if resting != 1 else ' rests'} on it" if resting else ""
            reason = f"to re-check: {_said(stale[factor.id])}{rest}"
        elif factor.id in opened:
            reason = f"follows from what you said about {in_sentence(catalog.factor(opened[factor.id]).name)}"
        elif unlocks:
            closest = min(unlocks, key=lambda item: item[1])
            reason = f"helps unlock {closest[0]}" + (f" and {len(unlocks) - 1} more" if len(unlocks) > 1 else "")
            if weak:  # said already, but not surely: the person should know why it comes back
                reason = f"we are not sure about this yet; it {reason}"
        elif recheck:
            reason = "needs a re-check after a correction"
        elif weak:
            reason = "we are not sure about this yet"
        else:
            reason = "not discussed yet"
        suggestions.append(
            SuggestedQuestion(
                factor_id=factor.id,
                factor_name=factor.name,
                question=question,
                reason=reason,
                score=round(score, 3),
                stale=aged,
            )
        )
    oldest = {fid: (when.timestamp() if when else float("-inf")) for fid, when in stale.items()}
    suggestions.sort(key=lambda s: (not s.stale, -s.score, oldest.get(s.factor_id, 0.0), s.factor_id))
    return suggestions[:limit]


def in_sentence(words: str) -> str:
    """``words`` as they read inside a sentence: the first letter lowered, unless the first word is an acronym
    ("Machine learning" -> "machine learning", "ML infrastructure" and "GDPR compliance" stay)."""
    first = words.split(" ", 1)[0]
    return words if len(first) > 1 and first[1].isupper() else words[:1].lower() + words[1:]


def clarifying_question(catalog: Catalog, factor_id: str, asked: Collection[str] = ()) -> str:
    """The assistant's reply when the person asked what its question about the factor means: what the factor is
    about (the catalog's description, when it has one), what its two ends look like (the rubric's low and high), and
    the question again, in words the session has not used yet (its first wording when every one was used)."""
    factor = catalog.factor(factor_id)
    again = next((q for q in factor.elicitation_questions if q not in asked), factor.elicitation_questions[0])
    described = factor.description.strip().rstrip(".")
    about = f": {in_sentence(described)}" if described else ""
    low, high = (text.strip().rstrip(".") for text in (factor.rubric.low, factor.rubric.high))
    return (
        f"{CLARIFYING} {in_sentence(factor.name)}{about}. "
        f"It can be anything from “{low}” to “{high}”.{ASKED_AGAIN}{again}"
    )


CLARIFYING = "Good question. I am asking about"
ASKED_AGAIN = " So: "


def question_asked(turns: Sequence[tuple[str, str]]) -> str:
    """The question a person's answer answers, from the turns before it (``(role, text)``, oldest first): the
    assistant's last turn; when that is a clarification (``clarifying_question``: the person had asked what it
    meant), not its explanation but the question it asks again, or, when a stored excerpt cut that off, the question
    the person asked about (the assistant's turn before their question back), else what it is about ("I am asking
    about responsible AI policy").  Empty when the person spoke last.  Pure."""
    if not turns or turns[-1][0] != "assistant":
        return ""
    last = " ".join(turns[-1][1].split())
    if not last.startswith(CLARIFYING):
        return last
    again = last.rpartition(ASKED_AGAIN.strip())[2].strip() if ASKED_AGAIN.strip() in last else ""
    if again and not again.endswith("…"):
        return again
    if len(turns) >= 3 and turns[-2][0] != "assistant" and turns[-3][0] == "assistant":
        return question_asked(turns[:-2])
    return last.removeprefix("Good question.").strip().split(":")[0].split(". ")[0].rstrip(".…")


def next_tier_statement(summary: AssessmentSummary) -> str:
    """In words: exactly what the next decision tier still needs, or that the top is reached."""
    target = summary.overall.next_tier
    if target is None:
        return "You have reached the highest decision tier."
    needs = []
    if target.factors_needed:
        needs.append(f"{target.factors_needed} more factor{'s' if target.factors_needed != 1 else ''} assessed")
    if target.confidence_gap > 0:
        needs.append(
            f"average confidence up from {summary.overall.avg_confidence:.0%} to {target.min_avg_confidence:.0%}"
        )
    if not needs:
        return f"{target.name} ({target.budget}) is within reach."
    return f"To unlock {target.name} ({target.budget}): " + " and ".join(needs) + "."
