"""In a real browser, on the emulators with the deployed trigger: a person answers, sees what was understood under
the answer within the page's wait, confirms one line (with the keyboard) and corrects another, and the overview
shows both as theirs; on a desktop and on a 390 px phone."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from test_browser import (
    DESKTOP,
    PHONE,
    choose,
    element,
    press,
    serve_app,
    shoot,
    type_into,
    wait_for_text,
)

from factor_journal.catalog import Level
from factor_journal.links import LinkSigner
from factor_journal.models import InferenceStatus, UserProfile
from factor_journal.repositories.links import LinkRecords
from factor_journal.store import FactorJournalStore
from waiting import wait_for, wait_for_analysis

pytestmark = [pytest.mark.browser, pytest.mark.functions]

# Read as two factors (data quality, machine-learning expertise) whichever question it answers.
ANSWER = (
    "The reports are full of duplicates and errors. Also, nobody here knows machine learning; "
    "we have no data scientists."
)


@pytest.fixture(scope="module")
def live_app_url() -> Iterator[str]:
    """The app on the emulator's default database, where the deployed trigger analyses every answer."""
    with serve_app("(default)") as url:
        yield url


def _lines(driver) -> list[str]:
    """The keys of the say-back lines on the page (``sayback-<turn>-<factor>``)."""
    script = (
        "return Array.from(document.querySelectorAll('[class*=\"st-key-sayback-\"]'))"
        ".map(e => Array.from(e.classList).find(c => c.startsWith('st-key-sayback-')).slice(15));"
    )
    return list(dict.fromkeys(driver.execute_script(script)))


def _answer_as_someone_new(driver, app_url: str, store: FactorJournalStore, prefix: str) -> tuple[str, str]:
    """A new person opens the conversation through their link and sends ``ANSWER``; returns (user, session)."""
    from selenium.webdriver.common.keys import Keys

    user = f"{prefix}-{datetime.now(UTC):%H%M%S%f}"
    store.register_user(UserProfile(user_id=user, display_name="Sam Sayback"))
    session = store.start_session(user)
    driver.get(f"{app_url}/conversation?t={LinkSigner(LinkRecords(store.client)).issue(user, session)}")
    wait_for_text(driver, "Continue the conversation")
    type_into(driver, '[data-testid="stChatInput"] textarea', ANSWER + Keys.ENTER, "the answer box", 45)
    return user, session


def _answer_id(store: FactorJournalStore, user: str, session: str) -> str | None:
    """The id of the person's answer in the session, once the page has written it."""
    return next((tid for tid, data in store.session_turns(user, session) if data.get("role") == "user"), None)


def _announcements(driver) -> list[str]:
    """What the page has put up to be read out by a screen reader now (alerts drawn nowhere)."""
    from selenium.webdriver.common.by import By

    found = driver.find_elements(By.CSS_SELECTOR, '[data-testid="fj-announcement"][role="alert"]')
    return [element.get_attribute("textContent") for element in found]


def _button(key: str) -> str:
    """The say-back button keyed ``key`` (a CSS selector, for ``element`` and ``press``)."""
    return f".st-key-{key} button"


@pytest.mark.parametrize("width", [DESKTOP, PHONE])
def test_a_person_confirms_one_reading_and_corrects_another_in_the_conversation(
    live_app_url,
    browser,
    trigger_client,
    catalog,
    width,
    tmp_path,
):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    store = FactorJournalStore(trigger_client, catalog)
    browser.set_window_size(width, 1000)
    user, session = _answer_as_someone_new(browser, live_app_url, store, f"sayback-{width}")
    answer = wait_for(lambda: _answer_id(store, user, session), 30, "the answer saved")
    wait_for_analysis(store, user, session, answer)  # the trigger's analysis, or the sweep's if its delivery was lost
    wait_for(lambda: len(_lines(browser)) >= 2, 60, "what was understood, under the answer")
    first, second = _lines(browser)[:2]
    first_factor, second_factor = (key.rsplit("-", 1)[1] for key in (first, second))
    # the question after the answer follows from what was understood: never one of the factors it just settled
    after = element(
        browser,
        lambda: next(reversed(browser.find_elements(By.CSS_SELECTOR, '[data-testid="stChatMessage"]')), None),
        "the question after the answer",
    ).text
    for heard in (first_factor, second_factor):
        assert not any(question in after for question in catalog.factor(heard).elicitation_questions), after
    body = wait_for_text(browser, "That's right")
    assert catalog.factor(first_factor).name in body and catalog.factor(second_factor).name in body
    # what was understood, and the next question, are read out to a screen reader (shown nowhere else)
    [heard] = _announcements(browser)
    assert heard.startswith("Understood from your answer: ") and "Next question: " in heard, heard
    assert all(catalog.factor(f).name in heard for f in (first_factor, second_factor)), heard
    shoot(browser, "conversation", width, tmp_path)

    # with the keyboard: the button focused, Enter pressed (WebDriver focuses an element before its keys)
    type_into(browser, _button(f"ok-{first}"), Keys.ENTER, "That's right")
    wait_for_text(browser, "You confirmed it")
    decided = wait_for(lambda: [a for a in _announcements(browser) if a.startswith("Thanks: ")], 20, "the decision")
    assert catalog.factor(first_factor).name in decided[0]  # read out, as the toast is not

    press(browser, _button(f"fix-{second}"), "Not quite")
    wait_for_text(browser, f"What is right for {catalog.factor(second_factor).name}?")
    shown_band = catalog.band(second_factor, store.factor(user, second_factor).current_value or 0).value
    other = "high" if shown_band != "high" else "low"
    # the question renders before its choices and its button: wait for each element itself, and for the choice to
    # hold before Save (a tap while the form is redrawn was lost once, and Save then asked for a level)
    option_path = f"//div[@data-testid='stRadio']//label[.//p[normalize-space()='{other}']]"
    choose(browser, lambda: next(iter(browser.find_elements(By.XPATH, option_path)), None), f"the choice {other!r}")
    save_path = "//button[.//p[normalize-space()='Save']]"
    press(browser, lambda: next(iter(browser.find_elements(By.XPATH, save_path)), None), "the Save button")
    wait_for_text(browser, f"You corrected it: {catalog.factor(second_factor).name} is {other}.")

    assert store.factor(user, first_factor).inference_status == InferenceStatus.confirmed
    corrected = store.factor(user, second_factor)
    assert corrected.inference_status == InferenceStatus.user_provided
    assert corrected.current_value == catalog.level_value(second_factor, Level(other))

    # The notice of the last decision may lie over the menu for a moment: click the menu's link itself.
    overview = '[data-testid="stSidebarNavLink"][href$="/overview"]'
    link = element(browser, overview, "the menu's link to the overview", shown=False)  # in a closed menu on a phone
    browser.execute_script("arguments[0].click();", link)
    body = wait_for_text(browser, "What we know")
    assert "sure · confirmed" in body and "sure · yours" in body  # both stand as the person's own


class _OneReading:
    """A reader that finds data quality low in any answer (the test decides when the analysis happens)."""

    name = "browser-test-reader"

    def extract(self, request):  # type: ignore[no-untyped-def]
        from factor_journal.extraction.base import ExtractionResult

        reading = {"factor_id": "data_quality", "value": 20, "confidence": 0.7, "rationale": "duplicates and errors"}
        return ExtractionResult(raw_updates=[reading], extractor=self.name)


def test_an_answer_analysed_after_the_pages_first_wait_shows_what_was_understood_by_itself(
    app_url,  # on fj-tests, where no trigger listens: the test analyses the answer when it chooses
    browser,
    firestore_client,
    catalog,
):

    from factor_journal.pipeline import TurnProcessor
    from factor_journal.settings import Settings

    store = FactorJournalStore(firestore_client, catalog)
    user, session = _answer_as_someone_new(browser, app_url, store, "late")
    wait_for_text(browser, "Check again")  # the page's first wait is over: the answer is not analysed yet
    answer = _answer_id(store, user, session)
    assert not _lines(browser)

    TurnProcessor(store, _OneReading(), config=Settings()).process(user, session, answer)  # a late analysis
    wait_for(lambda: _lines(browser), 30, "what was understood, shown without the person doing anything")
    assert "Data quality" in wait_for_text(browser, "That's right")


class _TwoReadings:
    """A reader that finds data quality low and machine-learning expertise low in any answer."""

    name = "browser-test-two-readings"

    def extract(self, request):  # type: ignore[no-untyped-def]
        from factor_journal.extraction.base import ExtractionResult

        readings = [
            {"factor_id": "data_quality", "value": 20, "confidence": 0.7, "rationale": "duplicates and errors"},
            {"factor_id": "ml_expertise", "value": 10, "confidence": 0.7, "rationale": "no data scientists"},
        ]
        return ExtractionResult(raw_updates=readings, extractor=self.name)


def test_each_say_back_button_is_named_for_its_factor_to_assistive_technology(
    app_url,
    browser,
    firestore_client,
    catalog,
    tmp_path,
):
    """Two readings under one answer: a screen reader or keyboard user hears four buttons with four names, each
    naming its factor (the accessible name Chromium computes for the button), and sees the same words."""
    from selenium.webdriver.common.by import By

    from factor_journal.pipeline import TurnProcessor
    from factor_journal.settings import Settings

    store = FactorJournalStore(firestore_client, catalog)
    user, session = _answer_as_someone_new(browser, app_url, store, "named")
    wait_for_text(browser, "Check again")
    answer = _answer_id(store, user, session)
    TurnProcessor(store, _TwoReadings(), config=Settings()).process(user, session, answer)
    wait_for(lambda: len(_lines(browser)) == 2, 30, "both readings said back")

    names = {}
    for factor in ("data_quality", "ml_expertise"):
        for action in ("ok", "fix"):
            button = element(browser, f".st-key-{action}-{answer}-{factor} button", f"{action} for {factor}")
            names[action, factor] = (button.accessible_name, button.find_element(By.CSS_SELECTOR, "p").text)
    quality, expertise = catalog.factor("data_quality").name, catalog.factor("ml_expertise").name
    assert names["ok", "data_quality"][0] == f"That's right: {quality} is low"
    assert names["ok", "ml_expertise"][0] == f"That's right: {expertise} is low"
    assert names["fix", "data_quality"][0] == f"Not quite: {quality}"
    assert names["fix", "ml_expertise"][0] == f"Not quite: {expertise}"
    assert all(name == text for name, text in names.values())  # what is heard is what is seen (the icon is hidden)
    cut = (
        "return Array.from(document.querySelectorAll('[class*=\"st-key-sayback-\"] button p'))"
        ".filter(p => [p, p.parentElement].some(e => e.scrollWidth > e.clientWidth + 1))"
        ".map(p => p.textContent);"
    )
    for width in (DESKTOP, PHONE):  # the longer labels are read whole, side by side or stacked on a phone
        browser.set_window_size(width, 1000)
        time.sleep(1.0)
        assert browser.execute_script(cut) == [], width  # wrapped, never cut with an ellipsis
        shoot(browser, "conversation-named-buttons", width, tmp_path)
