"""Deep links in a real browser: ``/<page>?t=<token>`` opens that page, and the token leaves the address bar."""

from __future__ import annotations

import time
from urllib.parse import urlencode

import pytest
from test_browser import app_url, browser, wait_for_text  # noqa: F401  (fixtures)

from factor_journal.links import LinkSigner
from factor_journal.models import InferredUpdate
from factor_journal.organisation import OrganisationDirectory

pytestmark = pytest.mark.browser


def wait_for_address_without_token(driver, timeout: float = 20.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and "t=" in driver.current_url:
        time.sleep(0.3)
    return driver.current_url


def test_a_manager_link_to_the_team_page_opens_it_and_drops_the_token(
    app_url,  # noqa: F811 (a fixture, imported above)
    browser,  # noqa: F811
    store,
    make_user,
    firestore_client,
):
    directory = OrganisationDirectory(store)
    org = f"org-{make_user(store)}"
    directory.create(org, "Deep Link Org")
    member = make_user(store, org_id=org, display_name="Dora Deep")
    store.record_inference(
        member, InferredUpdate(factor_id="data_quality", value=20, confidence=0.7, rationale="said so")
    )
    manager = make_user(store, org_id=org, display_name="Manny Manager")
    directory.assign_manager(org, manager)
    token = LinkSigner(firestore_client).issue(manager, kind="manager", org_id=org)
    browser.get(f"{app_url}/blockers?{urlencode({'t': token})}")
    body = wait_for_text(browser, "Blockers across the organisation")
    assert "Page not found" not in body
    address = wait_for_address_without_token(browser)
    assert "t=" not in address and address.rstrip("/").endswith("/blockers"), address


def test_a_resume_link_to_a_page_opens_it_and_drops_the_token(app_url, browser, store, make_user, firestore_client):  # noqa: F811
    user = make_user(store, display_name="Rita Resume")
    store.record_inference(
        user, InferredUpdate(factor_id="data_quality", value=20, confidence=0.7, rationale="said so")
    )
    token = LinkSigner(firestore_client).issue(user)
    browser.get(f"{app_url}/history?{urlencode({'t': token})}")
    body = wait_for_text(browser, "Factor history")
    assert "Page not found" not in body
    address = wait_for_address_without_token(browser)
    assert "t=" not in address and "/history" in address, address


def test_a_bad_link_to_a_page_says_why_not_page_not_found(app_url, browser):  # noqa: F811
    browser.get(f"{app_url}/team?t=not-a-real-token")
    body = wait_for_text(browser, "not valid")
    time.sleep(1)
    body = wait_for_text(browser, "not valid")
    assert "Page not found" not in body and "team progress" not in body
