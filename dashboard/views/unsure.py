"""Under an answer the reader was unsure about, what the person can tell us there (the conversation page).

* **Nothing understood**: "This was about…" offers the few factors the answer comes closest to
  (``sayback.closest_factors``: the reader's own ranking and a search of the catalog), each a button; a factor
  chosen shows its three levels in the factor's words, each a button, so factor and level take two clicks;
  "Something else" finds any factor by name.
* **Torn**: the reader could not choose between two readings (``documents.TornReading``): the question it asks
  (``sayback.torn_question``), one button per answer, and "Something else" (the same choice as above).
* **Set aside**: an answer the screen set aside for a reason its person may lift offers "It was about us", which
  has it read again without that screen (``store.ledger.lift_screen``).

What the person tells us becomes their own value, journaled with the answer as its evidence, as a correction is,
and kept on the answer's turn in the same transaction (``store.correct(..., told=True)``), so the say-back shows it
under the answer from then on.  Each control names what it acts on (a button's accessible name is its label).

The choice for one answer can be opened by address: the conversation page with ``?session=<id>&answer=<turn id>``
(``context.answer_address``), for a link from another page ("say what it was about").
"""

from __future__ import annotations

from functools import partial

import streamlit as st

from dashboard import context
from factor_journal.conversation import StoredTurn
from factor_journal.documents import ExtractionOutcome, TurnStatus
from factor_journal.models import SaidIn
from factor_journal.sayback import (
    LIFT,
    AboutChoice,
    TornQuestion,
    about_choice,
    can_lift,
    closest_factors,
    every_factor,
    torn_questions,
)
from factor_journal.store import TurnRef
from factor_journal.vocabulary import clip

OPEN = "unsure_open"  # session key: the answer whose "This was about…" is open, and the factor chosen in it
ADDRESSED = "unsure_addressed"  # session key: the answer the page was opened at (``answer_address``)
LINKED = "unsure_linked"  # session key: the last linked answer whose choice was opened (``open_at``)
ABOUT = "This was about…"
SOMETHING_ELSE = "Something else: find a factor by name"
WAIT_FOR_READING_SECONDS = 8.0
EVIDENCE_CHARS = 1100  # of the answer's words kept with the person's decision (``SaidIn`` keeps at most 1,200)


def open_at(linked: str | None) -> None:
    """Open the choice under the answer a link named (``context.answer_address``, taken by
    ``context.open_linked_answer``, which also continued its session), once per link."""
    if linked and st.session_state.get(LINKED) != linked:
        st.session_state[LINKED] = linked  # opened once: a decision that closes it is not undone by the next run
        st.session_state[ADDRESSED] = linked
        st.session_state[OPEN] = (linked, None)


def offer(turn: StoredTurn, *, can_act: bool) -> None:
    """What the person can tell us under one answer (its turn, read by the page), when the reader was unsure about
    it (see the module): the torn question, "This was about…", or "It was about us"; nothing for a reader who may
    not act (a manager)."""
    outcome, turn_id = turn.outcome, turn.turn_id
    if not can_act or outcome is None or outcome.status not in (TurnStatus.processed, TurnStatus.no_update):
        return
    catalog = context.store().catalog
    if turn.lift is not None:
        st.caption("You said this answer was about you after all: it was read again.")
    questions = torn_questions(catalog, outcome.torn, turn.told)
    understood = outcome.readings or turn.told or questions
    addressed = st.session_state.get(ADDRESSED) == turn_id  # opened at this answer, or "Something else" chosen
    with st.container(key=f"unsure-{turn_id}"):
        if questions:
            _torn(turn, questions[0])
        elif can_lift(outcome.screened, turn.lift) and st.button(LIFT, key=f"lift-{turn_id}", icon=":material/undo:"):
            _lift(turn_id)
        if outcome.screened is None and (addressed or not understood):
            _about(turn, outcome)


def _torn(turn: StoredTurn, question: TornQuestion) -> None:
    """The reader's question about the answer, one click per answer, and "Something else"."""
    turn_id = turn.turn_id
    st.markdown(question.question)
    columns = st.columns(len(question.options) + 1)
    for index, option in enumerate(question.options):
        if columns[index].button(option.label, key=f"torn-{turn_id}-{index}"):
            _tell(turn, option.factor_id, option.value, WHICH_READING)
    if columns[-1].button("Something else", key=f"torn-else-{turn_id}", icon=":material/search:"):
        st.session_state[OPEN] = (turn_id, None)
        st.session_state[ADDRESSED] = turn_id
        st.rerun()


def _about(turn: StoredTurn, outcome: ExtractionOutcome) -> None:
    """ "This was about…": the closest factors, then the chosen factor's three levels; "Something else"."""
    catalog = context.store().catalog
    turn_id = turn.turn_id
    opened = st.session_state.get(OPEN)
    chosen = opened[1] if isinstance(opened, tuple) and opened[0] == turn_id else None
    read = [reading.factor_id for reading in outcome.readings]
    choices = closest_factors(catalog, [*read, *outcome.ranking], turn.text or "")
    st.markdown(f"**{ABOUT}**")
    columns = st.columns(len(choices)) if choices else []
    for column, choice in zip(columns, choices, strict=True):
        if column.button(
            f"It was about {choice.factor_name}",
            key=f"about-{turn_id}-{choice.factor_id}",
            type="primary" if choice.factor_id == chosen else "secondary",
        ):
            st.session_state[OPEN] = (turn_id, choice.factor_id)
            st.rerun()
    names = every_factor(catalog)
    found = st.selectbox(
        SOMETHING_ELSE,
        list(names),
        index=None,
        format_func=names.__getitem__,
        placeholder="Type a factor's name",
        key=f"about-find-{turn_id}",
    )
    if found is not None and found != chosen:
        st.session_state[OPEN] = (turn_id, found)
        chosen = found
    if chosen is not None and catalog.has_factor(chosen):
        _levels(turn, about_choice(catalog, chosen))


def _levels(turn: StoredTurn, choice: AboutChoice) -> None:
    """The chosen factor's three levels, in its own words: one click saves the answer as the person's."""
    st.caption(f"How is it for {choice.factor_name}?")
    for level in choice.levels:
        label = f"{choice.factor_name} is {level.level.value}: {level.meaning}"
        if st.button(label, key=f"about-{turn.turn_id}-{choice.factor_id}-{level.level.value}"):
            _tell(turn, choice.factor_id, level.value, WHAT_IT_WAS_ABOUT)


WHAT_IT_WAS_ABOUT = "User said what their answer was about, where nothing was understood from it"
WHICH_READING = "User said which reading of their answer was right, where the reader could not choose"


def _tell(turn: StoredTurn, factor_id: str, value: float, rationale: str) -> None:
    """The person's own value for the factor, journaled with the answer (its words) as its evidence and kept on
    the answer's turn; the page then shows it under the answer."""
    subject = context.require_subject()
    store = context.store()
    said = SaidIn(
        session_id=st.session_state.get("conversation_session"),
        turn_id=turn.turn_id,
        words=clip(turn.text or "", EVIDENCE_CHARS),  # the answer is the evidence (its line quotes it)
    )
    name = store.catalog.factor(factor_id).name
    level = store.catalog.band(factor_id, value).value
    action = partial(store.correct, subject.user_id, factor_id, value, rationale, said=said, told=True)
    context.act(
        action, f"Saved: {name} is {level}, as you said.", notice_key="conversation_notice", forget=(OPEN, ADDRESSED)
    )


def _lift(turn_id: str) -> None:
    """ "It was about us": the answer is read again without the screen, and the page waits briefly for it."""
    subject = context.require_subject()
    store = context.store()
    session = st.session_state.get("conversation_session")
    ref = TurnRef(subject.user_id, str(session), turn_id)

    def lift() -> None:
        store.ledger.lift_screen(ref)
        with st.spinner("Reading your answer again…"):
            store.wait_for_analysis(ref.user_id, ref.session_id, ref.turn_id, WAIT_FOR_READING_SECONDS)

    context.act(lift, "Read again: it was about you.", notice_key="conversation_notice")
