"""What a person's pages show, decided here: pure view models over the summary, its freshness and the journal.

The pages in ``dashboard/views`` only render what these functions decide: which answers to re-check and in
what order, what "What we know" lists and how each answer stands, which factors have a history and which one
the history opens on, what became of a journal entry, which days a factor's chart has, whether an answer is
still being analysed, what a correction saved on Review stores, what the conversation asks next.  A session's
turns come typed, each read once by the page (``conversation.StoredTurn``).  Words, colours and charts stay in
the dashboard.  Pure: imports only the pure core (no Streamlit, no Firestore).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from enum import StrEnum

from pydantic import BaseModel

from factor_journal.catalog import Catalog
from factor_journal.conversation import StoredTurn
from factor_journal.documents import DONE, ScreenKind, TurnStatus, awaiting_analysis
from factor_journal.freshness import FactorFreshness, FreshAssessment, last_said
from factor_journal.graph import FactorGraph
from factor_journal.guidance import SuggestedQuestion, clarifying_question, next_best_questions
from factor_journal.models import AssessmentSummary, CategoryProgress, EntryKind, FactorState, JournalEntry
from factor_journal.sayback import TornQuestion, heard_factors, torn_questions
from factor_journal.transitions import READING_CONFIRMED

RECHECK_SHOWN = 8
COMPUTED = "computed"  # the status of a composite: computed from its parts, never said, confirmed or given


def shown_apart(stored: float, now: float) -> bool:
    """True when two confidences read differently as whole percentages (an aged one is then worth mentioning)."""
    return round(stored, 2) != round(now, 2)


def answer_status(catalog: Catalog, factor_id: str, state: FactorState) -> str:
    """Who stands behind an answer: its inference status, or ``COMPUTED`` for a composite (whatever its stored
    status says, nobody said, confirmed or gave it)."""
    return COMPUTED if catalog.factor(factor_id).is_composite else str(state.inference_status)


def changed_since_drawn(drawn_for: float | None, now: float) -> bool:
    """True when the page drew a factor's value before (``drawn_for``; None: never) and its value ``now`` is no
    longer that one: it changed elsewhere (a new answer analysed, a correction in the conversation) since."""
    return drawn_for is not None and drawn_for != now


def shown_value(value: float) -> float:
    """A value as every page shows it: at most one decimal, cut rather than rounded, so the number shown never
    sits across a band edge from its band (39.9, never 40 for a low 39.96); Review's slider starts there too."""
    return math.floor(value * 10 + 1e-9) / 10  # 1e-9: 55.3 * 10 is 552.999…


def correction_to_save(drawn_for: float | None, now: float, slider: float) -> float | None:
    """What a correction saved on Review stores: nothing (None) when the value changed since the page drew its
    slider (``changed_since_drawn``: the person decided about a value they no longer see); otherwise ``now`` itself,
    unrounded (what the store's ``seen`` check compares), when the slider was left where it started
    (``shown_value(now)``), or the slider's value to its one decimal."""
    if changed_since_drawn(drawn_for, now):
        return None
    return now if round(slider, 1) == shown_value(now) else round(float(slider), 1)


class RecheckList(BaseModel):
    """The answers the overview asks to re-check: ``shown`` in order, and how many ``more`` are left unlisted."""

    shown: list[FactorFreshness]
    more: int


def recheck_list(assessment: FreshAssessment, at_least: int = RECHECK_SHOWN) -> RecheckList:
    """The answers the tier note asks to confirm first (due or not, every one of them listed), then the others
    due for a re-check in their order (``FreshAssessment.to_recheck``), at least ``at_least`` listed."""
    note = assessment.tier_note
    first = [assessment.factors[fid] for fid in (note.confirm if note else []) if fid in assessment.factors]
    named = {item.factor_id for item in first}
    items = first + [item for item in assessment.to_recheck if item.factor_id not in named]
    limit = max(at_least, len(first))
    return RecheckList(shown=items[:limit], more=max(0, len(items) - limit))


class KnownFactor(BaseModel):
    """One assessed answer as the overview lists it: confidence as it counts today (``stored_confidence`` only
    when ageing shows), ``status`` its inference status or ``COMPUTED``, when it was last said, whether it is due."""

    factor_id: str
    name: str
    value: float
    confidence: float
    stored_confidence: float | None
    status: str
    said_at: datetime | None
    due: bool


class KnownCategory(BaseModel):
    category_id: str
    name: str
    factors: list[KnownFactor]  # by name, the computed scores too
    total: int  # factors the catalog has in the category to assess (computed scores are not counted)

    @property
    def assessed(self) -> int:
        """Its factors assessed, as the summary counts them: computed scores are listed but not counted."""
        return sum(1 for factor in self.factors if factor.status != COMPUTED)


class WhatWeKnow(BaseModel):
    """Every assessed answer by category (catalog order; categories with none left out), and how many answers
    have each status."""

    categories: list[KnownCategory]
    by_status: dict[str, int]

    @property
    def assessed(self) -> int:
        """Answers assessed, as the summary counts them: computed scores are listed but not counted."""
        return sum(count for status, count in self.by_status.items() if status != COMPUTED)


def what_we_know(catalog: Catalog, assessment: FreshAssessment) -> WhatWeKnow:
    """The overview's "What we know", from the summary alone (no read): the aged summary's assessed answers."""
    summary = assessment.summary
    assessed = {fid: state for fid, state in summary.factors.items() if state.is_assessed}
    by_status: Counter[str] = Counter()
    categories = []
    for category in catalog.categories:
        known = []
        for fid, state in assessed.items():
            if state.category != category.id:
                continue
            factor = catalog.factor(fid)
            fresh = assessment.factors.get(fid)
            status = answer_status(catalog, fid, state)
            by_status[status] += 1
            known.append(
                KnownFactor(
                    factor_id=fid,
                    name=factor.name,
                    value=state.current_value or 0.0,
                    confidence=state.current_confidence,
                    stored_confidence=(
                        fresh.stored_confidence
                        if fresh is not None and shown_apart(fresh.stored_confidence, fresh.confidence)
                        else None
                    ),
                    status=status,
                    said_at=fresh.said_at if fresh is not None else last_said(catalog, summary.factors, fid),
                    due=fresh is not None and fresh.due,
                )
            )
        if known:
            total = sum(1 for f in catalog.assessable_factors if f.category == category.id)  # as the summary counts
            known.sort(key=lambda item: (item.name, item.factor_id))
            categories.append(KnownCategory(category_id=category.id, name=category.name, factors=known, total=total))
    return WhatWeKnow(categories=categories, by_status=dict(by_status))


def categories_by_progress(summary: AssessmentSummary) -> list[CategoryProgress]:
    """The categories best mapped first, then the surest, then by name."""
    return sorted(summary.categories.values(), key=lambda c: (-c.completeness, -c.avg_confidence, c.name))


def history_factors(factors: Mapping[str, FactorState]) -> list[str]:
    """The factors that have a history to show: some evidence or at least one journal entry."""
    return [fid for fid, state in factors.items() if state.evidence_count or state.last_entry_id]


def most_recently_changed(catalog: Catalog, factors: Mapping[str, FactorState]) -> str | None:
    """The factor the person changed last: the latest said (``observed_at``; a confirmation or correction
    counts), then the latest updated; derived composites and system-only changes such as re-check flags do
    not count.  None when no factor has a history."""
    never = datetime.min.replace(tzinfo=UTC)
    touched = [
        (state.observed_at or never, state.last_updated or never, fid)
        for fid, state in factors.items()
        if (state.evidence_count or state.last_entry_id) and not catalog.factor(fid).is_composite
    ]
    return max(touched)[2] if touched else None


def history_opens_on(catalog: Catalog, factors: Mapping[str, FactorState], asked: str | None) -> str | None:
    """The factor the history page opens on: the one asked for (a link) when it has a history, else the one
    the person changed last."""
    if asked is not None and asked in history_factors(factors):
        return asked
    return most_recently_changed(catalog, factors)


class EntryEffect(StrEnum):
    applied = "applied"  # it changed the factor when recorded
    held = "held"  # a disagreeing reading, held as a conflict for the person
    not_applied = "not_applied"  # recorded only (e.g. an older observation that arrived late)


def entry_effect(entry: JournalEntry) -> EntryEffect:
    """What became of a journal entry when it was recorded."""
    if entry.applied:
        return EntryEffect.applied
    return EntryEffect.held if str(entry.kind) == "conflict" else EntryEffect.not_applied


def entry_kind(entry: JournalEntry) -> EntryKind:
    """What a journal entry is, as its history tells it: its stored kind, except that a withdrawn reading brought
    back by "That's right" before such entries were journaled as ``restored`` (a ``corrected`` entry from no value,
    with the rationale ``transitions.READING_CONFIRMED``) is ``restored`` too: nothing was corrected."""
    kind = EntryKind(entry.kind)
    if kind == EntryKind.corrected and entry.previous_value is None and entry.change_rationale == READING_CONFIRMED:
        return EntryKind.restored
    return kind


def day_ends(entries: Iterable[JournalEntry]) -> list[JournalEntry]:
    """The factor's state at the end of each day something was said (observed time; effective entries only, a
    later recording of the same moment last), oldest day first."""
    last: dict[date, JournalEntry] = {}
    for entry in sorted((e for e in entries if e.effective), key=lambda e: (e.observed_at, e.recorded_at)):
        last[entry.observed_at.date()] = entry
    return [last[d] for d in sorted(last)]


def said_days(entries: Iterable[JournalEntry]) -> set[date]:
    """The days on which something that belongs to the factor's timeline was said."""
    return {entry.observed_at.date() for entry in entries if entry.effective}


class Timeline(BaseModel):
    """How the history shows a factor over time: a ``chart`` when what it would draw spans more than one day,
    with the ``ageing`` line (the current answer's confidence as it ages) only when that line runs past the day it
    starts (a line within one day is not drawn, nor mentioned); otherwise a sentence that everything was said on
    ``one_day`` (None when nothing was)."""

    chart: bool
    ageing: list[tuple[datetime, float]] = []
    one_day: date | None = None


def timeline(said_on: Iterable[date], curve: Sequence[tuple[datetime, float]]) -> Timeline:
    """The one rule for chart or sentence (``Timeline``), from the days something was said (``said_days``) and
    the ageing curve (``freshness.decay_curve``): the days drawn are those said and the day the ageing line runs
    to; more than one is a chart."""
    said = set(said_on)
    ageing = list(curve) if curve and curve[-1][0].date() > curve[0][0].date() else []
    if len(said | {at.date() for at, _ in ageing[-1:]}) > 1:
        return Timeline(chart=True, ageing=ageing)
    return Timeline(chart=False, one_day=min(said) if said else None)


def assessed_states(summary: AssessmentSummary) -> list[tuple[str, FactorState]]:
    """The summary's assessed answers (factor id, state), by factor id."""
    return [(fid, state) for fid, state in sorted(summary.factors.items()) if state.is_assessed]


WATCH_FOR_SECONDS = 180.0  # longer than a cold start and a retry or two; after it the person checks again by hand


def keep_watching(waited_seconds: float) -> bool:
    """Whether a page still looks, by itself, for the analysis of an answer it has waited this long for."""
    return waited_seconds < WATCH_FOR_SECONDS


def may_change_yet(status: str | None) -> bool:
    """True while an answer may still change the assessment without the person doing anything: not analysed
    yet, being analysed, or failed and waiting for an automatic retry."""
    return awaiting_analysis(status) or status == TurnStatus.failed


def status_worth_saying(status: str | None, latest: bool) -> bool:
    """Whether the conversation says what became of an answer: always for the latest, otherwise only when its
    analysis did not simply finish."""
    return latest or status not in DONE


class NextQuestionBounds(BaseModel):
    """What the assistant's next question must not be: a question already asked in the session (``asked``), about
    a factor the last answer was just understood to settle (``just_heard``, whose neighbours it opened up come
    next), or about any factor the session already asked about or heard an answer speak to (``covered``)."""

    asked: set[str]
    just_heard: set[str]
    covered: set[str] = set()


def time_for_next_question(turns: Sequence[StoredTurn]) -> bool:
    """Whether the assistant asks its next question now: at the start, or after the person's answer once its
    analysis has finished (whatever the outcome), so the question follows from what was understood and never
    re-asks what the answer settled; never after its own question, unless the person answered it under their
    answer (``answered_in_place``)."""
    if not turns:
        return True
    last = turns[-1]
    if last.by_assistant:
        return answered_in_place(turns)
    return not awaiting_analysis(last.status)


def torn_unanswered(catalog: Catalog, turn: StoredTurn | None) -> TornQuestion | None:
    """The question to ask about an answer the reader could not choose about (``sayback.torn_questions``: the first
    one), None when there is none or the person told us already what it was about."""
    if turn is None or turn.outcome is None or turn.by_assistant:
        return None
    questions = torn_questions(catalog, turn.outcome.torn, turn.told)
    return questions[0] if questions else None


def answered_in_place(turns: Sequence[StoredTurn]) -> bool:
    """Whether the assistant's last question was the torn question about the answer before it (the question asked
    right after such an answer, ``questions_ahead``) and the person answered it with a click under that answer
    (``StoredTurn.told``): nothing is left waiting for a typed answer."""
    if len(turns) < 2 or not turns[-1].by_assistant or turns[-2].by_assistant:
        return False
    outcome = turns[-2].outcome
    return outcome is not None and bool(outcome.torn) and bool(turns[-2].told)


def asked_to_pause(turns: Sequence[StoredTurn]) -> bool:
    """Whether the person's last word was a request to pause (or to stop, or change the subject), set aside as such:
    the assistant then waits until they ask for the next question instead of asking it at once."""
    last = turns[-1] if turns else None
    if last is None or last.by_assistant:
        return False
    outcome = last.outcome
    return outcome is not None and outcome.screened is not None and outcome.screened.kind == ScreenKind.pause


class LeftOff(BaseModel):
    """Where a person who came back left the conversation: when they last answered, and whether that answer was a
    request to pause (``asked_to_pause``)."""

    answered_at: datetime
    paused: bool


RETURN_AFTER = timedelta(minutes=30)
"""A visit is a return when the person's last answer is at least this old: a reload in the middle of a conversation
(which also starts a new visit) is not welcomed back."""


def where_we_left_off(turns: Sequence[StoredTurn], visit_started: datetime) -> LeftOff | None:
    """For a visit that started at ``visit_started``: the person's last answer in the session (oldest first, as
    stored) when they gave it at least ``RETURN_AFTER`` before this visit, so the page can welcome them back and say
    where they left off; None when they have not answered yet, or answered during this visit or just before it."""
    answered = [turn.created_at for turn in turns if not turn.by_assistant and turn.created_at is not None]
    if not answered or answered[-1] > visit_started - RETURN_AFTER:
        return None
    return LeftOff(answered_at=answered[-1], paused=asked_to_pause(turns))


class PausedQuestion(BaseModel):
    """A question the person asked to pause on (or to move on from): the assistant's words as asked, the factor it
    asked ``about``, when they paused (``paused_at``, None for a turn without a time) and the place of their request
    in the session's turns (``pause_turn``)."""

    text: str
    about: str
    paused_at: datetime | None
    pause_turn: int


def times_asked(turns: Sequence[StoredTurn], about: str) -> int:
    """How many of the assistant's questions in the session asked about the factor ``about``."""
    return sum(1 for turn in turns if turn.by_assistant and turn.about == about)


def paused_questions(turns: Sequence[StoredTurn]) -> list[PausedQuestion]:
    """The questions the person paused on that are still open in the session (turns oldest first, as stored), oldest
    pause first.  A paused question is an assistant question with its factor (``about``) to which the person's very
    next turn was a request to pause (``asked_to_pause``); it stays open while its factor was asked about that once
    only (never asked again, nor explained: a question comes back once) and no analysed answer since spoke to it.
    A question written without its factor cannot be told apart from another, so it is not brought back."""
    open_questions = []
    for index in range(1, len(turns)):
        question = turns[index - 1]
        about = question.about
        if not question.by_assistant or not about or not asked_to_pause((turns[index],)):
            continue
        heard_since: set[str] = set()
        for later in turns[index + 1 :]:
            outcome = later.outcome if not later.by_assistant else None
            heard_since |= heard_factors(outcome.readings) if outcome else set()
        if times_asked(turns, about) == 1 and about not in heard_since:
            open_questions.append(
                PausedQuestion(
                    text=question.text or "", about=about, paused_at=turns[index].created_at, pause_turn=index
                )
            )
    return open_questions


def to_ask_again(turns: Sequence[StoredTurn], visit_started: datetime) -> PausedQuestion | None:
    """The question the person paused on to ask again now, when the assistant asks its next question: the oldest
    open one (``paused_questions``) that another question has followed since the pause, or that was paused at least
    ``RETURN_AFTER`` before this visit (the person came back).  Never the one they paused on just now: it waits for
    another question first, or for their next visit.  None when no paused question is due."""
    for paused in paused_questions(turns):
        asked_since = any(turn.by_assistant for turn in turns[paused.pause_turn + 1 :])
        came_back = paused.paused_at is not None and paused.paused_at <= visit_started - RETURN_AFTER
        if asked_since or came_back:
            return paused
    return None


def just_paused_on(turns: Sequence[StoredTurn]) -> PausedQuestion | None:
    """The open paused question (``paused_questions``) that the person's last word paused on, so the page can say
    it will come back; None when their last word was no pause, or paused on a question without its factor."""
    paused = paused_questions(turns)
    return paused[-1] if paused and paused[-1].pause_turn == len(turns) - 1 else None


def to_clarify(turns: Sequence[StoredTurn], catalog: Catalog) -> str | None:
    """The factor to explain before anything else is asked, when the person's last word was a question back to the
    assistant's last question: the one factor it names ("What do you mean by data governance?"), else the one the
    question was about ("What do you mean?"); once per factor (a factor the session asked about twice was explained
    already, and a question back to it moves the interview on).  None otherwise."""
    if len(turns) < 2 or turns[-1].by_assistant or not turns[-2].by_assistant:
        return None
    outcome = turns[-1].outcome
    if outcome is None or outcome.screened is None or outcome.screened.kind != ScreenKind.question_back:
        return None
    named = [fid for fid in catalog.factors_named_in(turns[-1].text or "") if not catalog.factor(fid).is_composite]
    about = named[0] if len(named) == 1 else turns[-2].about
    if not about or not catalog.has_factor(about):
        return None
    return about if times_asked(turns, about) <= 1 else None


def next_question_bounds(turns: Sequence[StoredTurn]) -> NextQuestionBounds:
    """From a session's turns (oldest first, as stored): every assistant question, the factors the person's last
    answer spoke to (none while it is not analysed, or when its outcome no longer reads), and every factor the
    session covered: asked about (an assistant turn's ``about``) or spoken to by any analysed answer."""
    asked = {turn.text for turn in turns if turn.by_assistant and turn.text is not None}
    covered = {turn.about for turn in turns if turn.by_assistant and turn.about}
    just_heard: set[str] = set()
    for turn in turns:
        if not turn.by_assistant:  # ends on the last answer: what it spoke to is just_heard
            just_heard = heard_factors([*(turn.outcome.readings if turn.outcome else []), *turn.told])
            covered |= just_heard
    return NextQuestionBounds(asked=asked, just_heard=just_heard, covered=covered)


COMING_BACK = "Coming back to the question you paused on:"


def questions_ahead(
    catalog: Catalog,
    graph: FactorGraph,
    assessment: FreshAssessment | None,
    turns: Sequence[StoredTurn],
    visit_started: datetime,
    limit: int = 3,
) -> list[SuggestedQuestion]:
    """What the conversation asks next, then what it would ask after it: one rule for every page that asks or
    suggests a question (the conversation asks the first, the overview lists them), from the person's summary as
    it counts now (``assessment``; None before they have one) and the turns of the session the conversation
    continues (oldest first, as stored).

    First, what the conversation asks before anything else, in its own words (``verbatim``): a question of
    the assistant still waiting for its answer (not one the person answered under their answer,
    ``answered_in_place``); else, when the reader could not choose what the last answer was about, which it was
    (``torn_unanswered``); else, when the person asked what the last question means, that question explained
    (``to_clarify``); else a question they paused on, once due again (``to_ask_again``).
    Then ``next_best_questions`` within the session's bounds (``next_question_bounds``): never a question the
    session asked, nor a factor it asked about or heard an answer speak to, nor one said surely enough already
    (``guidance.said_surely``) unless it is due for a re-check or flagged for one."""
    bounds = next_question_bounds(turns)
    first = _asked_first(catalog, turns, visit_started, bounds)
    ahead = [first] if first is not None else []
    if assessment is not None:
        ahead += [
            suggestion
            for suggestion in next_best_questions(
                catalog,
                graph,
                assessment.summary,
                limit,
                bounds.asked,
                just_heard=bounds.just_heard,
                covered=bounds.covered,
                stale=assessment.stale,
                as_said=assessment.stored,
            )
            if first is None or suggestion.factor_id != first.factor_id
        ]
    return ahead[:limit]


def _asked_first(
    catalog: Catalog, turns: Sequence[StoredTurn], visit_started: datetime, bounds: NextQuestionBounds
) -> SuggestedQuestion | None:
    """What the conversation asks before any suggestion (see ``questions_ahead``), None when nothing is."""
    waiting = turns[-1] if turns and turns[-1].by_assistant and not answered_in_place(turns) else None
    torn = torn_unanswered(catalog, turns[-1]) if turns else None
    about: str | None
    if waiting is not None:
        about = waiting.about or ""
        question, reason = waiting.text or "", "asked in the conversation, waiting for your answer"
    elif torn is not None:
        about, question, reason = torn.options[0].factor_id, torn.question, "to tell what your last answer was about"
    elif (about := to_clarify(turns, catalog)) is not None:
        question, reason = clarifying_question(catalog, about, bounds.asked), "you asked what this question means"
    elif (again := to_ask_again(turns, visit_started)) is not None:
        about, question, reason = again.about, f"{COMING_BACK} {again.text}", "you paused on it"
    else:
        return None
    if not about or not catalog.has_factor(about):
        return None  # a question written without its factor cannot be told apart from another
    return SuggestedQuestion(
        factor_id=about,
        factor_name=catalog.factor(about).name,
        question=question,
        reason=reason,
        score=0.0,
        verbatim=True,
    )
