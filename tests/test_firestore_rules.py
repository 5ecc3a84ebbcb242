"""firestore.rules, proven on the Firestore emulator with Auth-emulator ID tokens.

Each request goes to the emulator's REST API as a real client would send it,
signed in with an ID token the Auth emulator issued (or not signed in), so the
rules decide.  Documents are seeded with admin access, which bypasses rules.
Covers every allow and every deny the rules state.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

PROJECT = os.environ.get("GCLOUD_PROJECT", "demo-factor-journal")
ROOT = f"projects/{PROJECT}/databases/(default)/documents"


@dataclass
class Client:
    """A Firestore REST client signed in as one Auth-emulator user (or as nobody)."""

    uid: str | None
    token: str | None

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def read(self, path: str) -> int:
        url = f"http://{os.environ['FIRESTORE_EMULATOR_HOST']}/v1/{ROOT}/{path}"
        return httpx.get(url, headers=self.headers, timeout=10).status_code

    def commit(self, write: dict[str, Any]) -> int:
        url = f"http://{os.environ['FIRESTORE_EMULATOR_HOST']}/v1/{ROOT}:commit"
        return httpx.post(url, json={"writes": [write]}, headers=self.headers, timeout=10).status_code

    def create(self, path: str, fields: dict[str, Any], server_time: str | None = None) -> int:
        write: dict[str, Any] = {"update": {"name": f"{ROOT}/{path}", "fields": fields}, "currentDocument": {"exists": False}}
        if server_time:
            write["updateTransforms"] = [{"fieldPath": server_time, "setToServerValue": "REQUEST_TIME"}]
        return self.commit(write)

    def update(self, path: str, fields: dict[str, Any]) -> int:
        return self.commit({"update": {"name": f"{ROOT}/{path}", "fields": fields}})

    def delete(self, path: str) -> int:
        return self.commit({"delete": f"{ROOT}/{path}"})


def sign_up() -> Client:
    host = os.environ["FIREBASE_AUTH_EMULATOR_HOST"]
    response = httpx.post(
        f"http://{host}/identitytoolkit.googleapis.com/v1/accounts:signUp?key=fake-api-key",
        json={"email": f"{uuid.uuid4().hex[:10]}@example.com", "password": "secret-password", "returnSecureToken": True},
        timeout=10,
    )
    response.raise_for_status()
    body = response.json()
    return Client(uid=body["localId"], token=body["idToken"])


def text(value: str) -> dict[str, str]:
    return {"stringValue": value}


ALLOWED, DENIED = 200, 403


@pytest.fixture
def world(trigger_client):
    """Two organisations: members of A (one of them its manager) and a member of B, with data."""
    org_a, org_b = f"rules-a-{uuid.uuid4().hex[:6]}", f"rules-b-{uuid.uuid4().hex[:6]}"
    people = {"alice": sign_up(), "amir": sign_up(), "manager": sign_up(), "bob": sign_up()}
    orgs = {"alice": org_a, "amir": org_a, "manager": org_a, "bob": org_b}
    db = trigger_client
    for name, client in people.items():
        uid = client.uid
        db.document(f"users/{uid}").set({"user_id": uid, "org_id": orgs[name], "role": "manager" if name == "manager" else "member"})
        db.document(f"users/{uid}/metadata/assessment").set({"assessment_summary": {"overall": {}}})
        db.document(f"users/{uid}/snapshots/2026-11-20").set({"date": "2026-11-20"})
        db.document(f"users/{uid}/factors/data_quality").set({"current_value": 20})
        db.document(f"users/{uid}/factors/data_quality/journal/e1").set({"new_value": 20})
        db.document(f"users/{uid}/conversations/s1").set({"session_id": "s1"})
        db.document(f"users/{uid}/conversations/s1/turns/t1").set({"role": "user", "text": "hello"})
    for org in (org_a, org_b):
        db.document(f"organisations/{org}").set({"name": org})
        db.document(f"organisations/{org}/rollup/shard-00").set({"rows": {}})
        db.document(f"organisations/{org}/daily/2026-11-20").set({"people": 3})
    db.document("resume_links/link-1").set({"user_id": people["alice"].uid})
    db.document("mail/mail-1").set({"to": ["alice@example.com"]})
    return people, org_a, org_b


USER_DOCUMENTS = [
    "users/{uid}",
    "users/{uid}/metadata/assessment",
    "users/{uid}/snapshots/2026-11-20",
    "users/{uid}/factors/data_quality",
    "users/{uid}/factors/data_quality/journal/e1",
    "users/{uid}/conversations/s1",
    "users/{uid}/conversations/s1/turns/t1",
]


@pytest.mark.parametrize("template", USER_DOCUMENTS)
def test_a_user_reads_their_own_documents_only(world, template):
    people, *_ = world
    alice, bob = people["alice"], people["bob"]
    assert alice.read(template.format(uid=alice.uid)) == ALLOWED
    assert alice.read(template.format(uid=bob.uid)) == DENIED
    assert Client(None, None).read(template.format(uid=alice.uid)) == DENIED


@pytest.mark.parametrize(
    "template",
    [
        "users/{uid}",
        "users/{uid}/metadata/assessment",
        "users/{uid}/snapshots/2026-11-21",
        "users/{uid}/factors/data_quality",
        "users/{uid}/factors/data_quality/journal/e2",
        "users/{uid}/conversations/s2",
        "organisations/{org}",
        "organisations/{org}/rollup/shard-01",
        "organisations/{org}/daily/2026-11-21",
        "resume_links/link-2",
        "mail/mail-2",
    ],
)
def test_clients_never_write_what_the_functions_own(world, template):
    people, org_a, _ = world
    alice, manager = people["alice"], people["manager"]
    path = template.format(uid=alice.uid, org=org_a)
    for client in (alice, manager):
        assert client.create(path, {"x": text("forged")}) == DENIED
        assert client.update(path, {"x": text("forged")}) == DENIED
    existing = {"users/{uid}/snapshots/2026-11-21": "users/{uid}/snapshots/2026-11-20"}.get(template, template)
    assert alice.delete(existing.format(uid=alice.uid, org=org_a)) == DENIED


def valid_turn(**override: Any) -> dict[str, Any]:
    return {"role": text("user"), "text": text("We have two data scientists.")} | override


def test_a_user_creates_a_valid_turn_in_their_own_session(world):
    people, *_ = world
    alice = people["alice"]
    path = f"users/{alice.uid}/conversations/s1/turns/{uuid.uuid4().hex[:12]}"
    assert alice.create(path, valid_turn(), server_time="created_at") == ALLOWED
    exact = f"users/{alice.uid}/conversations/s1/turns/{uuid.uuid4().hex[:12]}"
    assert alice.create(exact, valid_turn(text=text("x" * 8192)), server_time="created_at") == ALLOWED


@pytest.mark.parametrize(
    ("why", "fields", "server_time", "where"),
    [
        ("another user's conversation", valid_turn(), "created_at", "bob"),
        ("a session that does not exist", valid_turn(), "created_at", "no-session"),
        ("role assistant", valid_turn(role=text("assistant")), "created_at", "own"),
        ("text is a number", valid_turn(text={"integerValue": "42"}), "created_at", "own"),
        ("text is a map", valid_turn(text={"mapValue": {"fields": {"a": text("b")}}}), "created_at", "own"),
        ("empty text", valid_turn(text=text("")), "created_at", "own"),
        ("text over 8192 characters", valid_turn(text=text("x" * 8193)), "created_at", "own"),
        ("client-chosen time", valid_turn(created_at={"timestampValue": "2026-01-01T00:00:00Z"}), None, "own"),
        ("an extra field", valid_turn(extraction=text("processed")), "created_at", "own"),
        ("another extra field", valid_turn(role2=text("user")), "created_at", "own"),
        ("a missing text", {"role": text("user")}, "created_at", "own"),
        ("a missing time", valid_turn(), None, "own"),
    ],
)
def test_invalid_turns_are_denied(world, why, fields, server_time, where):
    people, *_ = world
    alice = people["alice"]
    owner, session = {"bob": (people["bob"].uid, "s1"), "no-session": (alice.uid, "nope"), "own": (alice.uid, "s1")}[where]
    path = f"users/{owner}/conversations/{session}/turns/{uuid.uuid4().hex[:12]}"
    assert alice.create(path, fields, server_time=server_time) == DENIED, why


def test_turns_are_never_edited_or_deleted_by_clients(world):
    people, *_ = world
    alice = people["alice"]
    existing = f"users/{alice.uid}/conversations/s1/turns/t1"
    assert alice.update(existing, {"role": text("user"), "text": text("edited")}) == DENIED
    assert alice.delete(existing) == DENIED


def test_a_manager_reads_their_organisations_summaries_snapshots_and_rollups_only(world):
    people, org_a, org_b = world
    manager, alice, bob = people["manager"], people["alice"], people["bob"]
    assert manager.read(f"users/{alice.uid}/metadata/assessment") == ALLOWED
    assert manager.read(f"users/{alice.uid}/snapshots/2026-11-20") == ALLOWED
    for path in (f"organisations/{org_a}", f"organisations/{org_a}/rollup/shard-00", f"organisations/{org_a}/daily/2026-11-20"):
        assert manager.read(path) == ALLOWED
    assert manager.read(f"users/{bob.uid}/metadata/assessment") == DENIED
    assert manager.read(f"users/{bob.uid}/snapshots/2026-11-20") == DENIED
    assert manager.read(f"organisations/{org_b}") == DENIED
    assert manager.read(f"organisations/{org_b}/rollup/shard-00") == DENIED


@pytest.mark.parametrize(
    "template",
    [
        "users/{uid}",
        "users/{uid}/factors/data_quality",
        "users/{uid}/factors/data_quality/journal/e1",
        "users/{uid}/conversations/s1",
        "users/{uid}/conversations/s1/turns/t1",
    ],
)
def test_a_manager_reads_nothing_else_of_their_members(world, template):
    people, *_ = world
    assert people["manager"].read(template.format(uid=people["alice"].uid)) == DENIED


def test_members_are_not_managers(world):
    people, org_a, _ = world
    amir, alice = people["amir"], people["alice"]
    assert amir.read(f"users/{alice.uid}/metadata/assessment") == DENIED
    assert amir.read(f"users/{alice.uid}/snapshots/2026-11-20") == DENIED
    assert amir.read(f"organisations/{org_a}") == DENIED


@pytest.mark.parametrize("path", ["resume_links/link-1", "mail/mail-1", "anything/else"])
def test_link_records_mail_and_everything_else_are_closed(world, path):
    people, *_ = world
    for client in (people["alice"], people["manager"], Client(None, None)):
        assert client.read(path) == DENIED
