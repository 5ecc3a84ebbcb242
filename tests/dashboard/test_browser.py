"""A real browser: headless Chromium opens every page from a resume link and a manager link, on a
desktop and at 390 px wide, and checks what a person reads (issue 11), not only that pages load.

The Streamlit server runs as it does in ``make demo`` (with the repository's .streamlit/config.toml),
against the emulator; the screenshots in docs/ (shown in the README) are refreshed with
FJ_UPDATE_SCREENSHOT=1.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from factor_journal import freshness
from factor_journal.links import LinkSigner, link_url
from factor_journal.models import InferredUpdate
from factor_journal.page_models import shown_value
from factor_journal.repositories.links import LinkRecords
from factor_journal_tools.browser import free_port, headless_chromium, wait_until_serving
from waiting import wait_for

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def serve_app(database: str) -> Iterator[str]:
    """The app on a free port, reading the emulator's ``database``; its address (skips without Chromium)."""
    if not browser_installed():
        pytest.skip("chromium and chromedriver are not installed (make test installs them on Debian as root)")
    port = free_port()
    env = {**os.environ, "FJ_FIRESTORE_DATABASE": database}
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "dashboard.serve",  # as the Dockerfile starts it
            "--server.headless",
            "true",
            "--server.port",
            str(port),
            "--browser.gatherUsageStats",
            "false",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        if not wait_until_serving(url):
            pytest.fail("the Streamlit server did not start within 60 s")
        yield url
    finally:
        server.terminate()
        server.wait(timeout=20)


def browser_installed() -> bool:
    return bool(shutil.which("chromium") and shutil.which("chromedriver"))


class Chromium:
    """One headless Chromium for many tests (starting one takes seconds): each test gets it as a new visitor opens
    a browser (``fresh``: a blank page, no cookies or stored data, the default window and colour scheme), and a new
    one is started when the last has died."""

    def __init__(self) -> None:
        self.driver: Any = None

    def fresh(self, width: int = 1400, height: int = 1000) -> Any:
        from selenium.common.exceptions import WebDriverException

        if self.driver is not None:
            try:
                self.forget()
            except WebDriverException:  # it died with the last test: start another
                self.quit()
        if self.driver is None:
            self.driver = headless_chromium(width, height)
        self.driver.set_window_size(width, height)
        return self.driver

    def forget(self) -> None:
        """Leave the page (its scripts stop polling) and forget everything a visit kept: stored data, cookies, an
        emulated colour scheme."""
        driver = self.driver
        if driver.current_url.startswith("http"):
            driver.execute_script("window.localStorage.clear(); window.sessionStorage.clear();")
        driver.get("about:blank")
        driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "", "features": []})

    def quit(self) -> None:
        if self.driver is not None:
            try:
                self.driver.quit()
            finally:
                self.driver = None


def wait_for_text(driver, needle: str, timeout: float = 45.0) -> str:
    """The page's text once it holds ``needle`` (polled); an AssertionError with what the page said otherwise."""
    from selenium.webdriver.common.by import By

    deadline = time.monotonic() + timeout
    body = ""
    while time.monotonic() < deadline:
        body = _text_of(driver.find_elements(By.TAG_NAME, "body"))
        if needle in body:
            return body
        time.sleep(0.5)
    raise AssertionError(f"{needle!r} did not appear; the page said:\n{body[:2000]}")


def _text_of(found: list) -> str:
    """The text of the first of ``found`` ("" when there is none, or it was redrawn as it was read)."""
    from selenium.common.exceptions import StaleElementReferenceException

    try:
        return found[0].text if found else ""
    except StaleElementReferenceException:
        return ""


def _not_yet() -> tuple[type[Exception], ...]:
    """What a browser step waits out: the element is not drawn yet, being redrawn, covered or not usable yet."""
    from selenium.common.exceptions import (
        ElementClickInterceptedException,
        ElementNotInteractableException,
        NoSuchElementException,
        StaleElementReferenceException,
    )

    return (
        ElementClickInterceptedException,
        ElementNotInteractableException,
        NoSuchElementException,
        StaleElementReferenceException,
    )


Locator = str | Callable[[], Any]
"""A CSS selector, or a function returning the element (None while there is none)."""


def _usable(driver, locate: Locator, shown: bool = True) -> Any:
    """The element ``locate`` finds if it is there, enabled and (``shown``) displayed now; None otherwise."""
    from selenium.webdriver.common.by import By

    try:
        found = next(iter(driver.find_elements(By.CSS_SELECTOR, locate)), None) if isinstance(locate, str) else locate()
        if found is None or not found.is_enabled() or (shown and not found.is_displayed()):
            return None
        return found
    except _not_yet():
        return None


# While a run of the app is under way Streamlit keeps the previous run's elements on the page, marked stale, and
# removes those the run did not draw again when it ends: everything below them moves up.  Its status widget shows a
# running icon meanwhile.
_RUN_UNDER_WAY = (
    '[data-testid="stElementContainer"][data-stale="true"], '
    '[data-testid="stStatusWidgetRunningIcon"], [data-testid="stStatusWidgetRunningManIcon"]'
)


def settled(driver) -> bool:
    """True when no run of the app is under way in the page (no stale element left to remove, no running icon): what
    is drawn stays where it is until the person acts.  A tap taken while a run is under way can land on the
    neighbour that moves into its place when the stale elements go."""
    return not driver.execute_script(f"return document.querySelector({_RUN_UNDER_WAY!r}) !== null;")


def element(driver, locate: Locator, what: str, timeout: float = 20.0, *, shown: bool = True) -> Any:
    """The element ``locate`` finds, once it is present and can be used (enabled, and displayed unless ``shown`` is
    False: an element a script clicks, such as a link in the menu a phone keeps closed), looked up again while it is
    not drawn yet or being redrawn; an AssertionError naming ``what`` after ``timeout``.

    Every browser step that acts on an element finds it here (or through ``press`` and ``type_into``, which wait the
    same way): a bare ``find_element`` right after waiting on something else fails whenever the page draws that
    element a moment later (``tests/test_browser_steps.py`` refuses one)."""
    return wait_for(lambda: _usable(driver, locate, shown), timeout, what)


def press(driver, find: Locator, what: str, timeout: float = 20.0) -> None:
    """Click what ``find`` locates (as ``element`` does), as a person taps what they see: once it is drawn and
    usable and the page has ``settled`` (no run under way that could still move it), scrolled to the middle of the
    screen (not left under the fixed answer box or a notice at the bottom, where WebDriver scrolls it), and tried
    again while it is being redrawn or still covered; an AssertionError naming ``what`` after ``timeout``."""

    def click() -> bool:
        found = _usable(driver, find)
        if found is None or not settled(driver):
            return False
        try:
            driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", found)
            found.click()
        except _not_yet():
            return False
        return True

    wait_for(click, timeout, what)


def choose(driver, find_label: Locator, what: str, timeout: float = 20.0) -> None:
    """Pick the radio choice whose label ``find_label`` locates, as ``press`` taps it, and wait until the page holds
    it chosen (its radio input checked).  A tap on a choice the page is redrawing at that moment is lost with the old
    drawing, so the choice is looked at again and tapped again until it holds: what the next step relies on is
    checked, never assumed.  An AssertionError naming ``what`` after ``timeout``."""
    from selenium.webdriver.common.by import By

    def chosen() -> bool:
        label = _usable(driver, find_label)
        if label is None or not settled(driver):
            return False
        try:
            radios = label.find_elements(By.CSS_SELECTOR, "input[type='radio']")
            if radios and radios[0].is_selected():
                return True
            driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", label)
            label.click()
        except _not_yet():
            pass
        return False  # the tap's effect is read on the next look

    wait_for(chosen, timeout, what)


def type_into(driver, find: Locator, text: str, what: str, timeout: float = 20.0) -> None:
    """Type ``text`` into what ``find`` locates (as ``element`` does) once it is drawn and usable, looked up again
    if it is redrawn before the keys reach it (a stale element takes no key, so nothing is typed twice); an
    AssertionError naming ``what`` after ``timeout``."""

    def typed() -> bool:
        found = _usable(driver, find)
        if found is None:
            return False
        try:
            found.send_keys(text)
        except _not_yet():
            return False
        return True

    wait_for(typed, timeout, what)


DESKTOP, LAPTOP, PHONE = 1400, 1024, 390
SHOTS = {  # screenshots kept in docs/ (FJ_UPDATE_SCREENSHOT=1) and shown in the README
    ("overview", DESKTOP): "overview.png",
    ("overview", PHONE): "overview-phone.png",
    ("overview-stale", DESKTOP): "overview-stale.png",
    ("overview-stale", PHONE): "overview-stale-phone.png",
    ("history", DESKTOP): "history.png",
    ("team", DESKTOP): "team.png",
    ("team", PHONE): "team-phone.png",
    ("team-dark", DESKTOP): "team-dark.png",
    ("conversation", DESKTOP): "conversation.png",
    ("conversation", PHONE): "conversation-phone.png",
}


def go_to(driver, label: str) -> None:
    """Open a page from the sidebar (opening the sidebar first when it is collapsed, as on a phone)."""
    from selenium.webdriver.common.by import By

    def links():
        return [
            e for e in driver.find_elements(By.CSS_SELECTOR, '[data-testid="stSidebarNavLink"]') if e.is_displayed()
        ]

    if not links():
        press(driver, '[data-testid="stExpandSidebarButton"]', "the menu")
        time.sleep(0.8)
    press(driver, lambda: next((e for e in links() if (e.text.strip().splitlines() or [""])[-1] == label), None), label)


CHARTS_DRAWN = (  # every plotly chart on the page has drawn its plot area
    "return Array.from(document.querySelectorAll('.js-plotly-plot'))"
    ".every(chart => { const svg = chart.querySelector('.main-svg');"
    " return svg && svg.getBoundingClientRect().width > 0 })"
)


def shoot(driver, name: str, width: int, tmp_path: Path) -> None:
    """A full-page screenshot, taken once the page's charts have drawn; kept in docs/ when it is one of SHOTS and
    FJ_UPDATE_SCREENSHOT is set (a kept one also waits a moment for the charts to redraw at the page's full height)."""
    kept = SHOTS.get((name, width)) if os.environ.get("FJ_UPDATE_SCREENSHOT") else None
    wait_for(lambda: driver.execute_script(CHARTS_DRAWN), 20, "the charts drawn")
    height = driver.execute_script(
        "return Math.max(document.body.scrollHeight, ...Array.from(document.querySelectorAll("
        "'[data-testid=stMain], [data-testid=stMainBlockContainer]')).map(e => e.scrollHeight))"
    )
    driver.set_window_size(width, min(max(height + 120, 900), 7000))
    if kept:
        time.sleep(1.0)
    shot = tmp_path / f"{name}-{width}.png"
    driver.save_screenshot(str(shot))
    assert shot.stat().st_size > 10_000
    driver.set_window_size(width, 1000)
    if kept:
        shutil.copy(shot, ROOT / "docs" / kept)


def tick_labels(driver, axis: str) -> list[str]:
    """The tick labels plotly drew on every chart's ``axis`` ("xtick" or "ytick"), read in one script call: plotly
    redraws a chart while the page settles, and elements found one call earlier can be gone by the next."""
    script = (
        "return Array.from(document.querySelectorAll(arguments[0]))"
        ".map(e => e.textContent.trim()).filter(t => t.length > 0);"
    )
    return list(driver.execute_script(script, f"g.{axis} text"))


def cut_labels(driver) -> list[str]:
    """Short texts on the page (labels, toggles, metric names) drawn narrower than they are: cut off, or ending
    in an ellipsis, so a reader cannot read them whole."""
    script = (
        "return [...document.querySelectorAll("
        "'[data-testid=stMain] label, [data-testid=stMain] [data-testid=stMarkdownContainer]')]"
        ".filter(e => e.textContent.trim() && e.textContent.length < 60 && e.scrollWidth > e.clientWidth + 1"
        " && getComputedStyle(e).overflow != 'visible').map(e => e.textContent.trim())"
    )
    return driver.execute_script(script)


def ticks_not_drawn_whole(driver) -> list[str]:
    """x tick labels a chart does not show whole: plotly hides a label that would run past the edge of its chart
    (``display: none``: gone, such as the last day's on a narrow chart), or one is drawn past that edge."""
    script = (
        "return [...document.querySelectorAll('.js-plotly-plot')].flatMap(chart => {"
        " const box = chart.getBoundingClientRect();"
        " return [...chart.querySelectorAll('g.xtick text')].filter(e => {"
        "  const r = e.getBoundingClientRect();"
        "  return getComputedStyle(e).display == 'none' || r.left < box.left - 0.5 || r.right > box.right + 0.5;"
        " }).map(e => e.textContent.trim());"
        "})"
    )
    return driver.execute_script(script)


def table_overflow(driver) -> list | None:
    """Whether the team table is wider than its frame (scrolls sideways), whether the cue above it that says so is
    shown, and the grid's whole and shown widths; None before the table is drawn."""
    script = (
        "const grid = document.querySelector('[data-testid=stDataFrame] .dvn-scroller');"
        "const cue = document.querySelector('.st-key-team-narrow-cue');"
        "if (!grid || !cue || !grid.clientWidth) return null;"
        "const shown = getComputedStyle(cue).display != 'none' && cue.offsetHeight > 0;"
        "return [grid.scrollWidth > grid.clientWidth + 1, shown, grid.scrollWidth, grid.clientWidth]"
    )
    return driver.execute_script(script)


def assert_product_chrome(driver, title: str) -> None:
    """Item 7: the page's own browser title and favicon, no Deploy button, no developer menu."""
    from selenium.webdriver.common.by import By

    deadline = time.monotonic() + 10
    while driver.title != f"{title} · Factor Journal" and time.monotonic() < deadline:
        time.sleep(0.2)
    assert driver.title == f"{title} · Factor Journal"
    assert not driver.find_elements(By.CSS_SELECTOR, '[data-testid="stAppDeployButton"], [data-testid="stMainMenu"]')
    icon = driver.execute_script("return document.querySelector(\"link[rel~='icon']\").href")
    assert "/media/" in icon or icon.startswith("data:image/png")  # the app's own favicon, not Streamlit's


@pytest.fixture
def organisation(store, make_user):
    """Anna (talked on several days), Nils (never active) and their manager, with a week of the organisation's daily
    figures (none recorded yesterday)."""
    from factor_journal.organisation import OrganisationDirectory

    directory = OrganisationDirectory(store)
    org = f"org-browser-{make_user(store)}"
    directory.create(org, "Browser Org")
    anna = make_user(store, org_id=org, display_name="Anna Berg", email="anna@example.com")
    now = datetime.now(UTC)
    for factor, value, confidence, days_ago, why in [
        ("data_governance", 15, 0.7, 20, "No data catalog, nobody owns the data"),
        ("sensor_data", 60, 0.8, 10, "Telemetry from the newest presses"),
        ("data_quality", 20, 0.75, 6, "Data scattered across 5 systems"),
        ("data_quality", 35, 0.8, 1, "They started deduplicating customers"),
    ]:
        store.record_inference(
            anna,
            InferredUpdate(
                factor_id=factor,
                value=value,
                confidence=confidence,
                rationale=why,
                conversation_excerpt=f"User: {why}",
                session_id="kickoff",
                observed_at=now - timedelta(days=days_ago),
            ),
        )
    nils = make_user(store, org_id=org, display_name="Nils Never", email="nils@example.com")  # his row: at once
    manager = make_user(store, org_id=org, display_name="Maria Manager")
    directory.assign_manager(org, manager)
    for days_ago in (7, 6, 5, 4, 3, 2, 0):  # a week: on a phone the progress chart's day labels lie slanted
        directory.record_day(org, now - timedelta(days=days_ago))
    return {"org": org, "anna": anna, "nils": nils, "manager": manager}


def test_a_person_reads_every_page_on_a_desktop_and_a_phone(
    app_url, browser, store, organisation, firestore_client, tmp_path
):
    anna = organisation["anna"]
    token = LinkSigner(LinkRecords(firestore_client)).issue(anna, "kickoff")
    summary = store.summary(anna)
    governance = summary.factors["data_governance"]
    fresh = freshness.assess(store.catalog, store.graph, summary, datetime.now(UTC))  # how sure is today's
    aged = {fid: item.confidence for fid, item in fresh.factors.items()}
    for width in (DESKTOP, PHONE):
        browser.set_window_size(width, 1000)
        browser.get(link_url(app_url, token))
        # 1. What we know, on the overview: each factor's name, band and value, confidence, status, when said
        tier = fresh.summary.overall.decision_tier_name
        for expected in (
            "Where are we",
            f"{summary.overall.completeness:.0%}",
            tier,
            "What we know",
            "Data readiness · 3 of",
            f"Data governance: low (15) · {aged['data_governance']:.0%} sure (was 70%) · unconfirmed · "
            f"said {governance.observed_at:%d %b %Y}",
            f"Sensor and machine data: mid (60) · {aged['sensor_data']:.0%} sure",
            "Review the 3 unconfirmed",
        ):
            wait_for_text(browser, expected)
        assert "None" not in wait_for_text(browser, "What we know")
        assert_product_chrome(browser, "Where are we")
        shoot(browser, "overview", width, tmp_path)
        # ... the unconfirmed ones one click from Review
        from selenium.webdriver.common.by import By

        press(
            browser,
            lambda: next(
                (
                    e
                    for e in browser.find_elements(By.CSS_SELECTOR, '[data-testid="stPageLink-NavLink"]')
                    if "Review the 3 unconfirmed" in e.text
                ),
                None,
            ),
            "the link to Review",
        )
        wait_for_text(browser, "Sensor and machine data")
        wait_for_text(browser, "Confirm")
        assert_product_chrome(browser, "Review")
        # 2. Factor history: the factor changed last, plotted by day of the conversation
        go_to(browser, "Factor history")
        wait_for_text(browser, "They started deduplicating customers")
        body = wait_for_text(browser, "Data scattered across 5 systems")  # the page streams: wait for each entry
        assert "inferred from the conversation" in body
        assert_product_chrome(browser, "Factor history")
        deadline = time.monotonic() + 20
        while not tick_labels(browser, "xtick") and time.monotonic() < deadline:
            time.sleep(0.3)
        days = tick_labels(browser, "xtick")
        assert days and all(":" not in label and any(m in label for m in MONTHS) for label in days), days
        shoot(browser, "history", width, tmp_path)
        go_to(browser, "Capabilities")
        wait_for_text(browser, "Next unlocks")
        go_to(browser, "Ask why")
        wait_for_text(browser, "Your question")
        go_to(browser, "Continue the conversation")
        wait_for_text(browser, "smart_toy")  # the assistant's next question
        deadline = time.monotonic() + 20
        while not browser.find_elements(By.CSS_SELECTOR, "textarea[placeholder='Your answer']"):
            assert time.monotonic() < deadline, "the answer box did not appear"
            time.sleep(0.3)
        assert_product_chrome(browser, "Continue the conversation")


def test_a_person_whose_answers_were_said_long_ago_sees_them_to_recheck(
    app_url, browser, store, make_user, firestore_client, tmp_path
):
    """Issue 32: answers said long ago count for less, are listed to re-check with one click each, and the tier
    resting on them is announced, not dropped silently (the overview on a desktop and a phone, in docs/)."""
    olga = make_user(store, display_name="Olga Old", email="olga@example.com")
    now = datetime.now(UTC)
    chosen = [f for f in store.catalog.assessable_factors if f.category != "process_operations"][:17]
    for index, factor in enumerate(chosen):
        days_ago = 2 + index if index < 5 else 240 + 15 * index  # five this month, the others 8 to 17 months ago
        store.record_inference(
            olga,
            InferredUpdate(
                factor_id=factor.id,
                value=35 + 3 * index,
                confidence=0.75 + 0.01 * (index % 3),
                rationale=f"About {factor.name.lower()}",
                conversation_excerpt="User: …",
                session_id="kickoff",
                observed_at=now - timedelta(days=days_ago),
            ),
        )
    summary = store.summary(olga)
    fresh = freshness.assess(store.catalog, store.graph, summary, now)
    assert summary.overall.decision_tier == "low_risk" and fresh.tier_note is not None and fresh.tier_note.lapsed
    first = store.catalog.factor(fresh.tier_note.confirm[0]).name
    token = LinkSigner(LinkRecords(firestore_client)).issue(olga, "kickoff")
    for width in (DESKTOP, PHONE):
        browser.set_window_size(width, 1000)
        browser.get(link_url(app_url, token))
        for expected in (
            "Your answers reach Low-risk pilots",
            "To re-check",
            f"{first}:",
            "sure then",
            f"{first} still holds",  # each answer's buttons name it
            f"Talk about {first}",
            "to re-check: last said",
        ):
            wait_for_text(browser, expected)
        shoot(browser, "overview-stale", width, tmp_path)

    # the reminder's "Re-check them" link opens the page at the section, on a phone where it is below the fold
    # (its # fragment alone was lost with the token the app takes out of the address, and the page opened at the top)
    browser.set_window_size(PHONE, 700)
    browser.get(link_url(app_url, token, section="to-re-check"))
    wait_for_text(browser, f"{first} still holds")
    script = "const h = document.getElementById('to-re-check'); return h ? h.getBoundingClientRect().top : null"
    top = wait_for(
        lambda: (lambda y: y if y is not None and 0 <= y < 200 else None)(browser.execute_script(script)),
        20,
        "the To re-check heading scrolled to the top",
    )
    assert "t=" not in browser.current_url and "at=" not in browser.current_url, browser.current_url
    assert 0 <= top < 200


def test_review_in_a_browser_shows_a_value_changed_elsewhere_and_saves_nothing_over_it(
    app_url, browser, store, make_user, firestore_client
):
    """The slider a browser draws follows the value (Streamlit keeps a slider's state by its key): after a newer
    answer moved it, Save says nothing was saved and the slider stands at the new value, not the one read before."""
    from selenium.webdriver.common.by import By

    def answer(value: float, days_ago: int) -> None:
        store.record_inference(
            dora,
            InferredUpdate(
                factor_id="data_quality",
                value=value,
                confidence=0.75,
                rationale="About the data",
                conversation_excerpt="User: …",
                session_id="kickoff",
                observed_at=datetime.now(UTC) - timedelta(days=days_ago),
            ),
        )

    def slider() -> str | None:  # read in one script call: the slider may be redrawn between two WebDriver calls
        script = "const e = document.querySelector(arguments[0]); return e ? e.value : null"
        return browser.execute_script(script, '.st-key-value-data_quality input[type="range"]')

    dora = make_user(store, display_name="Dora Decimal")
    answer(20.7, 3)
    browser.get(f"{app_url}/review?t={LinkSigner(LinkRecords(firestore_client)).issue(dora)}")
    wait_for(lambda: slider() == "20.7", 45, "the slider at 20.7, as every page shows the value")
    answer(35, 1)  # elsewhere, while the page is open
    newer = store.factor(dora, "data_quality").current_value
    assert shown_value(newer) != 20.7
    type_into(browser, ".st-key-reason-data_quality input", "It is about right", "the reason box")
    press(
        browser,
        lambda: next(
            (e for e in browser.find_elements(By.TAG_NAME, "button") if e.text == "Save correction to Data quality"),
            None,
        ),
        "Save correction",
    )
    wait_for_text(browser, "nothing was saved")
    wait_for(lambda: slider() == f"{shown_value(newer):g}", 20, "the slider at the new value")
    state = store.factor(dora, "data_quality")
    assert (state.current_value, state.inference_status) == (newer, "unconfirmed")


MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def test_a_manager_reads_the_team_on_a_desktop_a_laptop_a_phone_and_in_dark_mode(
    app_url, browser, store, organisation, firestore_client, tmp_path
):
    from selenium.webdriver.common.keys import Keys

    signer = LinkSigner(LinkRecords(firestore_client))
    token = signer.issue(organisation["manager"], kind="manager", org_id=organisation["org"])
    today = f"{datetime.now(UTC):%d %b}"  # the progress chart's last day
    for width in (DESKTOP, LAPTOP, PHONE):
        browser.set_window_size(width, 1000)
        browser.get(link_url(app_url, token))
        for expected in (
            "Browser Org: team progress",
            "Showing all 2 people.",
            "Decision tiers",
            "Mapped by category",
            "What holds people back",
            "Progress over time",
            "Nils Never: 0% mapped, not active yet",
        ):
            wait_for_text(browser, expected)
        assert_product_chrome(browser, "Team progress")
        # the filter toggles and the metrics read whole ('To re-check (1)', 'Average confidence' at 1024 px)
        assert not cut_labels(browser), cut_labels(browser)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and (
            len(tick_labels(browser, "ytick")) < 3
            or today not in tick_labels(browser, "xtick")
            or ticks_not_drawn_whole(browser)
        ):
            time.sleep(0.3)
        # every day label whole, the last day's too (on a phone plotly hid it: slanted, it ran past the chart)
        assert today in tick_labels(browser, "xtick"), tick_labels(browser, "xtick")
        assert not ticks_not_drawn_whole(browser), ticks_not_drawn_whole(browser)
        # 3. counts are whole numbers; 4. tiers by name; 2. the progress chart on days, never times of day
        counts = [label for label in tick_labels(browser, "ytick") if label.replace(",", "").isdigit() or "." in label]
        assert counts and all("." not in label for label in counts), counts
        xs = tick_labels(browser, "xtick")
        assert "Exploratory" in xs and "exploratory" not in xs
        assert all(":" not in label for label in xs), xs
        # the team table wider than the page (a phone, a laptop with the sidebar open): the columns past its edge are
        # named above it, and only then
        scrolls, cue, whole, shown = wait_for(lambda: table_overflow(browser), 20, "the team table drawn")
        assert cue == scrolls and scrolls == (width != DESKTOP), (width, whole, shown)
        if cue:
            wait_for_text(browser, "The table scrolls sideways, the names staying in place: Mapped, Confidence, Tier")
        shoot(browser, "team", width, tmp_path)
        # 5. filters: a name search narrows the table
        type_into(browser, 'input[placeholder="Start of a name"]', "Nils" + Keys.ENTER, "the name search")
        wait_for_text(browser, "Showing 1 of 2 people.")
        go_to(browser, "Blockers")
        wait_for_text(browser, "Invest here first")
        assert_product_chrome(browser, "Blockers")

    # 7. the theme reads in dark mode too: the app's own dark background when the browser prefers dark
    browser.set_window_size(DESKTOP, 1000)
    browser.execute_cdp_cmd(
        "Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]}
    )
    browser.get(link_url(app_url, token))
    wait_for_text(browser, "Showing all 2 people.")
    background = browser.execute_script(
        "return getComputedStyle(document.querySelector('[data-testid=stApp]')).backgroundColor"
    )
    assert background == "rgb(11, 18, 32)", background
    shoot(browser, "team-dark", DESKTOP, tmp_path)


def test_the_unsubscribe_link_works_in_a_browser_without_signing_in(app_url, browser, store, organisation):
    from selenium.webdriver.common.by import By

    from factor_journal.reminders import UnsubscribeLinks

    url = UnsubscribeLinks().url(app_url, organisation["anna"])
    browser.get(url)
    body = wait_for_text(browser, "Do you want to stop the reminder emails")
    assert "Page not found" not in body and "What we know" not in body
    assert store.get_user(organisation["anna"]).reminders_opt_out is False  # opening the page only asks
    # the question's text can render a moment before its button: wait for the button itself
    press(
        browser,
        lambda: next((e for e in browser.find_elements(By.CSS_SELECTOR, "button") if "Unsubscribe" in e.text), None),
        "the Unsubscribe button",
    )
    wait_for_text(browser, "You are unsubscribed")
    assert store.get_user(organisation["anna"]).reminders_opt_out is True


def test_a_tampered_link_shows_a_message_in_the_browser(app_url, browser):
    browser.get(link_url(app_url, "not-a-real-token"))
    body = wait_for_text(browser, "not valid")
    assert "Where are we" not in body
