"""Deep links in a real browser: ``/<page>?t=<token>`` opens that page, and the token leaves the address bar."""

from __future__ import annotations

import time
from urllib.parse import urlencode

import pytest
from test_browser import wait_for_text

from dashboard.pages import person_page_names
from factor_journal.links import LinkSigner
from factor_journal.models import InferredUpdate
from factor_journal.organisation import OrganisationDirectory
from factor_journal.repositories.links import LinkRecords

pytestmark = pytest.mark.browser


def wait_for_address_without_token(driver, timeout: float = 20.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and "t=" in driver.current_url:
        time.sleep(0.3)
    return driver.current_url


def test_a_resume_link_to_a_page_opens_it_and_drops_the_token(app_url, browser, store, make_user, firestore_client):
    user = make_user(store, display_name="Rita Resume")
    store.record_inference(
        user, InferredUpdate(factor_id="data_quality", value=20, confidence=0.7, rationale="said so")
    )
    token = LinkSigner(LinkRecords(firestore_client)).issue(user)
    browser.get(f"{app_url}/history?{urlencode({'t': token})}")
    body = wait_for_text(browser, "Factor history")
    assert "Page not found" not in body
    address = wait_for_address_without_token(browser)
    assert "t=" not in address and "/history" in address, address


def test_a_bad_link_to_a_page_says_why_not_page_not_found(app_url, browser):
    browser.get(f"{app_url}/team?t=not-a-real-token")
    body = wait_for_text(browser, "not valid")
    time.sleep(1)
    body = wait_for_text(browser, "not valid")
    assert "Page not found" not in body and "team progress" not in body


@pytest.mark.parametrize("path", ["team", "blockers"])
def test_every_manager_page_opens_at_its_own_address(
    app_url,
    browser,
    store,
    make_user,
    firestore_client,
    path,
):
    directory = OrganisationDirectory(store)
    org = f"org-{make_user(store)}"
    directory.create(org, "Own Address Org")
    make_user(store, org_id=org, display_name="Olga Member")
    manager = make_user(store, org_id=org, display_name="Oscar Manager")
    directory.assign_manager(org, manager)
    token = LinkSigner(LinkRecords(firestore_client)).issue(manager, kind="manager", org_id=org)
    browser.get(f"{app_url}/{path}?{urlencode({'t': token})}")
    body = wait_for_text(browser, {"team": "Team progress", "blockers": "Blockers across the organisation"}[path])
    time.sleep(1.5)  # the "Page not found" dialog, when there is one, comes after the page has drawn
    body = wait_for_text(browser, "Own Address Org" if path == "team" else "Blockers")
    assert "Page not found" not in body
    address = wait_for_address_without_token(browser)
    assert "t=" not in address and address.rstrip("/").endswith(f"/{path}"), address


@pytest.mark.parametrize("path", person_page_names())
def test_every_page_of_a_person_opens_at_its_own_address(app_url, browser, store, make_user, firestore_client, path):
    user = make_user(store, display_name="Pia Person")
    store.record_inference(user, InferredUpdate(factor_id="data_quality", value=20, confidence=0.7, rationale="said"))
    token = LinkSigner(LinkRecords(firestore_client)).issue(user)
    browser.get(f"{app_url}/{path}?{urlencode({'t': token})}")
    wait_for_text(browser, "Signed in as")
    time.sleep(1.5)
    body = wait_for_text(browser, "Signed in as")
    assert "Page not found" not in body
    assert wait_for_address_without_token(browser).rstrip("/").endswith(f"/{path}")
