"""Reminder emails on the emulator: who is due, no duplicates within a window, opt-out, content."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from factor_journal.links import LinkSigner
from factor_journal.models import InferredUpdate, UserProfile
from factor_journal.reminders import MAIL_COLLECTION, ReminderPolicy, send_due_reminders
from factor_journal.repositories.links import LinkRecords

POLICY = ReminderPolicy(inactive_after=timedelta(days=7), window=timedelta(days=7))


@pytest.fixture
def signer(firestore_client) -> LinkSigner:
    return LinkSigner(LinkRecords(firestore_client), secret="test-secret")


def person(store, *, days_quiet: float | None, opt_out: bool = False, email: str = "p@example.com") -> str:
    user = f"rem-{uuid.uuid4().hex[:10]}"
    store.register_user(UserProfile(user_id=user, display_name="Pat Doe (Ops)", email=email, reminders_opt_out=opt_out))
    store.record_inference(
        user,
        InferredUpdate(
            factor_id="quality",
            value=30,
            confidence=0.7,
            rationale="spreadsheets everywhere",
            conversation_excerpt="User: our data is in spreadsheets",
            session_id="kickoff",
        ),
    )
    last = None if days_quiet is None else datetime.now(UTC) - timedelta(days=days_quiet)
    store.client.document(f"users/{user}").update(
        {"last_active": last, "created_at": datetime.now(UTC) - timedelta(days=30)}
    )
    return user


def mail_for(store, user: str) -> list[dict]:
    return [
        d.to_dict() for d in store.client.collection(MAIL_COLLECTION).stream() if d.to_dict().get("user_id") == user
    ]


def test_quiet_people_with_incomplete_assessments_get_one_reminder_per_window(small_store, signer):
    quiet, active, never = (
        person(small_store, days_quiet=10),
        person(small_store, days_quiet=2),
        person(small_store, days_quiet=None),
    )
    send_due_reminders(small_store, signer, "https://app.example", policy=POLICY)
    send_due_reminders(small_store, signer, "https://app.example", policy=POLICY)  # the same day again
    assert len(mail_for(small_store, quiet)) == 1
    assert mail_for(small_store, active) == []
    assert len(mail_for(small_store, never)) == 1  # registered a month ago, never active
    later = datetime.now(UTC) + timedelta(days=3)
    send_due_reminders(small_store, signer, "https://app.example", now=later, policy=POLICY)
    assert len(mail_for(small_store, quiet)) == 1  # still inside the window
    send_due_reminders(
        small_store, signer, "https://app.example", now=datetime.now(UTC) + timedelta(days=8), policy=POLICY
    )
    assert len(mail_for(small_store, quiet)) == 2


def test_the_reminder_is_trigger_email_shaped_with_a_working_link_and_where_we_were(small_store, signer):
    user = person(small_store, days_quiet=12, email="pat@example.com")
    send_due_reminders(small_store, signer, "https://app.example", policy=POLICY)
    [mail] = mail_for(small_store, user)
    assert mail["to"] == ["pat@example.com"]
    html = mail["message"]["html"]
    assert mail["message"]["subject"] and "Hello Pat Doe," in html
    assert "<strong>Quality</strong>" in html and "% mapped" in html and "Next, we would like to ask" in html
    token = html.split("?t=")[1].split('"')[0]
    claims = signer.verify(token)
    assert claims.user_id == user and claims.session_id == "kickoff"


def test_complete_assessments_and_managers_are_not_reminded(small_store, signer, small_catalog):
    done = person(small_store, days_quiet=20)
    for factor in small_catalog.assessable_factors:
        small_store.record_inference(done, InferredUpdate(factor_id=factor.id, value=50, confidence=0.8, rationale="r"))
    small_store.client.document(f"users/{done}").update({"last_active": datetime.now(UTC) - timedelta(days=20)})
    manager = person(small_store, days_quiet=20)
    small_store.client.document(f"users/{manager}").update({"role": "manager"})
    send_due_reminders(small_store, signer, "https://app.example", policy=POLICY)
    assert mail_for(small_store, done) == [] and mail_for(small_store, manager) == []


def test_a_damaged_profile_never_stops_the_others_reminders(small_store, signer, caplog):
    damaged, sound = person(small_store, days_quiet=20), person(small_store, days_quiet=21)
    small_store.client.document(f"users/{damaged}").update({"reminders_opt_out": "maybe later"})
    send_due_reminders(small_store, signer, "https://app.example", policy=POLICY)
    assert len(mail_for(small_store, sound)) == 1
    assert mail_for(small_store, damaged) == []  # not guessed at: left for a person to mend
    assert f"profile of {damaged} no longer reads" in caplog.text
