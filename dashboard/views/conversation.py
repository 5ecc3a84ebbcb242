"""Continue the conversation: the resumed session, the next best question, the user's answer, and what was
understood from it.

Answers are written as turns to the same Firestore path the trigger listens on; the page waits briefly for
the trigger, then says back under each analysed answer what it told us (``factor_journal.sayback``), one line
per reading, each with "That's right" and "Not quite": the person's decisions go through the store's confirm /
correct / retract, as their own entries, in one transaction with the summary; in small text under the lines, which
reader read the answer (``sayback.read_by``).  The next question follows from what the last answer was understood
to say.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial

import streamlit as st

from dashboard import brand, context, labels
from dashboard.safe_text import announce, md, quote
from dashboard.views import unsure
from factor_journal.conversation import MAX_TURN_TEXT_CHARS, StoredTurn, stored_turns, turn_text_problem
from factor_journal.documents import ExtractionOutcome, TurnStatus
from factor_journal.extraction.base import ExtractionError
from factor_journal.extraction.quotes import shorten
from factor_journal.models import AssessmentSummary, SaidIn
from factor_journal.page_models import (
    asked_to_pause,
    awaiting_analysis,
    just_paused_on,
    keep_watching,
    may_change_yet,
    paused_questions,
    questions_ahead,
    status_worth_saying,
    time_for_next_question,
    to_ask_again,
    where_we_left_off,
)
from factor_journal.sayback import LineState, SayBackLine, in_one_sentence, nothing_understood, read_by, say_back

WAIT_FOR_ANALYSIS_SECONDS = 8.0
WATCH_EVERY_SECONDS = 2.0
SHOWN_TURNS = 12


@st.fragment(run_every=WATCH_EVERY_SECONDS)
def _watch_until_analysed(user_id: str, session_id: str, turn_ids: tuple[str, ...]) -> None:
    """While answers are still being analysed after the page's first wait (a cold start, a busy trigger), look at
    their turns every WATCH_EVERY_SECONDS (one read per answer) and show the whole page again as soon as one is
    done, so what was understood appears under it without the person asking; after WATCH_FOR_SECONDS it stops
    reading and "Check again" is the way to look."""
    store = context.store()
    started = st.session_state.get("conversation_watch")
    if started is None or started[0] != turn_ids:
        st.session_state["conversation_watch"] = (turn_ids, time.monotonic())  # the page itself just read them
        return
    if not keep_watching(time.monotonic() - started[1]):
        return
    if any(not awaiting_analysis(store.analysis_status(user_id, session_id, turn_id)) for turn_id in turn_ids):
        st.rerun(scope="app")


def _shown(turns: list[StoredTurn]) -> list[StoredTurn]:
    """The turns on the page: the last SHOWN_TURNS, or all once the person asked for the earlier ones (a button above
    them says how many there are)."""
    hidden = {turn.turn_id for turn in turns[:-SHOWN_TURNS]}
    linked = st.session_state.get("conversation_focus") in hidden  # an answer another page linked to is shown
    if len(turns) <= SHOWN_TURNS or st.session_state.get("conversation_show_all") or linked:
        return turns
    earlier = len(turns) - SHOWN_TURNS
    st.button(
        f"Show the {earlier} earlier turn{'s' if earlier != 1 else ''} of this conversation",
        key="conversation_earlier",
        icon=":material/expand_less:",
        on_click=lambda: st.session_state.update(conversation_show_all=True),
    )
    return turns[-SHOWN_TURNS:]


def _show(turns: list[StoredTurn], summary: AssessmentSummary | None, *, can_act: bool) -> list[StoredTurn]:
    """The turns on the page (``_shown``), which it returns; under each analysed answer what it was understood to
    say, under any other what became of it (always for the latest answer, otherwise only when it is not simply
    done)."""
    store = context.store()
    users = [turn.turn_id for turn in turns if not turn.by_assistant]
    latest = users[-1] if users else None
    factors = summary.factors if summary is not None else {}
    shown = _shown(turns)
    for turn in shown:
        with st.chat_message("assistant" if turn.by_assistant else "user"):
            quote(turn.text or "")
            if turn.by_assistant:
                continue
            turn_id, outcome = turn.turn_id, turn.outcome
            if turn_id == st.session_state.get("conversation_focus"):
                _linked_here(turn_id)
            status = outcome.status if outcome else None
            if outcome is not None and (outcome.readings or turn.told):
                lines = say_back(store.catalog, outcome.readings, factors, turn.told)
                for line in lines:
                    _say_back_line(turn_id, line, can_act=can_act)
                _who_read(outcome)
            elif outcome is not None and status == TurnStatus.no_update:
                st.caption(nothing_understood(outcome.screened) if not outcome.torn else NOT_SURE)
                _who_read(outcome)
            elif status_worth_saying(status, latest=turn_id == latest):
                next_attempt = outcome.next_attempt_at if outcome else None
                st.caption(labels.turn_status_message(status, next_attempt))
            unsure.offer(turn, can_act=can_act)  # when the reader was unsure: the person tells
    return shown


def _who_read(outcome: ExtractionOutcome) -> None:
    """In small text under what an answer was understood to say, which reader read it (``sayback.read_by``, from
    the turn's outcome as the pipeline wrote it): "Read offline", "Read by Gemini", or a language model in Gemini's
    seat named as such; nothing when no reader read it."""
    said = read_by(outcome.extractor, outcome.model)
    if said:
        st.caption(f"{md(said)}.")


def _linked_here(turn_id: str) -> None:
    """The answer another page linked to (Ask why, citing words not part of the assessment yet): its anchor, which
    the page scrolls to, and a word that this is the one."""
    st.html(f'<span id="{context.answer_anchor(turn_id)}"></span>')
    st.caption("↑ The answer you opened from Ask why.")


def _announce_what_was_understood(turns: list[StoredTurn], summary: AssessmentSummary | None) -> None:
    """Once per answer, as soon as it is analysed: have a screen reader read out what it was understood to say and
    the question asked after it, which appear above the answer box, away from the person's focus.  What was already
    on the page when the visit began is not read out."""
    latest = _understood_latest(turns, summary)
    first_seen = latest[0] if latest is not None else None
    announced = st.session_state.setdefault("conversation_announced", first_seen)
    if latest is not None and latest[0] != announced:
        st.session_state["conversation_announced"] = latest[0]
        announce(latest[1])


def _understood_latest(turns: list[StoredTurn], summary: AssessmentSummary | None) -> tuple[str, str] | None:
    """The latest answer's turn id and, once it is analysed, what it was understood to say in one sentence (the
    say-back lines, or that nothing changed), with the question the assistant asked after it; None before."""
    answers = [index for index, turn in enumerate(turns) if not turn.by_assistant]
    if not answers:
        return None
    latest = turns[answers[-1]]
    outcome = latest.outcome
    if outcome is not None and (outcome.readings or latest.told):
        factors = summary.factors if summary is not None else {}
        said = in_one_sentence(say_back(context.store().catalog, outcome.readings, factors, latest.told))
    elif outcome is not None and outcome.status == TurnStatus.no_update and outcome.torn:
        said = NOT_SURE  # the next question asks which
    elif outcome is not None and outcome.status == TurnStatus.no_update:
        said = nothing_understood(outcome.screened) + (f" {TELL_US}" if outcome.screened is None else "")
    else:
        return None
    asked = [turn.text for turn in turns[answers[-1] + 1 :] if turn.by_assistant]
    return latest.turn_id, said + (f" Next question: {asked[-1]}" if asked else "")


def _say_back_line(turn_id: str, line: SayBackLine, *, can_act: bool) -> None:
    """One reading: the factor, its band and the words it rests on, where the person stands on it, and their
    two answers to it."""
    key = f"{turn_id}-{line.factor_id}"
    with st.container(border=True, key=f"sayback-{key}"):
        st.markdown(f"**{line.factor_name}**: {line.band.value} — ‘{md(shorten(line.quote))}’")
        st.caption(f"{line.band.value.capitalize()} means: {line.meaning}")
        state = TOLD_NOTE if line.told and line.state == LineState.confirmed else STATE_NOTES.get(line.state)
        if state:
            decided = line.decided.value if line.decided else ""
            st.caption(state.format(factor=line.factor_name, band=line.band.value, decided=decided))
        if not can_act:
            return
        fixing = st.session_state.get("sayback_fixing") == key
        right, not_quite = st.columns(2)
        # each button names its factor: two lines under one answer never read as two identical buttons
        agree = labels.confirm_label(line.factor_name, line.band.value)
        disagree = labels.correct_label(line.factor_name)
        if line.can_confirm and right.button(agree, key=f"ok-{key}", icon=":material/check:"):
            done = "brought back" if line.state == LineState.withdrawn else "confirmed"  # undoing "doesn't apply"
            _act(partial(_confirm, turn_id, line), f"Thanks: {line.factor_name} {done} as {line.band.value}.")
        if line.can_correct and not fixing and not_quite.button(disagree, key=f"fix-{key}", icon=":material/edit:"):
            st.session_state["sayback_fixing"] = key
            st.rerun()
        if fixing:
            _correction_form(turn_id, line, key)


STATE_NOTES = {  # about the factor, whichever answer's line the person decided on
    LineState.confirmed: "✓ You confirmed it: {factor} is {band}.",
    LineState.corrected: "✓ You corrected it: {factor} is {decided}.",
    LineState.held: "You told us {decided} before: is this right now?",
    # "doesn't apply" takes the reading back (the factor is unassessed again): said as what happened, never as a
    # statement about the company
    LineState.withdrawn: "✓ You took this reading back: {factor} is not assessed yet. “That's right” brings it back.",
}
TOLD_NOTE = "✓ You told us: {factor} is {band}."  # what the person said the answer was about
NOT_SURE = "We could not tell what your answer was about."
TELL_US = "Under your answer, “This was about…” lets you say what it was about."
DOES_NOT_APPLY = "Doesn't apply to what I said"


def _correction_form(turn_id: str, line: SayBackLine, key: str) -> None:
    """The right level for the factor in its own words, or "doesn't apply to what I said" (the reading is taken
    back: the factor is not assessed until something else is said about it)."""
    options = [choice.level.value for choice in line.choices] + ([DOES_NOT_APPLY] if line.can_withdraw else [])
    meanings = [choice.meaning for choice in line.choices]
    meanings += [f"Take this reading back: {line.factor_name} shows as not assessed."] if line.can_withdraw else []
    with st.form(key=f"form-{key}", border=False):
        picked = st.radio(
            f"What is right for {line.factor_name}?",
            options,
            key=f"level-{key}",
            captions=meanings,
            index=None,
        )
        save, cancel = st.columns(2)
        saved = save.form_submit_button("Save", type="primary")
        cancelled = cancel.form_submit_button("Cancel")
    if cancelled:
        st.session_state.pop("sayback_fixing", None)
        st.rerun()
    if not saved:
        return
    if picked is None:
        st.warning(f"Choose a level, or “{DOES_NOT_APPLY}”.")
        return
    if picked == DOES_NOT_APPLY:
        _act(partial(_retract, turn_id, line), f"Reading taken back: {line.factor_name} is not assessed yet.")
        return
    choice = next(c for c in line.choices if c.level.value == picked)
    _act(partial(_correct, turn_id, line, choice.value), f"Saved: {line.factor_name} is {picked}.")


def _said(turn_id: str, line: SayBackLine) -> SaidIn:
    """Where the decision was given and the words it is about: the quote as the line shows it, bounded like every
    quote (``shorten``), so a reading stored with a longer quote by an older version can still be decided."""
    return SaidIn(session_id=st.session_state.get("conversation_session"), turn_id=turn_id, words=shorten(line.quote))


def _confirm(turn_id: str, line: SayBackLine) -> None:
    subject = context.require_subject()
    context.store().confirm_reading(subject.user_id, line.factor_id, line.value, _said(turn_id, line))


def _correct(turn_id: str, line: SayBackLine, value: float) -> None:
    subject = context.require_subject()
    rationale = f"User corrected what was understood from their answer ({line.band.value}) in the conversation"
    context.store().correct(subject.user_id, line.factor_id, value, rationale, said=_said(turn_id, line))


def _retract(turn_id: str, line: SayBackLine) -> None:
    subject = context.require_subject()
    rationale = "User said what was understood from their answer does not apply"
    context.store().retract(subject.user_id, line.factor_id, rationale, said=_said(turn_id, line))


def _act(action: Callable[[], object], notice: str) -> None:
    context.act(action, notice, notice_key="conversation_notice", forget=("sayback_fixing",))


def render() -> None:
    subject = context.require_subject()
    store = context.store()
    st.title("Continue the conversation", anchor=False)
    st.html(brand.SAYBACK_BUTTONS)  # the say-back buttons' labels wrap rather than lose their factor's name
    if subject.read_only:
        st.info("Conversations are only continued by the person themselves.")
        return
    linked = context.open_linked_answer(subject)  # before the session is chosen: a link names its session
    notice = st.session_state.pop("conversation_notice", None)
    if notice:
        st.toast(notice, icon=":material/check:")
        announce(notice)  # a toast is not read out: the decision is, once
    unsure.open_at(linked)  # opened at one answer (Ask's "say what it was about"): its choice open
    session_id = context.conversation_session(subject)
    turns = stored_turns(store.session_turns(subject.user_id, session_id))  # each turn read once, typed
    summary = store.summary(subject.user_id)
    visit = st.session_state.setdefault("conversation_visit", datetime.now(UTC))  # a page load is a visit
    left_off = where_we_left_off(turns, visit)
    if left_off is not None and not left_off.paused:
        st.info(f"Welcome back. You last answered on {left_off.answered_at:%d %b %Y}: we carry on where you left off.")
    pause_asked = asked_to_pause(turns) and not st.session_state.pop("resume_asked", False)
    if time_for_next_question(turns) and not pause_asked:
        asked = _next_question(turns, summary, visit)
        if asked is None:
            _show(turns, summary, can_act=True)
            _announce_what_was_understood(turns, summary)
            waiting = paused_questions(turns)  # paused on just now, with nothing else left to ask before it
            if waiting:
                st.info(
                    f"That is every other question for now. “{md(waiting[0].text)}”, the question you paused on, "
                    "is kept for your next visit."
                )
            else:
                st.success("We have covered everything we need for now. Thank you!")
            return
        question, about = asked
        turn_id = store.add_turn(subject.user_id, session_id, "assistant", question, about=about)
        turns.append(StoredTurn(turn_id=turn_id, role="assistant", text=question, about=about))  # as written

    shown = _show(turns, summary, can_act=True)
    _announce_what_was_understood(turns, summary)
    statuses = {turn.turn_id: turn.status for turn in shown if not turn.by_assistant}
    awaiting = tuple(tid for tid, status in statuses.items() if awaiting_analysis(status))
    if awaiting:
        _watch_until_analysed(subject.user_id, session_id, awaiting)
    if any(may_change_yet(status) for status in statuses.values()):
        st.button(
            "Check again",
            key="conversation_refresh",
            icon=":material/refresh:",
            help="Answers being analysed or waiting for a retry: see whether they are done",
        )

    if pause_asked:
        if left_off is not None:
            again = to_ask_again(turns, visit)
            carry_on = f"comes back to “{md(again.text)}”" if again is not None else "carries on"
            st.info(
                f"Welcome back. You asked to pause on {left_off.answered_at:%d %b %Y}; everything you said is saved. "
                f"“Next question” {carry_on} when you are ready."
            )
        else:
            paused = just_paused_on(turns)  # asked again later, never as the very next question
            later = f" “Next question” asks another one first; “{md(paused.text)}” comes back later." if paused else ""
            st.info(TAKE_YOUR_TIME + later)
        st.button("Next question", key="conversation_resume", icon=":material/play_arrow:", on_click=_resume)
    seen_before = st.session_state.get("conversation_last_seen")
    st.session_state["conversation_last_seen"] = last_seen = (session_id, turns[-1].turn_id if turns else None)
    answer = st.chat_input("Your answer", max_chars=MAX_TURN_TEXT_CHARS)
    if answer is not None:
        problem = turn_text_problem(answer)  # the rules and the pipeline refuse exactly these too
        if problem:
            st.warning(f"Your answer was not sent: {problem}.")
            return
        if seen_before is not None and seen_before != last_seen:  # another window moved the conversation on
            st.warning(MOVED_ON)
            quote(answer)
            return
        turn_id = store.add_turn(subject.user_id, session_id, "user", answer)
        with st.spinner("Reading your answer…"):  # briefly: the trigger usually finishes well inside the wait
            store.wait_for_analysis(subject.user_id, session_id, turn_id, WAIT_FOR_ANALYSIS_SECONDS)
        st.rerun()  # the answer and what became of it are shown from the turn itself


TAKE_YOUR_TIME = "Of course: take your time. Everything so far is saved, and your link brings you back here."
MOVED_ON = (
    "While you were typing, the conversation moved on in another window, so your answer was not saved (it would "
    "have been taken as the answer to a question you had not seen). Here it is, to send again if it answers the "
    "question now shown:"
)


def _resume() -> None:
    st.session_state["resume_asked"] = True


def _next_question(
    turns: list[StoredTurn], summary: AssessmentSummary | None, visit: datetime
) -> tuple[str, str] | None:
    """The assistant's next question and the factor it asks about: the first of ``page_models.questions_ahead``
    (the rule the overview's next best questions follow too), a suggestion phrased by the writer when there is
    one (a question explained or paused on keeps its words); None when there is nothing left to ask."""
    store = context.store()
    fresh = context.fresh(summary) if summary is not None else None  # aged: answers due for a re-check first
    ahead = questions_ahead(store.catalog, store.graph, fresh, turns, visit, limit=1)
    if not ahead:
        return None
    question = ahead[0].question
    writer = context.writer()
    if writer is not None and turns and not ahead[0].verbatim:
        last = "\n".join(f"{turn.role}: {turn.text}" for turn in turns[-2:])
        with contextlib.suppress(ExtractionError):  # the catalog's wording is a fine question too
            question = writer.phrase_question(question, last)
    return question, ahead[0].factor_id
