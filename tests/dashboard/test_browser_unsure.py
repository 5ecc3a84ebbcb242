"""In a real browser, on the emulators: three answers the reader was unsure about, each ending with the reading on
the overview as the person's, on a desktop and on a 390 px phone:

* an answer nothing was understood from: the person picks the factor and its level in two clicks (the first by
  keyboard);
* a torn reading: its question is the next question, and one click answers it;
* an answer set aside wrongly ("about another organisation"): "It was about us" has it read again, and the person
  confirms what was read.

The app runs on a database no trigger listens to, so the test analyses each answer itself, with a scripted model,
when it chooses (the deployed trigger that reads a lifted answer is tested in tests/test_trigger.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from test_browser import DESKTOP, PHONE, element, press, shoot, type_into, wait_for_text
from test_unsure_page import CONTROLLER, SISTER, TORN, Unsure

from factor_journal.documents import ScreenLift
from factor_journal.links import LinkSigner
from factor_journal.models import InferenceStatus, UserProfile
from factor_journal.pipeline import TurnProcessor
from factor_journal.repositories.links import LinkRecords
from factor_journal.store import FactorJournalStore
from waiting import wait_for

pytestmark = pytest.mark.browser


def _send(driver, text: str) -> None:
    from selenium.webdriver.common.keys import Keys

    type_into(driver, '[data-testid="stChatInput"] textarea', text + Keys.ENTER, "the answer box", 45)


def _analyse(store: FactorJournalStore, user: str, session: str, text: str) -> str:
    """Once the answer ``text`` is written, analyse it (as the trigger would); its turn id."""
    found = wait_for(
        lambda: [tid for tid, d in store.session_turns(user, session) if d.get("text") == text], 30, f"{text!r}"
    )
    TurnProcessor(store, Unsure()).process(user, session, found[-1])
    return found[-1]


def _button(key: str) -> str:
    """The button keyed ``key`` (a CSS selector, for ``element`` and ``press``)."""
    return f".st-key-{key} button"


@pytest.mark.parametrize("width", [DESKTOP, PHONE])
def test_three_answers_the_reader_was_unsure_about_end_as_the_persons_readings(
    app_url,  # the app on a database no trigger listens to
    browser,
    firestore_client,
    catalog,
    width,
    tmp_path,
):
    from selenium.webdriver.common.keys import Keys

    store = FactorJournalStore(firestore_client, catalog)
    browser.set_window_size(width, 1000)
    user = f"unsure-{width}-{datetime.now(UTC):%H%M%S%f}"
    store.register_user(UserProfile(user_id=user, display_name="Una Unsure"))
    session = store.start_session(user)
    browser.get(f"{app_url}/conversation?t={LinkSigner(LinkRecords(store.client)).issue(user, session)}")
    wait_for_text(browser, "Continue the conversation")

    # 1. Nothing understood: factor and level in two clicks, the first with the keyboard
    _send(browser, CONTROLLER)
    about = _analyse(store, user, session, CONTROLLER)
    wait_for_text(browser, "This was about…", 60)
    factor = element(browser, _button(f"about-{about}-data_quality"), "the factor's button", 30)
    assert factor.accessible_name == "It was about Data quality"  # named for a screen reader as it reads
    browser.execute_script("arguments[0].focus();", factor)
    factor.send_keys(Keys.ENTER)
    low = element(browser, _button(f"about-{about}-data_quality-low"), "the level's button", 30)
    assert low.accessible_name == f"Data quality is low: {catalog.factor('data_quality').rubric.low}"
    shoot(browser, "conversation-this-was-about", width, tmp_path)
    press(browser, _button(f"about-{about}-data_quality-low"), "Data quality is low")
    wait_for_text(browser, "You told us: Data quality is low.")

    # 2. Torn: the question under the answer is the next question, and one click answers it
    _send(browser, TORN)
    torn = _analyse(store, user, session, TORN)
    wait_for_text(browser, "(Data governance)?", 60)
    asked = store.session_turns(user, session)[-1][1]
    assert asked["role"] == "assistant" and asked["text"].endswith("(Data governance)?")  # the next question
    # under the answer, and asked after it (the page draws the line under the answer before the question after it)
    wait_for(lambda: element(browser, "body", "the page").text.count(asked["text"]) >= 2, 30, "the question, twice")
    press(browser, _button(f"torn-{torn}-1"), "It is about Data governance")
    wait_for_text(browser, "You told us: Data governance is low.")
    last = store.session_turns(user, session)[-1][1]
    assert last["role"] == "assistant" and "(Data governance)?" not in last["text"]  # the conversation moved on

    # 3. Set aside wrongly: "It was about us" has it read again; the person confirms what was read
    _send(browser, SISTER)
    sister = _analyse(store, user, session, SISTER)
    wait_for_text(browser, "it is about another organisation", 60)
    press(browser, _button(f"lift-{sister}"), "It was about us")
    wait_for(lambda: ScreenLift.of(store.turn_data(user, session, sister)), 30, "the lift, recorded")
    TurnProcessor(store, Unsure()).process(user, session, sister)  # what its trigger does
    wait_for_text(browser, "it was read again", 60)
    press(browser, _button(f"ok-{sister}-data_infrastructure"), "That's right")
    wait_for_text(browser, "You confirmed it: Data infrastructure is low.")
    shoot(browser, "conversation-unsure", width, tmp_path)

    assert store.factor(user, "data_quality").inference_status == InferenceStatus.user_provided
    assert store.factor(user, "data_governance").inference_status == InferenceStatus.user_provided
    assert store.factor(user, "data_infrastructure").inference_status == InferenceStatus.confirmed
    overview = '[data-testid="stSidebarNavLink"][href$="/overview"]'
    link = element(browser, overview, "the menu's link to the overview", shown=False)  # in a closed menu on a phone
    browser.execute_script("arguments[0].click();", link)
    wait_for_text(browser, "What we know")

    def listed() -> str | None:  # the heading draws before the answers under it
        body = element(browser, "body", "the page").text
        return body if body.count("sure · yours") == 2 and "sure · confirmed" in body else None

    body = wait_for(listed, 45, "the three answers, two yours and one confirmed")  # all three the person's own
    for name in ("Data quality", "Data governance", "Data infrastructure"):
        assert name in body
