"""A new link for an expired one (on the emulator): mailed to the owner only, once an hour, never for a withdrawn,
altered or still-working link, nor for an account that has changed."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from doubles import Clock
from factor_journal.access import AccessChangedError, AccessChecker
from factor_journal.links import (
    InvalidLinkError,
    LinkClaims,
    LinkSigner,
    LinkStillWorksError,
    RevokedLinkError,
)
from factor_journal.models import UserProfile
from factor_journal.organisation import OrganisationDirectory
from factor_journal.renewal import Renewal, compose_new_link, renewal_mail_id, send_new_link

BASE = "https://app.example"


@pytest.fixture
def clock() -> Clock:
    return Clock(datetime(2026, 11, 28, 9, 0, tzinfo=UTC))  # on the hour: the tests' steps stay in one clock hour


@pytest.fixture
def signer(small_store, clock) -> LinkSigner:
    return LinkSigner(small_store.links, secret="test-secret", clock=clock)


def _mail(store, user_id: str, now: datetime) -> dict:
    snapshot = store.client.collection("mail").document(renewal_mail_id(user_id, now)).get()
    return snapshot.to_dict() or {}


def _token_in(mail: dict) -> str:
    return re.search(r"\?t=([^\"&]+)", mail["message"]["html"]).group(1)


def _expired(signer: LinkSigner, clock: Clock, user_id: str, **issued) -> str:
    token = signer.issue(user_id, ttl=timedelta(days=1), **issued)
    clock.advance(timedelta(days=2))
    return token


def test_an_expired_link_gets_a_new_one_mailed_to_its_owner_that_opens_the_same_page(
    signer, clock, small_store, make_user
):
    person = make_user(small_store, display_name="Anna Berg", email="anna@example.com")
    token = _expired(signer, clock, person, session_id="kickoff")
    assert send_new_link(small_store, signer, token, BASE) is Renewal.sent
    mail = _mail(small_store, person, clock())
    assert mail["to"] == ["anna@example.com"] and mail["kind"] == "new_link" and mail["user_id"] == person
    new = signer.verify(_token_in(mail))
    assert (new.user_id, new.session_id, new.kind) == (person, "kickoff", "resume")
    assert AccessChecker(signer, small_store).viewer(_token_in(mail)).display_name == "Anna Berg"


def test_one_new_link_per_hour_however_often_it_is_asked_for(signer, clock, small_store, make_user):
    person = make_user(small_store, email="p@example.com")
    first, second = _expired(signer, clock, person), signer.issue(person, ttl=timedelta(seconds=1))
    clock.advance(timedelta(seconds=2))
    assert send_new_link(small_store, signer, first, BASE) is Renewal.sent
    links_before = len(list(small_store.client.collection("resume_links").where("user_id", "==", person).stream()))
    assert send_new_link(small_store, signer, first, BASE) is Renewal.sent_already
    assert send_new_link(small_store, signer, second, BASE) is Renewal.sent_already  # another old link: the same
    links_after = len(list(small_store.client.collection("resume_links").where("user_id", "==", person).stream()))
    assert links_after == links_before  # nothing issued when nothing is sent
    clock.advance(timedelta(hours=1))
    assert send_new_link(small_store, signer, first, BASE) is Renewal.sent


def test_a_manager_link_is_renewed_only_while_the_organisation_lists_the_manager(signer, clock, small_store, make_user):
    directory = OrganisationDirectory(small_store)
    org = f"org-{uuid.uuid4().hex[:6]}"
    directory.create(org, "Renewed")
    manager = make_user(small_store, org_id=org, email="m@example.com")
    directory.assign_manager(org, manager)
    token = _expired(signer, clock, manager, kind="manager", org_id=org)
    assert send_new_link(small_store, signer, token, BASE) is Renewal.sent
    renewed = signer.verify(_token_in(_mail(small_store, manager, clock())))
    assert (renewed.kind, renewed.org_id) == ("manager", org)
    clock.advance(timedelta(hours=1))
    directory.remove_manager(org, manager)
    with pytest.raises(AccessChangedError):
        send_new_link(small_store, signer, token, BASE)
    assert _mail(small_store, manager, clock()) == {}


def test_nothing_is_sent_for_a_withdrawn_altered_working_or_orphaned_link(signer, clock, small_store, make_user):
    person = make_user(small_store, email="p@example.com")
    withdrawn = signer.issue(person, ttl=timedelta(days=1))
    signer.revoke(withdrawn)
    working = signer.issue(person, ttl=timedelta(days=30))
    clock.advance(timedelta(days=2))
    with pytest.raises(RevokedLinkError):
        send_new_link(small_store, signer, withdrawn, BASE)
    with pytest.raises(LinkStillWorksError):
        send_new_link(small_store, signer, working, BASE)
    small_store.stats.reset()
    with pytest.raises(LinkStillWorksError):
        signer.renewable(working)
    assert small_store.stats.reads == 1  # the record read afresh once, and the check that follows uses it
    for altered in (working[:-2] + ("xx" if not working.endswith("xx") else "yy"), "nonsense", None):
        with pytest.raises(InvalidLinkError):
            send_new_link(small_store, signer, altered, BASE)
    foreign = LinkSigner(small_store.links, secret="someone-else", clock=clock).issue(person, ttl=timedelta(hours=1))
    clock.advance(timedelta(hours=2))
    with pytest.raises(InvalidLinkError):
        send_new_link(small_store, signer, foreign, BASE)
    assert _mail(small_store, person, clock()) == {}


def test_nothing_is_sent_for_someone_erased_or_whose_profile_is_gone(signer, clock, small_store, make_user):
    erased = make_user(small_store, email="erased@example.com")
    token = _expired(signer, clock, erased)
    small_store.personal_data.erase(erased)
    with pytest.raises(InvalidLinkError):  # the link's record went with the person
        send_new_link(small_store, signer, token, BASE)
    profile_gone = make_user(small_store, email="gone@example.com")
    token = _expired(signer, clock, profile_gone)
    small_store.client.document(f"users/{profile_gone}").delete()  # an erasure under way: the profile goes first
    with pytest.raises(AccessChangedError):
        send_new_link(small_store, signer, token, BASE)
    assert _mail(small_store, erased, clock()) == {} and _mail(small_store, profile_gone, clock()) == {}
    # the mail itself is queued only while its person exists (one transaction: an erasure meanwhile leaves none)
    profile = UserProfile(user_id=profile_gone, email="gone@example.com")
    claims = LinkClaims(link_id="l", user_id=profile_gone, ttl_seconds=1)
    document = compose_new_link(profile, claims, f"{BASE}/?t=T", clock())
    assert not small_store.mail.create_once(renewal_mail_id(profile_gone, clock()), document)
    assert _mail(small_store, profile_gone, clock()) == {}


def test_a_person_without_an_address_is_told_so_and_nothing_is_issued(signer, clock, small_store, make_user):
    person = make_user(small_store)
    token = _expired(signer, clock, person)
    assert send_new_link(small_store, signer, token, BASE) is Renewal.no_address
    assert _mail(small_store, person, clock()) == {}


def test_the_mail_says_what_the_link_opens_and_escapes_the_name():
    now = datetime(2026, 11, 28, 9, 30, tzinfo=UTC)
    profile = UserProfile(user_id="u1", display_name="<b>Ann</b> (Ops)", email="a@example.com")
    said = compose_new_link(profile, LinkClaims(link_id="l", user_id="u1", ttl_seconds=1), "https://x/?t=T&a=1", now)
    assert "Hello &lt;b&gt;Ann&lt;/b&gt;," in said.message.html and "<b>Ann" not in said.message.html
    assert "your AI-readiness assessment" in said.message.html and 'href="https://x/?t=T&amp;a=1"' in said.message.html
    claims = LinkClaims(link_id="l", user_id="u1", ttl_seconds=1, kind="manager", org_id="o")
    assert "your organisation's progress" in compose_new_link(profile, claims, "https://x/?t=T", now).message.html
    assert renewal_mail_id("u1", now) == renewal_mail_id("u1", now + timedelta(minutes=29))
    assert renewal_mail_id("u1", now) != renewal_mail_id("u1", now + timedelta(minutes=31))
