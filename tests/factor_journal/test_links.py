"""Signed resume links on the emulator: valid, expired, revoked, tampered, foreign."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from factor_journal.errors import UnknownUserError
from factor_journal.links import ExpiredLinkError, InvalidLinkError, LinkError, LinkSigner, RevokedLinkError


@pytest.fixture
def signer(firestore_client) -> LinkSigner:
    return LinkSigner(firestore_client, secret="test-secret")


def test_a_link_opens_exactly_its_user_and_session(signer, small_store, make_user):
    user = make_user(small_store)
    claims = signer.verify(signer.issue(user, "kickoff"))
    assert (claims.user_id, claims.session_id, claims.kind) == (user, "kickoff", "resume")


def test_tampered_and_malformed_links_are_invalid(signer, small_store, make_user):
    token = signer.issue(make_user(small_store))
    payload, signature = token.rsplit(".", 1)
    for bad in [token[:-2] + ("xx" if not token.endswith("xx") else "yy"), "nonsense", "", None, "a" * 5000,
                payload.replace(payload[5], "Z" if payload[5] != "Z" else "Y", 1) + "." + signature]:  # fmt: skip
        with pytest.raises(InvalidLinkError):
            signer.verify(bad)


def test_a_link_signed_with_another_secret_is_invalid(signer, firestore_client, small_store, make_user):
    token = LinkSigner(firestore_client, secret="someone-else").issue(make_user(small_store))
    with pytest.raises(InvalidLinkError):
        signer.verify(token)


def test_expired_and_revoked_links_are_refused_with_their_reason(signer, small_store, make_user):
    user = make_user(small_store)
    short = signer.issue(user, ttl=timedelta(seconds=1))
    time.sleep(1.2)
    with pytest.raises(ExpiredLinkError, match="expired"):
        signer.verify(short)
    token = signer.issue(user)
    signer.revoke(token)
    with pytest.raises(RevokedLinkError, match="withdrawn"):
        signer.verify(token)


def test_a_link_whose_record_names_another_user_is_invalid(signer, firestore_client, small_store, make_user):
    token = signer.issue(make_user(small_store))
    claims = signer.verify(token)
    firestore_client.collection("resume_links").document(claims.link_id).update({"user_id": make_user(small_store)})
    with pytest.raises(InvalidLinkError):
        signer.verify(token)


def test_links_are_only_issued_for_registered_users_and_positive_lifetimes(signer, small_store, make_user):
    with pytest.raises(UnknownUserError):
        signer.issue("nobody-here")
    with pytest.raises(LinkError):
        signer.issue(make_user(small_store), ttl=timedelta(0))


def test_default_lifetime_is_fourteen_days(signer, small_store, make_user, firestore_client):
    claims = signer.verify(signer.issue(make_user(small_store)))
    record = firestore_client.collection("resume_links").document(claims.link_id).get().to_dict()
    assert record["expires_at"] - record["created_at"] == timedelta(days=14)
