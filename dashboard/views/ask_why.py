"""Ask why: questions answered from the journal with dated evidence (two-stage retrieval)."""

from __future__ import annotations

import streamlit as st

from dashboard import context, labels
from dashboard.safe_text import quote
from factor_journal.extraction.base import ExtractionError
from factor_journal.questions import answer_question

EXAMPLES = [
    "Why is data quality only this low?",
    "Why can't we do predictive maintenance?",
    "What changed since last month?",
    "What if we improve data governance?",
    "What did I say about our spreadsheets?",
]


def render() -> None:
    subject = context.require_subject()
    store = context.store()
    st.title("Ask why")
    if subject.read_only:  # answers quote the person's own words: theirs alone (docs/security.md)
        st.info("Ask why answers from a person's own words, so only they can ask it.")
        return
    st.caption(
        "Answers come from what was said in your conversations, with the date and words behind each point. "
        "Ask in your own words: a question that names no factor is matched by meaning against what you said."
    )
    example = st.pills("Examples", EXAMPLES, key="ask_example")
    question = st.text_input("Your question", value=example or "", key="ask_question", max_chars=500)
    if not question.strip():
        return
    try:
        answer = answer_question(store, subject.user_id, question, composer=context.writer())
    except ExtractionError:
        st.warning("The assistant could not write an answer just now; here is what the journal says.")
        answer = answer_question(store, subject.user_id, question)
    except ValueError as error:
        st.error(str(error))
        return
    names = labels.factor_names(store.catalog)
    quote(labels.names_in(answer.text, names))
    if answer.citations:
        st.subheader("Evidence")
        for citation in answer.citations:
            with st.container(border=True):
                found = " · found by meaning" if citation.similarity is not None else ""
                st.markdown(f"**{citation.date:%d %b %Y}** · {citation.factor_name} · {citation.change}{found}")
                quote(labels.names_in(citation.rationale, names))
                if citation.excerpt:
                    st.text(citation.excerpt)
