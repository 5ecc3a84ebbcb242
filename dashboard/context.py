"""What every page needs: the shared store, who is looking (from a signed link), whose data is shown.

Access comes only from a verified link token (``?t=…``): a resume link opens
one user's own pages, a manager link opens the manager pages of one
organisation (and, read-only, its members' pages).  Nothing else is shown.
"""

from __future__ import annotations

from typing import Literal

import streamlit as st
from factor_journal import runtime
from factor_journal.links import LinkError, LinkSigner
from factor_journal.models import AssessmentSummary
from factor_journal.store import FactorJournalStore
from pydantic import BaseModel


class Viewer(BaseModel):
    user_id: str
    kind: Literal["resume", "manager"]
    org_id: str | None = None
    session_id: str | None = None
    display_name: str = ""


class Subject(BaseModel):
    """Whose assessment a user page shows, and whether it may be changed from here."""

    user_id: str
    display_name: str
    read_only: bool


@st.cache_resource(show_spinner=False)
def store() -> FactorJournalStore:
    return runtime.store()


@st.cache_resource(show_spinner=False)
def writer() -> object | None:
    """Gemini in production (answers, question phrasing); None offline (deterministic composer)."""
    return runtime.make_writer()


@st.cache_resource(show_spinner=False)
def signer() -> LinkSigner:
    return LinkSigner(runtime.firestore_client())


def sign_in_from_link() -> Viewer | None:
    """The viewer of this browser session, verified from the link token once; None with a message otherwise."""
    viewer = st.session_state.get("viewer")
    token = st.query_params.get("t")
    if viewer is not None and (token is None or token == st.session_state.get("viewer_token")):
        return viewer
    st.session_state.pop("viewer", None)
    if not token:
        st.session_state["access_error"] = "Open Factor Journal through the link in your email."
        return None
    try:
        claims = signer().verify(token)
    except LinkError as error:
        st.session_state["access_error"] = str(error)
        return None
    profile = store().get_user(claims.user_id)
    if profile is None or (claims.kind == "manager" and (profile.role != "manager" or profile.org_id != claims.org_id)):
        st.session_state["access_error"] = "This link no longer opens anything: the account has changed."
        return None
    viewer = Viewer(
        user_id=claims.user_id, kind=claims.kind, org_id=profile.org_id,
        session_id=claims.session_id, display_name=profile.display_name or claims.user_id,
    )  # fmt: skip
    st.session_state["viewer"] = viewer
    st.session_state["viewer_token"] = token
    st.session_state.pop("access_error", None)
    return viewer


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
    return subject  # type: ignore[return-value]


def open_page(title: str) -> tuple[Subject, FactorJournalStore, AssessmentSummary]:
    """Start a user page: whose it is, the store, and their summary (one read); stops with a
    message when there is no subject or no assessment.  A manager's read-only view names the person."""
    subject = require_subject()
    shared = store()
    summary = shared.summary(subject.user_id)
    st.title(f"{subject.display_name} · {title}" if subject.read_only else title)
    if summary is None:
        st.error("There is no assessment for this account yet.")
        st.stop()
    return subject, shared, summary  # type: ignore[return-value]
