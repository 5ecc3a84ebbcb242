"""Continue the conversation: the resumed session, the next best question, the user's answer.

Answers are written as turns to the same Firestore path the trigger listens
on; the page waits briefly for the trigger so the other pages reflect them.
"""

from __future__ import annotations

import contextlib

import streamlit as st
from factor_journal.conversation import MAX_TURN_TEXT_CHARS, turn_text_problem
from factor_journal.extraction.base import ExtractionError
from factor_journal.guidance import next_best_questions

from dashboard import context
from dashboard.safe_text import quote

WAIT_FOR_ANALYSIS_SECONDS = 8.0
SHOWN_TURNS = 12


def _session_id(store, subject, viewer) -> str:
    chosen = st.session_state.get("conversation_session")
    if chosen:
        return chosen
    sessions = store.session_ids(subject.user_id)
    if viewer.session_id and viewer.session_id in sessions:
        chosen = viewer.session_id
    elif sessions:
        chosen = max(sessions, key=lambda sid: (store.session_data(subject.user_id, sid) or {}).get("last_active") or 0)
    else:
        chosen = store.start_session(subject.user_id)
    st.session_state["conversation_session"] = chosen
    return chosen


def _show(turns: list[tuple[str, dict]]) -> None:
    for _, data in turns[-SHOWN_TURNS:]:
        with st.chat_message("assistant" if data.get("role") == "assistant" else "user"):
            quote(data["text"])


def render() -> None:
    subject = context.require_subject()
    viewer = st.session_state["viewer"]
    store = context.store()
    st.title("Continue the conversation")
    if subject.read_only:
        st.info("Conversations are only continued by the person themselves.")
        return
    session_id = _session_id(store, subject, viewer)
    turns = [(tid, data) for tid, data in store.session_turns(subject.user_id, session_id) if isinstance(data.get("text"), str)]
    if not turns or turns[-1][1].get("role") != "assistant":
        summary = store.summary(subject.user_id)
        asked = {data["text"] for _, data in turns if data.get("role") == "assistant"}
        suggestions = next_best_questions(store.catalog, store.graph, summary, limit=1, asked=asked) if summary else []
        if not suggestions:
            _show(turns)
            st.success("We have covered everything we need for now. Thank you!")
            return
        question = suggestions[0].question
        writer = context.writer()
        if writer is not None and turns:
            last = "\n".join(f"{d.get('role')}: {d.get('text')}" for _, d in turns[-2:])
            with contextlib.suppress(ExtractionError):  # the catalog's wording is a fine question too
                question = writer.phrase_question(question, last)
        store.add_turn(subject.user_id, session_id, "assistant", question)
        st.rerun()  # the notice of the last answer, if any, is shown on that run

    notice = st.session_state.pop("conversation_notice", None)
    if notice:
        st.caption(notice)
    _show(turns)

    answer = st.chat_input("Your answer", max_chars=MAX_TURN_TEXT_CHARS)
    if answer is not None:
        problem = turn_text_problem(answer)  # the rules and the pipeline refuse exactly these too
        if problem:
            st.warning(f"Your answer was not sent: {problem}.")
            return
        turn_id = store.add_turn(subject.user_id, session_id, "user", answer)
        status = store.wait_for_analysis(subject.user_id, session_id, turn_id, WAIT_FOR_ANALYSIS_SECONDS)
        st.session_state["conversation_notice"] = {
            "processed": "Noted: your assessment has been updated.",
            "no_update": "Noted.",
            "failed": "Your answer was saved, but could not be analysed; it will be retried.",
            None: "Your answer was saved; the assessment will update in a moment.",
        }[status]
        st.rerun()
