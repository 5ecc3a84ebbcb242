"""A Firestore REST client that signs in like a real app does, so the security rules decide.

Accounts come from the Auth emulator (``accounts:signUp``); every request goes to the Firestore
emulator's REST API with ``Authorization: Bearer <idToken>`` (or with no header at all, for a
signed-out client).  Reads are ``GET``s of one document (or a collection listing); writes are
``:commit`` calls with exactly one write each, so the operation the rules see is unambiguous:

- ``create``: ``currentDocument: {exists: false}`` (optionally with ``REQUEST_TIME`` transforms),
- ``update``: ``currentDocument: {exists: true}``,
- ``delete``: ``currentDocument: {exists: true}``.
"""

from __future__ import annotations

import base64
import json
import os
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx

PROJECT_ID = os.environ.get("GCLOUD_PROJECT", "demo-factor-journal")
DATABASE_PATH = f"projects/{PROJECT_ID}/databases/(default)"
DOCUMENTS_PATH = f"{DATABASE_PATH}/documents"
TIMEOUT = httpx.Timeout(20.0)

ALLOWED = 200
DENIED = 403

Value = dict[str, Any]
Fields = dict[str, Value]
AdminRead = Callable[[str], dict[str, Any] | None]  # a document's data, read bypassing the rules


def firestore_host() -> str:
    return os.environ["FIRESTORE_EMULATOR_HOST"]


def auth_host() -> str:
    return os.environ["FIREBASE_AUTH_EMULATOR_HOST"]


def encode(value: object) -> Value:
    """A Python value as a Firestore REST ``Value`` (typed JSON)."""
    if value is None:
        return {"nullValue": None}
    if isinstance(value, bool):
        return {"booleanValue": value}
    if isinstance(value, int):
        return {"integerValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, datetime):
        return {"timestampValue": value.astimezone(UTC).isoformat().replace("+00:00", "Z")}
    if isinstance(value, Mapping):
        return {"mapValue": {"fields": encode_fields(value)}}
    if isinstance(value, list | tuple):
        return {"arrayValue": {"values": [encode(item) for item in value]}}
    raise TypeError(f"cannot encode {type(value).__name__} as a Firestore value")


def encode_fields(data: Mapping[str, object]) -> Fields:
    return {key: encode(item) for key, item in data.items()}


def uid_in(id_token: str) -> str:
    """The ``user_id`` claim of an (unsigned) emulator ID token."""
    payload = id_token.split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    return str(claims["user_id"])


@dataclass(frozen=True)
class RulesClient:
    """Firestore, seen by one signed-in Auth-emulator user, or by nobody (``token`` is None)."""

    name: str
    uid: str | None = None
    token: str | None = None

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def _url(self, suffix: str) -> str:
        return f"http://{firestore_host()}/v1/{suffix}"

    def read(self, path: str) -> httpx.Response:
        """``GET`` one document (``path`` relative to ``documents/``)."""
        return httpx.get(self._url(f"{DOCUMENTS_PATH}/{path}"), headers=self.headers, timeout=TIMEOUT)

    def list(self, collection_path: str) -> httpx.Response:
        """``GET`` a collection: a list query over every document in it."""
        return httpx.get(
            self._url(f"{DOCUMENTS_PATH}/{collection_path}"),
            params={"pageSize": 50},
            headers=self.headers,
            timeout=TIMEOUT,
        )

    def commit(self, *writes: Mapping[str, Any]) -> httpx.Response:
        return httpx.post(
            self._url(f"{DOCUMENTS_PATH}:commit"),
            json={"writes": list(writes)},
            headers=self.headers,
            timeout=TIMEOUT,
        )

    def create(self, path: str, fields: Fields, server_time: Iterable[str] = ()) -> httpx.Response:
        """Create ``path`` (must not exist); fields in ``server_time`` are set to the request time."""
        write: dict[str, Any] = {
            "update": {"name": f"{DOCUMENTS_PATH}/{path}", "fields": fields},
            "currentDocument": {"exists": False},
        }
        transforms = [{"fieldPath": field, "setToServerValue": "REQUEST_TIME"} for field in server_time]
        if transforms:
            write["updateTransforms"] = transforms
        return self.commit(write)

    def update(
        self, path: str, fields: Fields, mask: Iterable[str] | None = None, server_time: Iterable[str] = ()
    ) -> httpx.Response:
        """Overwrite (or, with ``mask``, patch) the existing document at ``path``."""
        write: dict[str, Any] = {
            "update": {"name": f"{DOCUMENTS_PATH}/{path}", "fields": fields},
            "currentDocument": {"exists": True},
        }
        if mask is not None:
            write["updateMask"] = {"fieldPaths": list(mask)}
        transforms = [{"fieldPath": field, "setToServerValue": "REQUEST_TIME"} for field in server_time]
        if transforms:
            write["updateTransforms"] = transforms
        return self.commit(write)

    def delete(self, path: str) -> httpx.Response:
        """Delete the existing document at ``path``."""
        return self.commit({"delete": f"{DOCUMENTS_PATH}/{path}", "currentDocument": {"exists": True}})


SIGNED_OUT = RulesClient(name="signed-out")


@dataclass
class World:
    """The signed-in people, the signed-out client and the ids of everything seeded for one test."""

    people: dict[str, RulesClient]
    orgs: dict[str, str]
    ids: dict[str, str] = field(default_factory=dict)

    def __getitem__(self, name: str) -> RulesClient:
        return SIGNED_OUT if name == "signed-out" else self.people[name]

    def uid(self, name: str) -> str:
        uid = self.people[name].uid
        assert uid is not None
        return uid

    def path(self, template: str, owner: str = "alice") -> str:
        """``template`` with ``{owner}`` (that person's uid), ``{<person>}`` uids and the seeded ids.

        ``{org_a}``/``{org_b}``, ``{day}``, ``{other_day}``, ``{factor}``, ``{other_factor}``,
        ``{session}``, ``{turn}``, ``{entry}``, ``{answer}``, ``{link}``, ``{mail}``, ``{misc}``, and ``{fresh}``
        (a new uuid on every call).
        """
        values = {name: self.uid(name) for name in self.people}
        values |= {"org_a": self.orgs["A"], "org_b": self.orgs["B"]} | self.ids
        values |= {"owner": self.uid(owner), "fresh": uuid.uuid4().hex[:16]}
        return template.format(**values)


def sign_up(name: str) -> RulesClient:
    """A fresh Auth-emulator account (unique e-mail), signed in; its ``localId`` is the uid."""
    response = httpx.post(
        f"http://{auth_host()}/identitytoolkit.googleapis.com/v1/accounts:signUp",
        params={"key": "fake-api-key"},
        json={
            "email": f"{name}-{uuid.uuid4().hex[:12]}@rules.example.com",
            "password": "rules-test-password",
            "returnSecureToken": True,
        },
        timeout=TIMEOUT,
    )
    response.raise_for_status()
    body = response.json()
    uid, token = str(body["localId"]), str(body["idToken"])
    assert uid_in(token) == uid, "the ID token is not the account's"
    return RulesClient(name=name, uid=uid, token=token)


def outcome(response: httpx.Response) -> int:
    """``ALLOWED`` or ``DENIED`` (anything else, e.g. a 404 of a missing seed, fails loudly)."""
    if response.status_code == ALLOWED:
        return ALLOWED
    if response.status_code == DENIED:
        status = response.json().get("error", {}).get("status")
        assert status == "PERMISSION_DENIED", f"403 without PERMISSION_DENIED: {response.text}"
        return DENIED
    raise AssertionError(f"neither allowed nor denied: HTTP {response.status_code}: {response.text[:500]}")


def describe(expected: int) -> str:
    return "allowed" if expected == ALLOWED else "denied"
