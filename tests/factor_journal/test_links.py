"""Signed resume links on the emulator: valid, expired, revoked, tampered, foreign; the secret policy."""

from __future__ import annotations

from datetime import timedelta

import pytest

from doubles import Clock
from factor_journal.errors import UnknownUserError
from factor_journal.links import (
    DEMO_SECRET,
    MIN_SECRET_LENGTH,
    RECORD_TTL,
    ExpiredLinkError,
    InvalidLinkError,
    LinkError,
    LinkSecretError,
    LinkSigner,
    RevokedLinkError,
    link_secret,
)
from factor_journal.repositories.links import LinkRecords


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def signer(firestore_client, clock) -> LinkSigner:
    return LinkSigner(LinkRecords(firestore_client), secret="test-secret", clock=clock)


def test_a_link_opens_exactly_its_user_and_session(signer, small_store, make_user):
    user = make_user(small_store)
    claims = signer.verify(signer.issue(user, "kickoff"))
    assert (claims.user_id, claims.session_id, claims.kind) == (user, "kickoff", "resume")


def test_tampered_and_malformed_links_are_invalid(signer, small_store, make_user):
    token = signer.issue(make_user(small_store))
    payload, signature = token.rsplit(".", 1)
    for bad in [
        token[:-2] + ("xx" if not token.endswith("xx") else "yy"),
        "nonsense",
        "",
        None,
        "a" * 5000,
        payload.replace(payload[5], "Z" if payload[5] != "Z" else "Y", 1) + "." + signature,
    ]:
        with pytest.raises(InvalidLinkError):
            signer.verify(bad)


def test_a_link_signed_with_another_secret_is_invalid(signer, firestore_client, small_store, make_user):
    token = LinkSigner(LinkRecords(firestore_client), secret="someone-else").issue(make_user(small_store))
    with pytest.raises(InvalidLinkError):
        signer.verify(token)


def test_expired_and_revoked_links_are_refused_with_their_reason(signer, clock, small_store, make_user):
    user = make_user(small_store)
    short = signer.issue(user, ttl=timedelta(seconds=1))
    signer.verify(short)
    clock.advance(timedelta(seconds=1.5))
    with pytest.raises(ExpiredLinkError, match="expired"):
        signer.verify(short)
    token = signer.issue(user)
    signer.revoke(token)
    with pytest.raises(RevokedLinkError, match="withdrawn"):
        signer.verify(token)


def test_a_link_whose_record_names_another_user_is_invalid(signer, clock, firestore_client, small_store, make_user):
    token = signer.issue(make_user(small_store))
    claims = signer.verify(token)
    firestore_client.collection("resume_links").document(claims.link_id).update({"user_id": make_user(small_store)})
    clock.advance(RECORD_TTL)
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


def test_the_records_expiry_is_enforced_not_only_the_tokens(signer, clock, firestore_client, small_store, make_user):
    """Shortening a link's life in its record (an administrator's decision) ends it."""
    token = signer.issue(make_user(small_store))
    claims = signer.verify(token)
    record = firestore_client.collection("resume_links").document(claims.link_id)
    record.update({"expires_at": clock() + timedelta(hours=1)})
    clock.advance(timedelta(hours=1))
    with pytest.raises(ExpiredLinkError):
        signer.verify(token)
    record.update({"expires_at": None})  # a damaged record opens nothing either
    clock.advance(RECORD_TTL)
    with pytest.raises(ExpiredLinkError):
        signer.verify(token)


def test_a_revocation_elsewhere_takes_effect_within_the_record_cache_time(
    signer, clock, firestore_client, small_store, make_user
):
    """The app's signer re-reads a record at most once per RECORD_TTL: seconds, not minutes."""
    token = signer.issue(make_user(small_store))
    signer.verify(token)
    LinkSigner(LinkRecords(firestore_client), secret="test-secret").revoke(token)  # e.g. the CLI, another process
    signer.verify(token)  # still cached
    clock.advance(RECORD_TTL)
    with pytest.raises(RevokedLinkError):
        signer.verify(token)
    assert timedelta(seconds=10) >= RECORD_TTL


@pytest.fixture
def production(monkeypatch):
    """No emulator in sight, as in a deployment."""
    monkeypatch.delenv("FIRESTORE_EMULATOR_HOST", raising=False)
    monkeypatch.delenv("FJ_LINK_SECRET", raising=False)


@pytest.mark.parametrize(
    ("secret", "message"),
    [(None, "not set"), ("", "not set"), (DEMO_SECRET, "demo secret"), ("x" * (MIN_SECRET_LENGTH - 1), "at least")],
    ids=["missing", "empty", "demo", "short"],
)
def test_weak_secrets_are_refused_outside_the_emulators(production, monkeypatch, secret, message):
    if secret is not None:
        monkeypatch.setenv("FJ_LINK_SECRET", secret)
    with pytest.raises(LinkSecretError, match=message):
        link_secret()
    with pytest.raises(LinkSecretError, match=message):
        LinkSigner(records=None, secret=secret)  # type: ignore[arg-type]


def test_a_strong_secret_is_accepted_outside_the_emulators(production, monkeypatch):
    strong = "0123456789abcdef" * 4
    monkeypatch.setenv("FJ_LINK_SECRET", strong)
    assert link_secret() == strong


def test_the_demo_secret_is_the_default_only_under_the_emulators(monkeypatch):
    monkeypatch.delenv("FJ_LINK_SECRET", raising=False)
    monkeypatch.setenv("FIRESTORE_EMULATOR_HOST", "127.0.0.1:8080")
    assert link_secret() == DEMO_SECRET
    assert link_secret("short-but-local") == "short-but-local"


# The deployed functions whose work signs or checks a link (resume, manager or unsubscribe), and the rest.
SIGNING_FUNCTIONS = {"unsubscribe", "nightlyOrganisations", "nightlyReminders"}
OTHER_FUNCTIONS = {"on_turn_created", "on_screen_lifted", "recover_turns", "nightly_rollups_and_reminders"}


def test_every_function_that_signs_or_checks_links_declares_the_secret_and_no_other_does():
    """Cloud Functions exposes a Secret Manager secret only to the functions that declare it, and outside
    the emulators a link cannot be signed or checked without it: a function that uses links without
    declaring the secret fails in production only (one-click unsubscribe would answer 500)."""
    import importlib.util
    from pathlib import Path

    from firebase_functions import params

    path = Path(__file__).resolve().parents[2] / "functions" / "main.py"
    spec = importlib.util.spec_from_file_location("fj_functions_main", path)
    main = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(main)  # type: ignore[union-attr]
    assert isinstance(main.LINK_SECRET, params.SecretParam) and main.LINK_SECRET.name == "FJ_LINK_SECRET"
    endpoints = {name: f.__firebase_endpoint__ for name, f in vars(main).items() if hasattr(f, "__firebase_endpoint__")}
    assert set(endpoints) == SIGNING_FUNCTIONS | OTHER_FUNCTIONS  # a new function must be sorted into one of the two
    declared = {
        name
        for name, endpoint in endpoints.items()
        if any(s["key"] == "FJ_LINK_SECRET" for s in endpoint.secretEnvironmentVariables or [])
    }
    assert declared == SIGNING_FUNCTIONS
    example = (path.parent / ".secret.local.example").read_text()
    assert f"FJ_LINK_SECRET={DEMO_SECRET}" in example  # the emulators' value is the refused-in-production demo one


def test_the_unsubscribe_function_cannot_check_a_link_without_the_secret(production):
    """Why ``unsubscribe`` is a signing function: its link checker refuses to start without the secret."""
    from factor_journal.reminders import UnsubscribeLinks

    with pytest.raises(LinkSecretError, match="not set"):
        UnsubscribeLinks()
