"""One-click unsubscribe: every reminder carries a signed link and the List-Unsubscribe headers;
the link sets the opt-out without signing in, and nothing else can."""

from __future__ import annotations

import os
import uuid
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlparse

import httpx
import pytest

from factor_journal.errors import UnknownUserError
from factor_journal.links import InvalidLinkError, LinkSigner
from factor_journal.models import InferredUpdate, UserProfile
from factor_journal.reminders import (
    FUNCTIONS_REGION,
    MAIL_COLLECTION,
    ReminderPolicy,
    UnsubscribeLinks,
    one_click_response,
    send_due_reminders,
    unsubscribe,
)
from factor_journal.repositories.links import LinkRecords

PROJECT = os.environ.get("GCLOUD_PROJECT", "demo-factor-journal")
POLICY = ReminderPolicy(inactive_after=timedelta(days=7), window=timedelta(days=7))


@pytest.fixture
def signer(firestore_client) -> LinkSigner:
    return LinkSigner(LinkRecords(firestore_client), secret="test-secret")


def quiet_person(store) -> str:
    user = f"unsub-{uuid.uuid4().hex[:10]}"
    store.register_user(UserProfile(user_id=user, display_name="Pat Doe", email="pat@example.com"))
    store.record_inference(
        user,
        InferredUpdate(factor_id="quality", value=30, confidence=0.7, rationale="spreadsheets", session_id="kickoff"),
    )
    long_ago = datetime.now(UTC) - timedelta(days=20)
    store.client.document(f"users/{user}").update({"last_active": long_ago, "created_at": long_ago})
    return user


def the_mail(store, user: str) -> dict:
    [mail] = [
        d.to_dict() for d in store.client.collection(MAIL_COLLECTION).stream() if d.to_dict().get("user_id") == user
    ]
    return mail


def test_every_reminder_has_a_one_click_link_and_list_unsubscribe_headers(small_store, signer, monkeypatch):
    monkeypatch.delenv("FJ_UNSUBSCRIBE_URL", raising=False)  # deployed: no address set (the emulators set one)
    user = quiet_person(small_store)
    send_due_reminders(small_store, signer, "https://app.example", policy=POLICY)
    message = the_mail(small_store, user)["message"]
    headers = message["headers"]
    assert headers["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    one_click = headers["List-Unsubscribe"].strip("<>")  # the HTTP function mail clients POST to
    assert one_click.startswith(f"https://europe-west1-{small_store.client.project}.cloudfunctions.net/unsubscribe?u=")
    page = message["html"].split("Don't want these reminders? <a href=\"")[1].split('"')[0]
    assert page.startswith("https://app.example/unsubscribe?u=") and ">Unsubscribe</a>" in message["html"]
    assert 'reply with "unsubscribe"' not in message["html"]  # no promise nothing keeps
    for url in (one_click, page):
        assert UnsubscribeLinks("test-secret").user_of(parse_qs(urlparse(url).query)["u"][0]) == user


def test_the_one_click_address_can_be_configured(small_store, signer, monkeypatch):
    monkeypatch.setenv("FJ_UNSUBSCRIBE_URL", "https://mail.example/unsubscribe")
    user = quiet_person(small_store)
    send_due_reminders(small_store, signer, "https://app.example", policy=POLICY)
    assert the_mail(small_store, user)["message"]["headers"]["List-Unsubscribe"].startswith(
        "<https://mail.example/unsubscribe?u="
    )


def test_the_link_opts_out_and_no_reminder_follows(small_store, signer):
    user = quiet_person(small_store)
    send_due_reminders(small_store, signer, "https://app.example", policy=POLICY)
    header = the_mail(small_store, user)["message"]["headers"]["List-Unsubscribe"]
    token = parse_qs(urlparse(header.strip("<>")).query)["u"][0]
    profile = unsubscribe(small_store, UnsubscribeLinks.like(signer), token)
    assert profile.user_id == user and small_store.get_user(user).reminders_opt_out is True
    unsubscribe(small_store, UnsubscribeLinks.like(signer), token)  # idempotent
    send_due_reminders(
        small_store, signer, "https://app.example", now=datetime.now(UTC) + timedelta(days=30), policy=POLICY
    )
    assert the_mail(small_store, user)  # still only the one mail


def test_a_get_of_the_one_click_address_only_asks_and_a_post_opts_out(small_store, signer):
    """Mail scanners and link previewers GET every link in a mail: a GET changes nothing and shows a form whose
    button POSTs the RFC 8058 body back to the same address and token; the POST opts out."""
    user = quiet_person(small_store)
    links = UnsubscribeLinks.like(signer)
    token = links.token(user)
    for method in ("GET", "HEAD", "GET"):
        status, page = one_click_response(small_store, links, method, token)
        assert status == 200 and "You are unsubscribed" not in page
        assert small_store.get_user(user).reminders_opt_out is False
    form = page.split("<form", 1)[1].split("</form>")[0]
    assert "method='post'" in form and f"action='?u={token}'" in form
    assert "name='List-Unsubscribe' value='One-Click'" in form and "<button" in form
    assert one_click_response(small_store, links, "GET", token[:-2] + "xx")[0] == 400  # a bad link: no form
    status, page = one_click_response(small_store, links, "POST", token)
    assert status == 200 and "You are unsubscribed" in page
    assert small_store.get_user(user).reminders_opt_out is True
    assert one_click_response(small_store, links, "PUT", token)[0] == 405


def test_an_unsubscribe_that_races_an_erasure_recreates_no_profile(small_store, signer, monkeypatch):
    """The profile is read, then erased, then the opt-out is written: nothing of the person comes back."""
    from google.cloud.firestore_v1.document import DocumentReference

    user = quiet_person(small_store)
    token = UnsubscribeLinks.like(signer).token(user)
    read = DocumentReference.get

    def read_then_erased(reference, *args, **kwargs):
        snapshot = read(reference, *args, **kwargs)
        if reference.path == f"users/{user}":
            reference.delete()  # the erasure lands between the read and the write
        return snapshot

    monkeypatch.setattr(DocumentReference, "get", read_then_erased)
    with pytest.raises(UnknownUserError):
        unsubscribe(small_store, UnsubscribeLinks.like(signer), token)
    monkeypatch.undo()
    assert not small_store.client.document(f"users/{user}").get().exists


def test_tampered_foreign_and_resume_tokens_change_nothing(small_store, signer):
    user = quiet_person(small_store)
    links = UnsubscribeLinks("test-secret")
    good = links.token(user)
    for bad in (
        good[:-2] + ("AA" if not good.endswith("AA") else "BB"),
        UnsubscribeLinks("another-secret").token(user),
        signer.issue(user),
        "",
        None,
        "x" * 5000,
    ):
        with pytest.raises(InvalidLinkError):
            unsubscribe(small_store, links, bad)
    assert small_store.get_user(user).reminders_opt_out is False
    with pytest.raises(UnknownUserError):
        unsubscribe(small_store, links, links.token("nobody-here"))
    assert small_store.client.document("users/nobody-here").get().exists is False


def functions_url(name: str) -> str:
    """The Functions emulator's address of an HTTP function (found through the emulator hub)."""
    hub = os.environ["FIREBASE_EMULATOR_HUB"]
    functions = httpx.get(f"http://{hub}/emulators", timeout=5).json()["functions"]
    return f"http://{functions['host']}:{functions['port']}/{PROJECT}/{FUNCTIONS_REGION}/{name}"


@pytest.mark.functions
def test_under_the_emulators_a_reminder_names_the_functions_emulators_unsubscribe(small_store, firestore_client):
    """make demo's reminders (written in the Functions emulator, which inherits scripts/with-emulators.sh's
    environment) name the local function, not the deployed address, and opening it there asks."""
    user = quiet_person(small_store)
    demo_signer = LinkSigner(LinkRecords(firestore_client))  # the emulators' link secret, as the functions have
    send_due_reminders(small_store, demo_signer, "https://app.example", policy=POLICY)
    one_click = the_mail(small_store, user)["message"]["headers"]["List-Unsubscribe"].strip("<>")
    assert one_click.startswith(functions_url("unsubscribe") + "?u=")
    opened = httpx.get(one_click, timeout=60)
    assert opened.status_code == 200 and "<form method='post'" in opened.text


@pytest.mark.functions
def test_mail_clients_one_click_post_reaches_the_deployed_function(trigger_client, catalog):
    """RFC 8058: the mail client POSTs ``List-Unsubscribe=One-Click`` to the header's address; no sign-in."""
    from factor_journal.store import FactorJournalStore

    live = FactorJournalStore(trigger_client, catalog)
    user = f"oneclick-{uuid.uuid4().hex[:8]}"
    live.register_user(UserProfile(user_id=user, display_name="One Click", email="one@example.com"))
    links = UnsubscribeLinks()  # the functions run with the same link secret (the emulators' demo secret here)
    url = functions_url("unsubscribe")
    bad = httpx.post(
        url, params={"u": links.token(user)[:-2] + "xx"}, data={"List-Unsubscribe": "One-Click"}, timeout=60
    )
    assert bad.status_code == 400 and live.get_user(user).reminders_opt_out is False
    opened = httpx.get(url, params={"u": links.token(user)}, timeout=60)  # a scanner or previewer opening the link
    assert opened.status_code == 200 and "<form method='post'" in opened.text
    assert live.get_user(user).reminders_opt_out is False
    response = httpx.post(url, params={"u": links.token(user)}, data={"List-Unsubscribe": "One-Click"}, timeout=60)
    assert response.status_code == 200 and "unsubscribed" in response.text
    assert live.get_user(user).reminders_opt_out is True
    assert httpx.put(url, params={"u": links.token(user)}, timeout=60).status_code == 405
