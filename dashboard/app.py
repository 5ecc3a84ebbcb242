"""Factor Journal: the app people reach from the link in their email.

    streamlit run dashboard/app.py      (``make demo`` does this against the emulators)

A resume link opens the user's pages; a manager link opens the organisation's
pages and, read-only, each member's progress (never their own words: see
docs/security.md).  A link may name any page (``/team?t=…``): that page opens once the
link is verified, and the token leaves the address bar.  Every page renders from
the precomputed summary and the journal kept by the Cloud Functions.
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
st.html(brand.FOCUS_VISIBLE)  # every page shows where the keyboard is

from dashboard import charts, context, pages  # noqa: E402, F401  (the heavy imports, under the skeleton)
from dashboard.safe_text import md  # noqa: E402


def page(spec: pages.Page) -> st.Page:
    """A page backed by ``screens/<name>.py`` (a thin file over ``views``), at its own address ``/<name>``."""
    return st.Page(f"screens/{spec.name}.py", title=spec.title, icon=spec.icon, url_path=spec.name)


def home(spec: pages.Page) -> st.Page:
    """The app's root address: the same screen as ``spec``, hidden from the menu.  Streamlit serves its default
    page at ``/`` only, so the main page itself is not the default: ``/<name>`` (a link to it) opens it too."""
    return st.Page(f"screens/{spec.name}.py", title=spec.title, url_path="home", default=True, visibility="hidden")


USER_PAGES = [home(pages.PERSON_PAGES[0]), *map(page, pages.PERSON_PAGES)]
MANAGER_PAGES = {
    "Organisation": [home(pages.ORGANISATION_PAGES[0]), *map(page, pages.ORGANISATION_PAGES)],
    "Person (read-only)": list(map(page, pages.MEMBER_PAGES)),
}


def no_access() -> None:
    """Why nothing is shown; for an expired link, a button that has a new one mailed to its owner."""
    st.title("Factor Journal")
    st.warning(st.session_state.get("access_error", context.NO_LINK))
    if context.expired_link() is None:
        return
    if st.button("Email me a new link", key="renew_link", type="primary"):
        context.renew_expired_link()
    said = context.renewal_said()
    if said is not None:
        st.info(said)


def link_expiry(viewer: context.Viewer) -> None:
    """When the link in use stops working (its own lifetime, whatever the default is)."""
    if viewer.link_expires_at is not None:
        st.sidebar.caption(f"This link works until {viewer.link_expires_at:%d %b %Y, %H:%M} UTC.")


def export_offer(viewer: context.Viewer) -> None:
    """A person's own data as JSON (profile, factors, journals, conversations, ...), built when downloaded."""

    def build() -> str:
        return context.store().personal_data.export_json(viewer.user_id)

    st.sidebar.download_button(
        "Download my data (JSON)",
        build,
        file_name="factor-journal-my-data.json",
        mime="application/json",
        key="export_my_data",
        help="Everything Factor Journal holds about you.",
        on_click="ignore",
    )


if "u" in st.query_params:  # a one-click unsubscribe link from a reminder email: honoured without signing in
    loading.empty()
    st.navigation(
        [
            st.Page("screens/unsubscribe.py", title="Reminder emails", url_path="reminders", default=True),
            st.Page("screens/unsubscribe.py", title="Reminder emails", url_path="unsubscribe"),
        ],  # /unsubscribe?u=…
        position="hidden",
    ).run()
    st.stop()

viewer = context.sign_in()
if viewer is None:
    # Every page address stays known, so a link to one (``/team?t=…``) whose token fails shows the
    # reason, not "Page not found".
    navigation = st.navigation(
        [st.Page(no_access, title="Factor Journal", url_path="welcome", default=True)]
        + [st.Page(no_access, title="Factor Journal", url_path=path) for path in sorted(pages.page_names())],
        position="hidden",
    )
elif viewer.kind == "resume":
    st.sidebar.caption(f"Signed in as **{md(viewer.display_name)}**")
    export_offer(viewer)
    link_expiry(viewer)
    navigation = st.navigation(USER_PAGES)
else:
    st.sidebar.caption(f"Manager view · **{md(viewer.display_name)}**")
    link_expiry(viewer)
    navigation = st.navigation(MANAGER_PAGES)
loading.empty()
navigation.run()
context.scroll_to_section()
