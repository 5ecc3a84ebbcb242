"""A real browser: headless Chromium opens the app from a resume link and reads the overview.

The Streamlit server runs as it does in ``make demo``, against the emulator;
the screenshot is kept at docs/overview.png when FJ_UPDATE_SCREENSHOT=1.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from factor_journal.links import LinkSigner, link_url
from factor_journal.models import InferredUpdate

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def app_url() -> Iterator[str]:
    if not (shutil.which("chromium") and shutil.which("chromedriver")):
        pytest.skip("chromium and chromedriver are not installed (make test installs them on Debian as root)")
    port = _free_port()
    env = {**os.environ, "FJ_FIRESTORE_DATABASE": "fj-tests"}
    server = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "dashboard" / "app.py"), "--server.headless", "true",
         "--server.port", str(port), "--browser.gatherUsageStats", "false"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{url}/_stcore/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.3)
        else:
            pytest.fail("the Streamlit server did not start within 60 s")
        yield url
    finally:
        server.terminate()
        server.wait(timeout=20)


@pytest.fixture
def browser() -> Iterator[object]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")  # type: ignore[assignment]
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-dev-shm-usage", "--window-size=1400,1000"):  # fmt: skip
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def wait_for_text(driver, needle: str, timeout: float = 45.0) -> str:
    from selenium.webdriver.common.by import By

    deadline = time.monotonic() + timeout
    body = ""
    while time.monotonic() < deadline:
        body = driver.find_element(By.TAG_NAME, "body").text
        if needle in body:
            return body
        time.sleep(0.5)
    raise AssertionError(f"{needle!r} did not appear; the page said:\n{body[:2000]}")


def test_resume_link_opens_the_overview_in_a_browser(app_url, browser, store, make_user, firestore_client, tmp_path):
    user = make_user(store, display_name="Anna Berg")
    for factor, value, confidence, why in [
        ("data_governance", 15, 0.7, "No data catalog, nobody owns the data"),
        ("data_quality", 20, 0.75, "Data scattered across 5 systems"),
        ("sensor_data", 60, 0.8, "Telemetry from the newest presses"),
    ]:
        store.record_inference(
            user, InferredUpdate(factor_id=factor, value=value, confidence=confidence, rationale=why,
                                 conversation_excerpt=f"User: {why}", session_id="kickoff"),
        )  # fmt: skip
    token = LinkSigner(firestore_client).issue(user, "kickoff")
    summary = store.summary(user)
    browser.get(link_url(app_url, token))
    for expected in (
        "Where are we",
        "Signed in as Anna Berg",
        f"{summary.overall.completeness:.0%}",
        summary.overall.decision_tier_name,
        store.graph.name("sensor_data"),  # the where-were-we card names the last topic
        "Next best questions",
    ):
        wait_for_text(browser, expected)  # the page streams in: wait for each part
    time.sleep(2)  # let the charts draw
    shot = tmp_path / "overview.png"
    browser.save_screenshot(str(shot))
    assert shot.stat().st_size > 10_000
    if os.environ.get("FJ_UPDATE_SCREENSHOT"):
        shutil.copy(shot, ROOT / "docs" / "overview.png")


def test_a_tampered_link_shows_a_message_in_the_browser(app_url, browser):
    browser.get(link_url(app_url, "not-a-real-token"))
    body = wait_for_text(browser, "not valid")
    assert "Where are we" not in body
