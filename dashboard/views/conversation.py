"""Continue the conversation: the resumed session, the next best question, the user's answer.

Answers are written as turns to the same Firestore path the trigger listens
on; the page waits briefly for the trigger so the other pages reflect them.
"""

from __future__ import annotations

import contextlib
import time

import streamlit as st

from dashboard import context, labels
from dashboard.safe_text import quote
from factor_journal.conversation import MAX_TURN_TEXT_CHARS, turn_text_problem
from factor_journal.extraction.base import ExtractionError
from factor_journal.guidance import next_best_questions

WAIT_FOR_ANALYSIS_SECONDS = 8.0
SHOWN_TURNS = 12


def _session_id(store, subject, viewer) -> str:
    chosen = st.session_state.get("conversation_session")
    if chosen:
        return chosen
    if viewer.session_id and store.session_data(subject.user_id, viewer.session_id) is not None:
        chosen = viewer.session_id
    else:
        chosen = store.latest_session(subject.user_id) or store.start_session(subject.user_id)
    st.session_state["conversation_session"] = chosen
    return chosen


DONE = frozenset({"processed", "no_update"})
PENDING = (None, "processing")


def _wait_until_settled(store, user_id: str, session_id: str, turn_id: str) -> None:
    """Wait (at most WAIT_FOR_ANALYSIS_SECONDS) until the trigger has finished with the turn, whatever the outcome."""
    deadline = time.monotonic() + WAIT_FOR_ANALYSIS_SECONDS
    with st.spinner("Reading your answer…"):
        while time.monotonic() < deadline:
            extraction = (store.turn_data(user_id, session_id, turn_id) or {}).get("extraction") or {}
            if extraction.get("status") not in PENDING:
                return
            time.sleep(0.25)


def _show(turns: list[tuple[str, dict]]) -> None:
    """The last turns; under a user's answer, what became of it (always for the latest answer, otherwise
    only when it is not simply done)."""
    users = [tid for tid, data in turns if data.get("role") != "assistant"]
    latest = users[-1] if users else None
    for turn_id, data in turns[-SHOWN_TURNS:]:
        with st.chat_message("assistant" if data.get("role") == "assistant" else "user"):
            quote(data["text"])
            if data.get("role") == "assistant":
                continue
            extraction = data.get("extraction") or {}
            status = extraction.get("status")
            if turn_id == latest or status not in DONE:
                st.caption(labels.turn_status_message(status, extraction.get("next_attempt_at")))


def render() -> None:
    subject = context.require_subject()
    viewer = st.session_state["viewer"]
    store = context.store()
    st.title("Continue the conversation")
    if subject.read_only:
        st.info("Conversations are only continued by the person themselves.")
        return
    session_id = _session_id(store, subject, viewer)
    turns = [
        (tid, data)
        for tid, data in store.session_turns(subject.user_id, session_id)
        if isinstance(data.get("text"), str)
    ]
    if not turns or turns[-1][1].get("role") != "assistant":
        stored = store.summary(subject.user_id)
        fresh = context.fresh(stored) if stored else None  # aged: answers due for a re-check are asked first
        summary, stale = (fresh.summary, context.stale_of(fresh)) if fresh else (None, None)
        asked = {data["text"] for _, data in turns if data.get("role") == "assistant"}
        suggestions = (
            next_best_questions(store.catalog, store.graph, summary, limit=1, asked=asked, stale=stale)
            if summary
            else []
        )
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

    _show(turns)
    pending = [
        d for _, d in turns[-SHOWN_TURNS:]
        if d.get("role") != "assistant" and (d.get("extraction") or {}).get("status") in (*PENDING, "failed")
    ]  # fmt: skip
    if pending:
        st.button("Check again", key="conversation_refresh", icon=":material/refresh:",
                  help="Answers being analysed or waiting for a retry: see whether they are done")  # fmt: skip

    answer = st.chat_input("Your answer", max_chars=MAX_TURN_TEXT_CHARS)
    if answer is not None:
        problem = turn_text_problem(answer)  # the rules and the pipeline refuse exactly these too
        if problem:
            st.warning(f"Your answer was not sent: {problem}.")
            return
        turn_id = store.add_turn(subject.user_id, session_id, "user", answer)
        _wait_until_settled(store, subject.user_id, session_id, turn_id)
        st.rerun()  # the answer and what became of it are shown from the turn itself
