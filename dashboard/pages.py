"""The app's pages, listed once: the app's navigation, the pages bench and the tests all read this.

Each page is ``screens/<name>.py`` (a thin file over ``views/``) served at its own address ``/<name>``.  Adding a
page is adding it here (and its screen and view): see docs/recipes.md, "Add a page".  Pure data: no Streamlit.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Page:
    """One page: its address and screen file (``name``), the title in the menu and its icon."""

    name: str
    title: str
    icon: str


PERSON_PAGES: tuple[Page, ...] = (  # what a resume link opens, in the menu's order; the first is the home page
    Page("overview", "Where are we", ":material/explore:"),
    Page("capabilities", "Capabilities", ":material/lock_open:"),
    Page("history", "Factor history", ":material/timeline:"),
    Page("review", "Review", ":material/task_alt:"),
    Page("ask", "Ask why", ":material/help:"),
    Page("conversation", "Continue the conversation", ":material/forum:"),
)
ORGANISATION_PAGES: tuple[Page, ...] = (  # a manager link's own pages; the first is its home page
    Page("team", "Team progress", ":material/groups:"),
    Page("blockers", "Blockers", ":material/block:"),
)
MEMBER_PAGES: tuple[Page, ...] = (  # a member's pages a manager reads, read-only (never their own words)
    Page("overview", "Overview", ":material/explore:"),
    Page("capabilities", "Capabilities", ":material/lock_open:"),
    Page("history", "Factor history", ":material/timeline:"),
)


def page_names() -> list[str]:
    """Every page's address, whoever may open it, each once."""
    return list(dict.fromkeys(page.name for page in (*PERSON_PAGES, *ORGANISATION_PAGES, *MEMBER_PAGES)))


def person_page_names() -> list[str]:
    """The addresses a resume link opens, in the menu's order."""
    return [page.name for page in PERSON_PAGES]
