"""A person's pages (and a manager's) to a keyboard and a screen reader, in a real browser: where the focus is
shows plainly, each page's headings form an outline (h1, then h2 sections, h3 items: no level skipped, no extra
"link to heading" tab stops), and Review's repeated controls each name their factor (the accessible names Chromium
computes)."""

from __future__ import annotations

import time

import pytest
from test_browser import go_to, wait_for_text

from dashboard.pages import person_page_names
from factor_journal.links import LinkSigner, link_url
from factor_journal.models import InferredUpdate
from factor_journal.repositories.links import LinkRecords
from waiting import wait_for

pytestmark = pytest.mark.browser

PAGES = {  # what each page of dashboard.pages.PERSON_PAGES shows once drawn (a new page needs its line here)
    "overview": "What we know",
    "capabilities": "Next unlocks",
    "history": "The assessment as of a date",
    "review": "To confirm or correct",
    "ask": "Your question",
    "conversation": "Continue the conversation",
}
# Each heading's level and whether it holds a focusable link to itself (Streamlit's "link to heading" anchor).
# The page's own headings: everywhere but the menu (a page with a chat input has no stMain container).
HEADINGS = (
    "return Array.from(document.querySelectorAll('h1, h2, h3, h4'))"
    ".filter(h => !h.closest('[data-testid=stSidebar]'))"
    ".map(h => [Number(h.tagName[1]), h.id, h.querySelectorAll('a[href]').length, h.textContent])"
)


def _person(store, make_user, firestore_client) -> str:
    user = make_user(store, display_name="Ada Access")
    for fid, value in (("data_quality", 20), ("sensor_data", 60), ("ml_expertise", 50)):
        store.record_inference(user, InferredUpdate(factor_id=fid, value=value, confidence=0.7, rationale="said"))
    return LinkSigner(LinkRecords(firestore_client)).issue(user)


def test_keyboard_focus_on_a_page_link_shows_a_clear_ring(app_url, browser, store, make_user, firestore_client):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    browser.get(f"{app_url}/overview?t={_person(store, make_user, firestore_client)}")
    wait_for_text(browser, "What we know")
    time.sleep(1.0)
    browser.execute_script("document.activeElement && document.activeElement.blur()")
    for _ in range(15):  # Tab until a sidebar page link has the focus
        ActionChains(browser).send_keys(Keys.TAB).perform()
        time.sleep(0.1)
        if browser.execute_script("return document.activeElement.dataset.testid") == "stSidebarNavLink":
            break
    ring = browser.execute_script(
        "const s = getComputedStyle(document.activeElement);"
        "return [document.activeElement.dataset.testid, s.outlineStyle, s.outlineWidth, s.outlineColor]"
    )
    assert ring == ["stSidebarNavLink", "solid", "3px", "rgb(62, 123, 250)"]  # brand.FOCUS_RING


@pytest.mark.parametrize("path", person_page_names())
def test_each_page_of_a_person_has_an_outline_of_headings(app_url, browser, store, make_user, firestore_client, path):
    browser.get(f"{app_url}/{path}?t={_person(store, make_user, firestore_client)}")
    # the overview's To re-check has a link to itself only when there are answers to re-check: test_browser checks
    # its link scrolls there
    _outline(browser, PAGES[path])


def _outline(browser, shown: str) -> list[list]:
    """The page's headings once ``shown`` is drawn, checked: one h1 first, no level skipped, no heading adding a
    tab stop linking to itself."""
    wait_for_text(browser, shown)
    time.sleep(1.5)  # the page's own headings (the menu names the page sooner), read once its title is drawn
    headings = wait_for(
        lambda: (found := browser.execute_script(HEADINGS)) and found[0][0] == 1 and found, 30, "the page's headings"
    )
    levels = [level for level, *_ in headings]
    assert levels[0] == 1 and levels.count(1) == 1, headings
    assert all(later <= earlier + 1 for earlier, later in zip(levels, levels[1:], strict=False)), headings
    assert [anchor for _, anchor, links, _ in headings if links] == [], headings
    return headings


def test_a_managers_pages_have_an_outline_of_headings(app_url, browser, firestore_client, organisation):
    token = LinkSigner(LinkRecords(firestore_client)).issue(
        organisation["manager"], kind="manager", org_id=organisation["org"]
    )
    browser.get(link_url(app_url, token))
    wait_for_text(browser, "Gone quiet")  # the page's last section: every heading drawn
    team = [(level, text) for level, _, _, text in _outline(browser, "Browser Org: team progress")]
    sections = {text for level, text in team if level == 2}
    assert {"People", "Decision tiers", "Mapped by category", "What holds people back", "Gone quiet"} <= sections, team
    go_to(browser, "Blockers")
    _outline(browser, "Blockers across the organisation")


def test_review_controls_each_name_their_factor_to_assistive_technology(
    app_url,
    browser,
    store,
    make_user,
    firestore_client,
):
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By

    browser.get(f"{app_url}/review?t={_person(store, make_user, firestore_client)}")
    wait_for_text(browser, "Save correction to Sensor and machine data")

    def named(selector: str, count: int) -> list[str]:
        """The accessible names of what ``selector`` finds, once there are at least ``count`` of them (read again
        when one is redrawn while its name is read)."""

        def names() -> list[str] | None:
            try:
                found = [element.accessible_name for element in browser.find_elements(By.CSS_SELECTOR, selector)]
            except StaleElementReferenceException:
                return None
            return found if len(found) >= count else None

        return wait_for(names, 30, f"{count} of {selector}")

    names = named("[data-testid=stMain] button", 6)
    # a slider's name is its label twice over (Streamlit names both the group and its input): it holds the factor
    sliders = named("[data-testid=stSlider] input[type=range]", 3)
    boxes = named("[data-testid=stMain] input[type=text]", 3)
    factors = ("Data quality", "Sensor and machine data", "Machine learning expertise")
    for factor in factors:
        assert f"Confirm {factor}" in names and f"Save correction to {factor}" in names, names
        assert sum(f"Correct value for {factor}" in slider for slider in sliders) == 1, sliders
        assert f"Why correct {factor}? (a short reason)" in boxes, boxes
    assert len(set(names)) == len(names) == 6, names
