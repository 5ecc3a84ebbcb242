"""One-click unsubscribe: every reminder carries a signed link and the List-Unsubscribe headers;
the link sets the opt-out without signing in, and nothing else can."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlparse

import pytest
from factor_journal.errors import UnknownUserError
from factor_journal.links import InvalidLinkError, LinkSigner
from factor_journal.models import InferredUpdate, UserProfile
from factor_journal.reminders import MAIL_COLLECTION, ReminderPolicy, UnsubscribeLinks, send_due_reminders, unsubscribe

POLICY = ReminderPolicy(inactive_after=timedelta(days=7), window=timedelta(days=7))


@pytest.fixture
def signer(firestore_client) -> LinkSigner:
    return LinkSigner(firestore_client, secret="test-secret")


def quiet_person(store) -> str:
    user = f"unsub-{uuid.uuid4().hex[:10]}"
    store.register_user(UserProfile(user_id=user, display_name="Pat Doe", email="pat@example.com"))
    store.record_inference(user, InferredUpdate(factor_id="quality", value=30, confidence=0.7, rationale="spreadsheets",
                                                session_id="kickoff"))  # fmt: skip
    long_ago = datetime.now(UTC) - timedelta(days=20)
    store.client.document(f"users/{user}").update({"last_active": long_ago, "created_at": long_ago})
    return user


def the_mail(store, user: str) -> dict:
    [mail] = [d.to_dict() for d in store.client.collection(MAIL_COLLECTION).stream() if d.to_dict().get("user_id") == user]
    return mail


def test_every_reminder_has_a_one_click_link_and_list_unsubscribe_headers(small_store, signer):
    user = quiet_person(small_store)
    send_due_reminders(small_store, signer, "https://app.example", policy=POLICY)
    message = the_mail(small_store, user)["message"]
    headers = message["headers"]
    assert headers["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    url = headers["List-Unsubscribe"].strip("<>")
    assert url.startswith("https://app.example/unsubscribe?u=")
    assert f'href="{url}"' in message["html"] and "Unsubscribe with one click" in message["html"]
    assert 'reply with "unsubscribe"' not in message["html"]  # no promise nothing keeps
    token = parse_qs(urlparse(url).query)["u"][0]
    assert UnsubscribeLinks("test-secret").user_of(token) == user


def test_the_link_opts_out_and_no_reminder_follows(small_store, signer):
    user = quiet_person(small_store)
    send_due_reminders(small_store, signer, "https://app.example", policy=POLICY)
    token = parse_qs(urlparse(the_mail(small_store, user)["message"]["headers"]["List-Unsubscribe"].strip("<>")).query)["u"][0]
    profile = unsubscribe(small_store, UnsubscribeLinks.like(signer), token)
    assert profile.user_id == user and small_store.get_user(user).reminders_opt_out is True
    unsubscribe(small_store, UnsubscribeLinks.like(signer), token)  # idempotent
    send_due_reminders(small_store, signer, "https://app.example", now=datetime.now(UTC) + timedelta(days=30), policy=POLICY)
    assert the_mail(small_store, user)  # still only the one mail


def test_tampered_foreign_and_resume_tokens_change_nothing(small_store, signer):
    user = quiet_person(small_store)
    links = UnsubscribeLinks("test-secret")
    good = links.token(user)
    for bad in (good[:-2] + ("AA" if not good.endswith("AA") else "BB"), UnsubscribeLinks("another-secret").token(user),
                signer.issue(user), "", None, "x" * 5000):  # fmt: skip
        with pytest.raises(InvalidLinkError):
            unsubscribe(small_store, links, bad)
    assert small_store.get_user(user).reminders_opt_out is False
    with pytest.raises(UnknownUserError):
        unsubscribe(small_store, links, links.token("nobody-here"))
    assert small_store.client.document("users/nobody-here").get().exists is False
