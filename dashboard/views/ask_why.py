"""Ask why: questions answered from the journal with dated evidence (two-stage retrieval)."""

from __future__ import annotations

import streamlit as st

from dashboard import context, labels
from dashboard.safe_text import announce, md, quote
from factor_journal.conversation import excerpt_as_read
from factor_journal.extraction.base import ExtractionError
from factor_journal.questions import AnswerLine, answer_question
from factor_journal.questions.composing import NOT_ASSESSED
from factor_journal.questions.context import UnassessedAnswer

EXAMPLES = [
    "What should we fix first?",
    "Why is data quality only this low?",
    "Why can't we do predictive maintenance?",
    "What changed since last month?",
    "What if we improve data governance?",
    "What did I say about our spreadsheets?",
]


PROMPT = "Type a question and press Enter, or choose an example above"


def _ask_the_example() -> None:
    """An example chosen is the question asked (a keyed text input ignores a changed ``value=``: set its state)."""
    example = st.session_state.get("ask_example")
    if example:
        st.session_state["ask_question"] = example


def _let_go_of_the_example() -> None:
    """The person's own words replace the example: it no longer shows as chosen."""
    if st.session_state.get("ask_question") != st.session_state.get("ask_example"):
        st.session_state["ask_example"] = None


def render() -> None:
    subject = context.require_subject()
    store = context.store()
    st.title("Ask why", anchor=False)
    if subject.read_only:  # answers quote the person's own words: theirs alone (docs/security.md)
        st.info("Ask why answers from a person's own words, so only they can ask it.")
        return
    st.caption(
        "Answers come from what was said in your conversations, with the date and words behind each point. "
        "Ask in your own words: a question that names no factor is matched by meaning against what you said."
    )
    st.pills("Examples", EXAMPLES, key="ask_example", on_change=_ask_the_example)
    question = st.text_input(
        "Your question", key="ask_question", max_chars=500, on_change=_let_go_of_the_example, placeholder=PROMPT
    )
    st.button("Ask", key="ask_submit", help="Or press Enter in the question field.")
    if not question.strip():
        return
    try:
        answer = answer_question(store, subject.user_id, question, composer=context.writer(), router=context.router())
    except ExtractionError:  # the writer's (a failed intent call falls back inside): no second call to Vertex AI
        st.warning("The assistant could not write an answer just now; here is what the journal says.")
        answer = answer_question(store, subject.user_id, question)
    except ValueError as error:
        st.error(str(error))
        return
    names = labels.factor_names(store.catalog)
    st.markdown(answer_markdown(answer.lines, names))
    if st.session_state.get("ask_announced") != question:  # once per question: the answer is drawn below the field
        st.session_state["ask_announced"] = question
        first = answer.lines[0].plain if answer.lines else answer.text
        announce(f"Answer: {labels.in_plain_words(first, names)}")
    if answer.unassessed_answers:
        _unassessed(answer.unassessed_answers)
    if answer.citations:
        st.header("Evidence", anchor=False)
        for citation in answer.citations:
            with st.container(border=True):
                found = " · found by meaning" if citation.similarity is not None else ""
                st.markdown(f"**{citation.date:%d %b %Y}** · {citation.factor_name} · {citation.change}{found}")
                quote(labels.in_plain_words(citation.rationale, names))
                if citation.excerpt:
                    quote(excerpt_as_read(citation.excerpt))


def _unassessed(answers: list[UnassessedAnswer]) -> None:
    """The person's words that fed no journal entry, each with its date and mark, and beside it the way to the
    answer in the conversation (where the person can say what it was about)."""
    st.header(f"Your words, {NOT_ASSESSED}", anchor=False)
    for said in answers:
        with st.container(border=True):
            st.markdown(f"**{said.date:%d %b %Y}** · {NOT_ASSESSED} · found by meaning")
            quote(said.said)
            st.page_link(
                "screens/conversation.py",
                label=f"Show this answer of {said.date:%d %b %Y} in the conversation",
                icon=":material/forum:",
                query_params=context.answer_address(said.session_id, said.turn_id),
            )


_LIST_INDENT = {"point": "", "detail": "  "}


def answer_markdown(lines: list[AnswerLine], names: dict[str, str]) -> str:
    """The answer as Markdown the app composes: its sentences as paragraphs, its points as a list, someone's
    words as a quote under their point; every phrase escaped (``md``), so what anyone wrote stays text."""

    def escaped(text: str) -> str:  # md() drops the edge spaces between phrases: keep them
        inner = md(labels.in_plain_words(text, names))
        return (" " if text[:1].isspace() else "") + inner + (" " if text[-1:].isspace() else "")

    def said(line: AnswerLine) -> str:
        return "".join(f"**{escaped(p.text)}**" if p.strong else escaped(p.text) for p in line.phrases)

    blocks: list[str] = []
    indent: str | None = None  # the indent of the list item last written; None outside a list
    for line in lines:
        if line.kind in _LIST_INDENT:
            item = f"{_LIST_INDENT[line.kind]}- {said(line)}"
            if indent is None:
                blocks.append(item)
            else:
                blocks[-1] += "\n" + item  # the same list
            indent = _LIST_INDENT[line.kind]
        elif line.kind == "words" and indent is not None:  # a quote inside the item it belongs to
            blocks[-1] += f"\n{indent}  > {said(line)}"
        elif line.kind == "words":
            blocks.append(f"> {said(line)}")
        else:
            blocks.append(said(line))
            indent = None
    return "\n\n".join(blocks)
