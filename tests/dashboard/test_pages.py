"""The one list of pages (dashboard/pages.py): each page it names has its screen, and each screen is listed."""

from pathlib import Path

from dashboard import pages

SCREENS = Path(__file__).resolve().parents[2] / "dashboard" / "screens"
UNLISTED = {"unsubscribe"}  # served without signing in, from an unsubscribe link only


def test_every_listed_page_has_a_screen_and_every_screen_is_listed():
    assert {path.stem for path in SCREENS.glob("*.py")} - UNLISTED == set(pages.page_names())


def test_each_menu_lists_a_page_once_and_a_manager_reads_only_pages_a_person_has():
    for menu in (pages.PERSON_PAGES, pages.ORGANISATION_PAGES, pages.MEMBER_PAGES):
        names = [page.name for page in menu]
        assert len(names) == len(set(names)), names
    assert {page.name for page in pages.MEMBER_PAGES} <= set(pages.person_page_names())
    assert pages.person_page_names()[0] == "overview"  # a resume link's home
