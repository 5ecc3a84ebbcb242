"""Fixtures shared by the app tests: the AppTest ones (defined in test_app.py, where the first app tests live), and
the browser tests' (helpers in test_browser.py): one Streamlit server on ``fj-tests`` and one headless Chromium for
the whole run (each starts in seconds), every test opening the browser as a new visitor would."""

from collections.abc import Iterator
from typing import Any

import pytest
from test_app import app_database, assessed_user, signer  # noqa: F401
from test_browser import Chromium, browser_installed, organisation, serve_app  # noqa: F401 (organisation: a fixture)


@pytest.fixture(scope="session")
def app_url() -> Iterator[str]:
    """The app on the emulator's ``fj-tests`` database, where no trigger listens."""
    with serve_app("fj-tests") as url:
        yield url


@pytest.fixture(scope="session")
def chromium() -> Iterator[Chromium]:
    if not browser_installed():
        pytest.skip("chromium and chromedriver are not installed (make test installs them on Debian as root)")
    shared = Chromium()
    try:
        yield shared
    finally:
        shared.quit()


@pytest.fixture
def browser(chromium: Chromium) -> Iterator[Any]:
    """Headless Chromium at 1400 x 1000, as a new visitor opens it; left on a blank page after the test."""
    driver = chromium.fresh(1400, 1000)
    yield driver
    try:
        chromium.forget()
    except Exception:  # noqa: BLE001 - a browser that died is replaced by the next test's ``fresh``
        chromium.quit()
