"""Signed, expiring, revocable links into the app (resume links for users, manager links).

A link carries a token signed with ``itsdangerous`` (HMAC, timestamped) naming
the link id, the user, the session and the kind of access.  Each link also has
a record at ``resume_links/{link_id}`` so it can be revoked; clients can
neither read nor write those records (see firestore.rules).

``verify`` promises: a token opens exactly the user it was issued for, and only
while its signature is intact, it has not expired, and its record exists,
matches, and is not revoked.  Anything else raises a ``LinkError`` subclass
whose message can be shown to a person as it is.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import warnings
from datetime import UTC, datetime, timedelta
from typing import Literal
from urllib.parse import urlencode

from google.cloud import firestore
from itsdangerous import BadSignature, URLSafeTimedSerializer
from pydantic import BaseModel, ValidationError

from factor_journal.errors import FactorJournalError, UnknownUserError

DEFAULT_TTL = timedelta(days=14)
LINK_COLLECTION = "resume_links"
DEMO_SECRET = "factor-journal-demo-secret-not-for-production"
_SALT = "factor-journal.link.v1"

LinkKind = Literal["resume", "manager"]


class LinkError(FactorJournalError):
    """A link that cannot be honoured; the message is meant for the person holding it."""


class InvalidLinkError(LinkError):
    def __init__(self) -> None:
        super().__init__("This link is not valid. It may have been copied incompletely or altered.")


class ExpiredLinkError(LinkError):
    def __init__(self) -> None:
        super().__init__("This link has expired. Ask for a new one, or sign in.")


class RevokedLinkError(LinkError):
    def __init__(self) -> None:
        super().__init__("This link has been withdrawn. Ask for a new one, or sign in.")


class LinkClaims(BaseModel):
    link_id: str
    user_id: str
    session_id: str | None = None
    kind: LinkKind = "resume"
    ttl_seconds: int
    org_id: str | None = None


def link_secret() -> str:
    """The signing secret: FJ_LINK_SECRET, or a fixed demo secret (with a warning) under the emulators."""
    secret = os.environ.get("FJ_LINK_SECRET")
    if secret:
        return secret
    if os.environ.get("FIRESTORE_EMULATOR_HOST"):
        return DEMO_SECRET
    raise LinkError("FJ_LINK_SECRET is not set; links cannot be signed or checked without it.")


class LinkSigner:
    def __init__(self, client: firestore.Client, secret: str | None = None) -> None:
        self.client = client
        secret = secret or link_secret()
        if secret == DEMO_SECRET:
            warnings.warn("signing links with the demo secret (emulators only)", stacklevel=2)
        self.serializer = URLSafeTimedSerializer(secret, salt=_SALT)

    def _record(self, link_id: str) -> firestore.DocumentReference:
        return self.client.collection(LINK_COLLECTION).document(link_id)

    def issue(
        self,
        user_id: str,
        session_id: str | None = None,
        *,
        kind: LinkKind = "resume",
        ttl: timedelta = DEFAULT_TTL,
        org_id: str | None = None,
    ) -> str:
        """A new signed token for the user (and session); recorded so it can be revoked."""
        if not self.client.collection("users").document(user_id).get().exists:
            raise UnknownUserError(user_id)
        if ttl <= timedelta(0):
            raise LinkError("a link's lifetime must be positive")
        claims = LinkClaims(
            link_id=secrets.token_urlsafe(12), user_id=user_id, session_id=session_id, kind=kind,
            ttl_seconds=int(ttl.total_seconds()), org_id=org_id,
        )  # fmt: skip
        now = datetime.now(UTC)
        self._record(claims.link_id).set(
            {**claims.model_dump(), "created_at": now, "expires_at": now + ttl, "revoked_at": None}
        )
        return self.serializer.dumps(claims.model_dump())

    def verify(self, token: str | None) -> LinkClaims:
        """The claims of a valid link; raises InvalidLinkError, ExpiredLinkError or RevokedLinkError."""
        if not token or not isinstance(token, str) or len(token) > 2048:
            raise InvalidLinkError()
        try:
            payload, signed_at = self.serializer.loads(token, return_timestamp=True)
            claims = LinkClaims.model_validate(payload)
        except (BadSignature, ValidationError, TypeError, ValueError):
            raise InvalidLinkError() from None
        if datetime.now(UTC) - signed_at > timedelta(seconds=claims.ttl_seconds):
            raise ExpiredLinkError()
        record = self._record(claims.link_id).get()
        data = record.to_dict() if record.exists else None
        if data is None or data.get("user_id") != claims.user_id or data.get("kind") != claims.kind:
            raise InvalidLinkError()
        if data.get("revoked_at") is not None:
            raise RevokedLinkError()
        return claims

    def revoke(self, token_or_link_id: str) -> None:
        """Withdraw a link (by token or link id); idempotent."""
        link_id = token_or_link_id
        with contextlib.suppress(BadSignature, ValidationError, TypeError, ValueError):
            link_id = LinkClaims.model_validate(self.serializer.loads(token_or_link_id)).link_id
        record = self._record(link_id)
        if not record.get().exists:
            raise InvalidLinkError()
        record.update({"revoked_at": datetime.now(UTC)})


def link_url(base_url: str, token: str) -> str:
    """The address to put in an email: the app's base URL with the token as ``t``."""
    return f"{base_url.rstrip('/')}/?{urlencode({'t': token})}"
