"""What every page needs: the shared store, who is looking (from a signed link), whose data is shown.

Access comes only from a verified link token: a resume link opens one user's own pages, a
manager link opens the manager pages of one organisation (and, read-only, its members' pages).
The token arrives as ``?t=…`` on whichever page the link names; it is then kept in the session
and removed from the address bar, so a copied address never carries the credential.  The link
and the viewer's standing are re-checked on every run (``factor_journal.access``: cached for a
few seconds), so a revoked or expired link, a removed manager or an erased person loses access
on the next interaction.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from datetime import UTC, datetime

import streamlit as st
from pydantic import BaseModel

from dashboard.safe_text import md
from factor_journal import freshness, renewal, runtime
from factor_journal.access import AccessChecker, Viewer
from factor_journal.conversation import StoredTurn, stored_turns
from factor_journal.errors import FactorJournalError
from factor_journal.links import SECTION_PARAM, ExpiredLinkError, LinkError, LinkSigner, is_section_id
from factor_journal.models import AssessmentSummary
from factor_journal.questions import IntentRouter, Writer
from factor_journal.store import FactorJournalStore

__all__ = [
    "Subject",
    "Viewer",
    "access",
    "answer_address",
    "answer_anchor",
    "current_subject",
    "expired_link",
    "fresh",
    "open_fresh_page",
    "open_linked_answer",
    "open_page",
    "renew_expired_link",
    "renewal_said",
    "require_subject",
    "scroll_to_section",
    "sign_in",
    "signer",
    "store",
]

NO_LINK = (
    "For your privacy, Factor Journal does not remember you between visits: reloading a page or typing its "
    "address asks for your link again. Open Factor Journal through the link in your email."
)
EXPIRED_TOKEN = "expired_token"  # the expired link last opened here: only ever used to ask for a new one
RENEWAL_SAID = "renewal_said"
# What belongs to one signed-in person and must not leak into the next link opened in the same tab.
_PER_VIEWER_KEYS = (
    "viewer",
    "drill_user",
    "drill_choice",
    "conversation_session",
    "conversation_visit",
    "conversation_notice",
    "conversation_announced",
    "conversation_focus",
    "ask_announced",
    "review_limit",
    "review_drawn",
    "scroll_to",
)


class Subject(BaseModel):
    """Whose assessment a user page shows, and whether it may be changed from here."""

    user_id: str
    display_name: str
    read_only: bool


@st.cache_resource(show_spinner=False)
def store() -> FactorJournalStore:
    return runtime.store()


@st.cache_resource(show_spinner=False)
def writer() -> Writer | None:
    """Gemini in production (answers, question phrasing); None offline (deterministic composer)."""
    return runtime.make_writer()


@st.cache_resource(show_spinner=False)
def router() -> IntentRouter | None:
    """Gemini in production (what a question to Ask why is about); None offline (the embedded rules and search)."""
    return runtime.make_router()


@st.cache_resource(show_spinner=False)
def signer() -> LinkSigner:
    return LinkSigner(store().links)


@st.cache_resource(show_spinner=False)
def access() -> AccessChecker:
    return AccessChecker(signer(), store())


def sign_in() -> Viewer | None:
    """The viewer of this run, re-checked now; None (with ``access_error`` set) when there is none.

    A ``t`` query parameter (a link just opened, on any page) replaces the session's token and is
    removed from the address; the page the link named stays where it is."""
    token = st.query_params.get("t")
    if token:
        if token != st.session_state.get("viewer_token"):
            for key in _PER_VIEWER_KEYS:
                st.session_state.pop(key, None)
        st.session_state["viewer_token"] = token
        del st.query_params["t"]
        section = st.query_params.get(SECTION_PARAM)
        if section is not None:  # the section the link names (its # fragment left with the token: see links)
            del st.query_params[SECTION_PARAM]
            if is_section_id(section):
                st.session_state["scroll_to"] = section
    token = st.session_state.get("viewer_token")
    if not token:  # never signed in, or the link stopped working (its reason stays shown)
        st.session_state.setdefault("access_error", NO_LINK)
        return None
    try:
        viewer = access().viewer(token)
    except LinkError as error:
        for key in (*_PER_VIEWER_KEYS, "viewer_token", EXPIRED_TOKEN, RENEWAL_SAID):
            st.session_state.pop(key, None)
        st.session_state["access_error"] = str(error)
        if isinstance(error, ExpiredLinkError):  # kept to ask for a new one (``renew_expired_link``), never to open
            st.session_state[EXPIRED_TOKEN] = token
        return None
    st.session_state["viewer"] = viewer
    for key in ("access_error", EXPIRED_TOKEN, RENEWAL_SAID):
        st.session_state.pop(key, None)
    return viewer


def expired_link() -> str | None:
    """The expired link this session was opened with, if the last one opened had expired."""
    return st.session_state.get(EXPIRED_TOKEN)


def renew_expired_link() -> str:
    """Have a new link mailed for the expired one (``renewal.send_new_link``: to the owner's address only);
    the sentence saying what happened, also kept for the reruns after (``renewal_said``)."""
    try:
        said = renewal.SAID[renewal.send_new_link(store(), signer(), expired_link(), runtime.app_url())]
    except LinkError as error:
        said = str(error)
    st.session_state[RENEWAL_SAID] = said
    return said


def renewal_said() -> str | None:
    """What the last request for a new link came to, in this session."""
    return st.session_state.get(RENEWAL_SAID)


sign_in_from_link = sign_in  # the former name


def scroll_to_section() -> None:
    """Once, after the page the link opened has drawn: scroll to the section the link named (``at``), if the page
    has it (a heading's anchor id, checked in ``sign_in``); the browser waits a few seconds for it, then gives up."""
    section = st.session_state.pop("scroll_to", None)
    if not is_section_id(section):  # checked again where it enters the script: nothing else is ever written there
        return
    st.html(
        "<script>(() => { let tries = 0; const find = () => {"
        f" const heading = document.getElementById({json.dumps(section)});"
        " if (heading) heading.scrollIntoView({block: 'start'}); else if (++tries < 40) setTimeout(find, 250);"
        " }; find(); })();</script>",
        unsafe_allow_javascript=True,
    )


def current_subject() -> Subject | None:
    """The user whose pages are shown: the viewer, or the member a manager drilled into."""
    viewer: Viewer | None = st.session_state.get("viewer")
    if viewer is None:
        return None
    if viewer.kind == "resume":
        return Subject(user_id=viewer.user_id, display_name=viewer.display_name, read_only=False)
    member = st.session_state.get("drill_user")
    if member is None:
        return None
    profile = store().get_user(member)
    if profile is None or profile.org_id != viewer.org_id:  # a manager sees only their organisation
        st.session_state.pop("drill_user", None)
        return None
    return Subject(user_id=profile.user_id, display_name=profile.display_name or profile.user_id, read_only=True)


def require_subject() -> Subject:
    subject = current_subject()
    if subject is None:
        st.info("Choose a person on the Team progress page first.")
        st.stop()
    return subject


def conversation_session(subject: Subject) -> str:
    """The session the person's conversation continues, kept for this browser session: the one their link
    named when it still exists, else their latest, else a new one."""
    chosen = _session_to_continue(subject) or store().start_session(subject.user_id)
    st.session_state["conversation_session"] = chosen
    return chosen


ANSWER_PARAMS = ("session", "answer")  # an in-app link to one answer on the conversation page: its session and turn
_PLAIN_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")  # a session's or turn's id as the store makes them


def answer_address(session_id: str, turn_id: str) -> dict[str, str]:
    """The query parameters of an in-app link to one answer on the conversation page (``open_linked_answer``)."""
    return dict(zip(ANSWER_PARAMS, (session_id, turn_id), strict=True))


def answer_anchor(turn_id: str) -> str:
    """The anchor of an answer on the conversation page: a section id (``links.is_section_id``) from its turn id."""
    return "answer-" + hashlib.sha256(turn_id.encode()).hexdigest()[:16]


def open_linked_answer(subject: Subject) -> str | None:
    """The answer a page linked to (``answer_address``), as the conversation page opens: when its session is the
    person's, that session is the one the conversation shows and continues, and the page scrolls to the answer
    (``scroll_to_section``); the parameters leave the address.  The answer's turn id, kept for the visit (the page
    marks it), or None."""
    session, turn = (st.query_params.get(name) for name in ANSWER_PARAMS)
    for name in ANSWER_PARAMS:
        if name in st.query_params:
            del st.query_params[name]
    linked = all(isinstance(value, str) and _PLAIN_ID.fullmatch(value) for value in (session, turn))
    if linked and store().session_data(subject.user_id, str(session)) is not None:
        st.session_state.update(
            conversation_session=session, conversation_focus=turn, scroll_to=answer_anchor(str(turn))
        )
    return st.session_state.get("conversation_focus")


def _session_to_continue(subject: Subject) -> str | None:
    """The session ``conversation_session`` continues when there is one (None: it would start a new one)."""
    chosen = st.session_state.get("conversation_session")
    if chosen:
        return chosen
    the_store, viewer = store(), st.session_state["viewer"]
    named = viewer.session_id if viewer.session_id else None
    if named and the_store.session_data(subject.user_id, named) is None:
        named = None  # the session the link named is gone
    return named or the_store.latest_session(subject.user_id)


def conversation_so_far(subject: Subject) -> list[StoredTurn]:
    """The turns (oldest first, as stored; each read once, those without text left out) of the session the person's
    conversation continues (no session is started: a conversation not begun has none), so another page can say what
    the conversation asks next."""
    session = _session_to_continue(subject)
    if session is None:
        return []
    return stored_turns(store().session_turns(subject.user_id, session))


def fresh(summary: AssessmentSummary, at: datetime | None = None) -> freshness.FreshAssessment:
    """The summary as it counts now (or ``at``): every confidence aged (``factor_journal.freshness``), no read."""
    shared = store()
    return freshness.assess(shared.catalog, shared.graph, summary, at or datetime.now(UTC))


def open_page(title: str) -> tuple[Subject, FactorJournalStore, AssessmentSummary]:
    """Start a user page: whose it is, the store, and their summary as it counts now (one read, every
    confidence aged: see ``fresh``); stops with a message when there is no subject or no assessment."""
    subject, shared, assessment = open_fresh_page(title)
    return subject, shared, assessment.summary


def open_fresh_page(title: str) -> tuple[Subject, FactorJournalStore, freshness.FreshAssessment]:
    """Start a user page: whose it is, the store, and their summary with its freshness (one read); stops with
    a message when there is no subject or no assessment.  A manager's read-only view names the person."""
    subject = require_subject()
    shared = store()
    summary = shared.summary(subject.user_id)
    st.title(f"{md(subject.display_name)} · {title}" if subject.read_only else title, anchor=False)
    if summary is None:
        st.error("There is no assessment for this account yet.")
        st.stop()
    return subject, shared, fresh(summary)


def act(action: Callable[[], object], notice: str, *, notice_key: str, forget: tuple[str, ...] = ()) -> None:
    """Run a person's decision through the store: on a domain error say it on the page (nothing was written);
    otherwise forget the ``forget`` session keys, keep ``notice`` under ``notice_key`` for the next run, and rerun
    so the page shows the decision from the store."""
    try:
        action()
    except FactorJournalError as error:
        st.error(str(error))
        return
    for key in forget:
        st.session_state.pop(key, None)
    st.session_state[notice_key] = notice
    st.rerun()
