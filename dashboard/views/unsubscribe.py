"""Unsubscribe: the link at the foot of every reminder email, honoured without signing in.

The link carries only a signed token naming the person (``?u=…``); it opens no
data.  Opening the page changes nothing (mail scanners and link previewers open
every link in a mail): it checks the token and asks; pressing its button sets
``reminders_opt_out`` (idempotent) and says so.
"""

from __future__ import annotations

import streamlit as st

from dashboard import context
from dashboard.safe_text import md
from factor_journal.errors import UnknownUserError
from factor_journal.links import LinkError
from factor_journal.reminders import UnsubscribeLinks, unsubscribe

DONE_KEY = "unsubscribed"  # (token, address) this session opted out with: later reruns say so, write nothing


def render() -> None:
    st.title("Reminder emails")
    links = UnsubscribeLinks.like(context.signer())
    token = st.query_params.get("u")
    try:
        links.user_of(token)  # a bad link is said at once; nothing is read or written
    except LinkError:
        st.error(
            "This unsubscribe link is not valid: it may have been copied incompletely. Copy the whole "
            "link from the email, or reply to the email and we will take you off the list."
        )
        return
    done = st.session_state.get(DONE_KEY)
    if done is None or done[0] != token:
        st.write("Do you want to stop the reminder emails from Factor Journal?")
        if not st.button("Unsubscribe from reminder emails", type="primary", key="unsubscribe"):
            st.caption("Nothing changes until you press the button. Your assessment is kept as it is.")
            return
        try:
            profile = unsubscribe(context.store(), links, token)
        except UnknownUserError:
            st.info("This account no longer exists, so no reminders will be sent to it.")
            return
        done = st.session_state[DONE_KEY] = (token, profile.email)
    st.success("You are unsubscribed. We will not send you any more reminder emails.")
    if done[1]:
        st.caption(f"This applies to reminders for {md(done[1])}.")
    st.write("Your assessment is kept as it is. The link in any earlier email still opens it while it is valid.")
