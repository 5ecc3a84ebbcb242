"""Factor Journal: the app people reach from the link in their email.

    streamlit run dashboard/app.py      (``make demo`` does this against the emulators)

A resume link opens the user's pages; a manager link opens the organisation's
pages and, read-only, each member's.  Every page renders from the precomputed
summary and the journal kept by the Cloud Functions.
"""

from __future__ import annotations

import sys
from pathlib import Path

import streamlit as st

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `streamlit run` puts only dashboard/ on the path

from dashboard import brand  # noqa: E402  (light: Streamlit only)

brand.set_page()
loading = st.empty()  # a first paint at once: the skeleton stays until the page is about to draw
loading.markdown(brand.SKELETON, unsafe_allow_html=True)

from dashboard import charts, context  # noqa: E402, F401  (the heavy imports, under the skeleton)


def page(name: str, title: str, icon: str, **options: object) -> st.Page:
    """A page backed by ``screens/<name>.py`` (a thin file over ``views``)."""
    return st.Page(f"screens/{name}.py", title=title, icon=icon, url_path=name, **options)


USER_PAGES = [
    page("overview", "Where are we", ":material/explore:", default=True),
    page("capabilities", "Capabilities", ":material/lock_open:"),
    page("history", "Factor history", ":material/timeline:"),
    page("review", "Review", ":material/task_alt:"),
    page("ask", "Ask why", ":material/help:"),
    page("conversation", "Continue the conversation", ":material/forum:"),
]
MANAGER_PAGES = {
    "Organisation": [page("team", "Team progress", ":material/groups:", default=True), page("blockers", "Blockers", ":material/block:")],
    "Person (read-only)": [
        page("overview", "Overview", ":material/explore:"),
        page("capabilities", "Capabilities", ":material/lock_open:"),
        page("history", "Factor history", ":material/timeline:"),
        page("ask", "Ask why", ":material/help:"),
    ],
}


def no_access() -> None:
    st.title("Factor Journal")
    st.warning(st.session_state.get("access_error", "Open Factor Journal through the link in your email."))
    st.caption("Links expire after 14 days. If yours has, reply to the email to get a new one.")


if "u" in st.query_params:  # a one-click unsubscribe link from a reminder email: honoured without signing in
    loading.empty()
    st.navigation(
        [st.Page("screens/unsubscribe.py", title="Reminder emails", url_path="reminders", default=True),
         st.Page("screens/unsubscribe.py", title="Reminder emails", url_path="unsubscribe")],  # /unsubscribe?u=…
        position="hidden",
    ).run()  # fmt: skip
    st.stop()

viewer = context.sign_in_from_link()
if viewer is None:
    navigation = st.navigation([st.Page(no_access, title="Factor Journal", url_path="welcome", default=True)])
elif viewer.kind == "resume":
    st.sidebar.caption(f"Signed in as **{viewer.display_name}**")
    navigation = st.navigation(USER_PAGES)
else:
    st.sidebar.caption(f"Manager view · **{viewer.display_name}**")
    navigation = st.navigation(MANAGER_PAGES)
loading.empty()
navigation.run()
