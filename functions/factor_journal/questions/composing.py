"""Ask why, stage 3: the answer, composed from the context, and ``answer_question``, which runs the three stages.

An answer is composed by Gemini in production (a ``Writer``), by a deterministic composer offline
(``OfflineComposer``).  It is laid out, never written in Markdown (``Answer.lines``: sentences, points, details and
someone's words, each a list of plain phrases); every answer carries the dated journal evidence it rests on
(``citations``), says so plainly when there is none, and says how its evidence was found ("Found by: …").
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Literal, Protocol

from pydantic import BaseModel, Field

from factor_journal.embedding import spoken_lines
from factor_journal.models import status_words
from factor_journal.questions.context import (
    DEFAULT_BUDGET_TOKENS,
    Citation,
    QuestionContext,
    UnassessedAnswer,
    assessment_now,
    citations,
    gather_context,
)
from factor_journal.questions.intent import QuestionIntent, analyse_intent, previous_visit_end
from factor_journal.questions.routing import IntentRouter, Routed, route, route_found
from factor_journal.questions.search import EmbedderChoice, FoundBy, find_factors
from factor_journal.store import FactorJournalStore

FOUND_BY_TEXT = {
    "names": "the factors and capabilities the question names",
    "model": "the assistant's reading of your question against the catalog and the index of your journal",
    "standing": "where your assessment stands: its decision tier and the project types closest to being evaluated",
    "journal": "a search of your own journal by meaning (the entries closest to your question)",
    "nearest": "the entries of your journal nearest to your question, though none is close to it (their factor is among"
    " those the catalog finds likeliest for it)",
    "catalog": "the catalog's factors ranked by meaning against your question (nothing in your journal was close)",
    "recent": "what changed in the time the question asks about (it names no factor: every factor updated since)",
    "none": "nothing: the question names no factor and nothing close to it was found",
    "nearby": "a search of your own journal by meaning for what you said nearest to it, recorded under another factor",
    "answers": "a search by meaning of every answer you gave, understood or not",
}
READ_BY_MODEL = "the assistant's reading of your question, then "
"""How "Found by" begins when a model read the question but named no factor (the search by meaning found the rest)."""
ROUTER_FAILED = " (the assistant could not read your question just now: it was matched without it)"
"""What "Found by" adds when the intent router's call failed and the embedded rules read the question."""
UNROUTED = Routed(None)  # no model read the question: the embedded rules did
NOT_ASSESSED = "not part of the assessment yet"
"""The mark of an answer cited as the person's words because it fed no journal entry."""


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


class Answer(BaseModel):
    text: str
    lines: list[AnswerLine] = Field(default_factory=list)  # the text, laid out; someone's words always plain
    citations: list[Citation]
    has_evidence: bool
    intent: QuestionIntent
    composer: str
    found_by: FoundBy = "names"
    unassessed_answers: list[UnassessedAnswer] = Field(default_factory=list)  # cited as the person's words
    routed_by: str = "embedded"  # who read what the question is about: the embedded rules, or a model ("gemini")
    routing_failed: bool = False  # a model was asked what the question is about and failed: the rules read it


class AnswerComposer(Protocol):
    name: str

    def compose(self, question: str, context: QuestionContext) -> str: ...


class Writer(AnswerComposer, Protocol):
    """A model that writes for people: answers to "why?" questions and the next interview question
    phrased to follow the conversation (Gemini in production; None means the offline composer)."""

    def phrase_question(self, question: str, last_exchange: str) -> str: ...


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
            return lines + _where_to_start(context) + _unassessed(context)
        if intent.question_type == "what_said" or context.found_by in ("journal", "nearest"):
            lines.extend(_own_words(context))
            if intent.question_type == "what_said" and (lines or context.unassessed_answers):
                return lines + _unassessed(context)
        for item in context.factors.values():
            if intent.question_type in ("why_value", "status", "what_changed") or item.latest_change:
                status = status_words(item.status)
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
        return lines + _unassessed(context)


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
    return lines + [_said_point(citation, "read as") for citation in matched]


def _said_point(citation: Citation, filed: str) -> AnswerLine:
    """A point quoting what the person said, dated, with the factor it was ``filed`` ("read as", "recorded under")
    and its change."""
    words = citation.said or citation.rationale
    return _line(
        "point", f"{_date(citation.date)}: “{words}” ({filed} ", (citation.factor_name,), f", {citation.change})"
    )


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
    return lines + [_said_point(citation, "recorded under") for citation in nearby]


def _unassessed(context: QuestionContext) -> list[AnswerLine]:
    """What the person said close to the question that fed no journal entry: their words with the date, each
    marked as not part of the assessment yet."""
    if not context.unassessed_answers:
        return []
    lines = [
        _line("sentence", "What you said that is not part of the assessment yet (found among your answers by meaning):")
    ]
    for answer in context.unassessed_answers:
        lines.append(_line("point", f"{_date(answer.date)}: “{answer.said}” ({NOT_ASSESSED})"))
    return lines


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


def _composed(composer: AnswerComposer, question: str, context: QuestionContext) -> list[AnswerLine]:
    """The composer's answer laid out: the offline composer's lines as they are, a model's plain text one sentence
    line per line it wrote, then the answers not part of the assessment yet, each with its mark."""
    if isinstance(composer, OfflineComposer):
        return composer.compose_lines(question, context)
    written = [_line("sentence", line) for line in composer.compose(question, context).splitlines() if line.strip()]
    return written + _unassessed(context)


def _closing(context: QuestionContext, evidence: Sequence[Citation], routed: Routed = UNROUTED) -> list[AnswerLine]:
    """How the answer ends: that nothing was recorded in the time asked about, or that there is no evidence, when
    so; then how its evidence was found (and whether a model read the question, or failed to)."""
    lines = []
    if not evidence and context.intent.about_a_time:
        lines.append(_line("sentence", "Nothing was recorded since then."))
    elif not evidence and context.unassessed_answers:
        lines.append(
            _line(
                "sentence",
                "There is no journal evidence for this yet: nothing understood from what you said speaks to it, and "
                f"the words above are {NOT_ASSESSED}.",
            )
        )
    elif not evidence:
        lines.append(
            _line(
                "sentence",
                "There is no journal evidence for this yet: nothing said in the conversations so far speaks to it.",
            )
        )
    found = FOUND_BY_TEXT[context.found_by]
    if routed.intent is not None and context.found_by != "model":
        found = READ_BY_MODEL + found
    if context.nearby_under_other_factors:
        found += f" and, as nothing is recorded under it yet, {FOUND_BY_TEXT['nearby']}"
    if context.unassessed_answers:
        found += f"; and {FOUND_BY_TEXT['answers']}"
    if routed.failure is not None:
        found += ROUTER_FAILED
    lines.append(_line("sentence", f"Found by: {found}."))
    return lines


def answer_question(
    store: FactorJournalStore,
    user_id: str,
    question: str,
    composer: AnswerComposer | None = None,
    budget_tokens: int = DEFAULT_BUDGET_TOKENS,
    now: datetime | None = None,
    embedder: EmbedderChoice = "default",
    router: IntentRouter | None = None,
) -> Answer:
    """Answer a question about the user's assessment with the dated journal evidence behind it, and say how
    the evidence was found (``found_by``): by the names in the question, else by meaning (the person's journal
    searched by similarity, or the catalog ranked against the question), else, for a question about how things stand,
    the whole assessment (``standing``).  ``embedder`` embeds the question (default: the process's, ``FJ_EMBEDDER``;
    None: no journal search).  Confidences, the blockers and the tier are the summary's as they count at ``now``
    (``freshness.assess``), as the pages show them.  With a ``router`` (Gemini, ``FJ_EXTRACTOR=gemini``) a model reads
    what the question is about, against the catalog and the person's journal index (``routing``): the factors it
    names are found by ``model``; when it names none, the search by meaning runs as without it; when its call fails,
    the embedded rules read the question and the answer says so.  ValueError for an unknown person."""
    question = (question or "").strip()[:500]
    now = now or datetime.now(UTC)
    summary = assessment_now(store, user_id, now)
    routed = route(router, store, user_id, question, summary, now)
    intent = routed.intent or analyse_intent(question, store.catalog, store.graph, now)
    if intent.since_visit:  # "since my last visit": when the person's previous visit ended, by their answers
        intent.since = previous_visit_end(store.activity(user_id), now)
    if routed.intent is not None:
        found = route_found(store, user_id, question, intent, summary, embedder)
    else:
        found = find_factors(store, user_id, question, intent, summary, embedder)
    context = gather_context(store, user_id, found, summary, budget_tokens, embedder)
    composer = composer or OfflineComposer()
    evidence = citations(context)
    lines = [*_from_when(found.intent), *_composed(composer, question, context), *_closing(context, evidence, routed)]
    return Answer(
        text=plain_text(lines),
        lines=lines,
        citations=evidence,
        has_evidence=bool(evidence),
        intent=found.intent,
        composer=composer.name,
        found_by=found.found_by,
        unassessed_answers=context.unassessed_answers,
        routed_by=routed.by if routed.intent is not None else "embedded",
        routing_failed=routed.failure is not None,
    )
