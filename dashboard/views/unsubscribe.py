"""Unsubscribe: the one-click link at the foot of every reminder email, honoured without signing in.

The link carries only a signed token naming the person (``?u=…``); it opens no
data.  Opening the page sets ``reminders_opt_out`` (idempotent) and says so.
"""

from __future__ import annotations

import streamlit as st

from dashboard import context
from dashboard.safe_text import md
from factor_journal.errors import UnknownUserError
from factor_journal.links import LinkError
from factor_journal.reminders import UnsubscribeLinks, unsubscribe


def render() -> None:
    st.title("Reminder emails")
    try:
        profile = unsubscribe(context.store(), UnsubscribeLinks.like(context.signer()), st.query_params.get("u"))
    except LinkError:
        st.error(
            "This unsubscribe link is not valid: it may have been copied incompletely. Copy the whole "
            "link from the email, or reply to the email and we will take you off the list."
        )
        return
    except UnknownUserError:
        st.info("This account no longer exists, so no reminders will be sent to it.")
        return
    st.success("You are unsubscribed. We will not send you any more reminder emails.")
    if profile.email:
        st.caption(f"This applies to reminders for {md(profile.email)}.")
    st.write("Your assessment is kept as it is. The link in any earlier email still opens it while it is valid.")
