"""Signed, expiring, revocable links into the app (resume links for users, manager links).

A link carries a token signed with ``itsdangerous`` (HMAC, timestamped) naming
the link id, the user, the session and the kind of access.  Each link also has
a record at ``resume_links/{link_id}`` so it can be revoked; clients can
neither read nor write those records (see firestore.rules).

``verify`` promises: a token opens exactly the user it was issued for, and only
while its signature is intact, neither its signed lifetime nor its record's
``expires_at`` has passed, and its record exists, matches, and is not revoked.
Anything else raises a ``LinkError`` subclass whose message can be shown to a
person as it is.  The record is read at most once per ``record_ttl`` (a few
seconds) per link, so an open app can re-verify on every interaction and a
revocation or expiry takes effect within seconds.  Time comes from an
injectable clock.

The signing secret (``link_secret``): FJ_LINK_SECRET, which in production comes
from Secret Manager (``functions/main.py`` declares it as a firebase-functions
``SecretParam``; the dashboard gets it from its environment).  The public demo
secret, a missing secret and secrets shorter than MIN_SECRET_LENGTH are refused
unless the emulators are in use.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import threading
import warnings
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Literal
from urllib.parse import urlencode, urlsplit, urlunsplit

from itsdangerous import BadSignature, TimestampSigner, URLSafeTimedSerializer
from pydantic import BaseModel, ValidationError

from factor_journal.errors import FactorJournalError
from factor_journal.repositories.links import LINK_COLLECTION, LinkRecord, LinkRecords
from factor_journal.settings import settings

DEFAULT_TTL = settings().link_ttl  # FJ_LINK_TTL_DAYS (14 days unless configured)
__all__ = ["DEFAULT_TTL", "LINK_COLLECTION", "LinkSigner", "in_section", "is_section_id", "link_url"]
DEMO_SECRET = "factor-journal-demo-secret-not-for-production"
MIN_SECRET_LENGTH = 32
RECORD_TTL = timedelta(seconds=5)
_SALT = "factor-journal.link.v1"

Clock = Callable[[], datetime]


def system_clock() -> datetime:
    return datetime.now(UTC)


LinkKind = Literal["resume", "manager"]


class LinkError(FactorJournalError):
    """A link that cannot be honoured; the message is meant for the person holding it."""


class InvalidLinkError(LinkError):
    def __init__(self) -> None:
        super().__init__("This link is not valid. It may have been copied incompletely or altered.")


# What someone holding a link that no longer works can do: there is no sign-in, only links.  An expired link
# can have a new one sent to the address on file (``renewal``); a withdrawn one cannot.
NEW_LINK = "Open the link in your latest Factor Journal email, or reply to the email this link came in for a new one."


class ExpiredLinkError(LinkError):
    def __init__(self, expired_at: datetime | None = None) -> None:
        when = f" on {expired_at:%d %b %Y}" if expired_at is not None else ""
        super().__init__(f"This link expired{when}. A new one can be sent to the email address it came to.")


class LinkStillWorksError(LinkError):
    def __init__(self) -> None:
        super().__init__("This link still works: open it again to continue.")


class RevokedLinkError(LinkError):
    def __init__(self) -> None:
        super().__init__(f"This link has been withdrawn. {NEW_LINK}")


class LinkClaims(BaseModel):
    link_id: str
    user_id: str
    session_id: str | None = None
    kind: LinkKind = "resume"
    ttl_seconds: int
    org_id: str | None = None


class VerifiedLink(LinkClaims):
    """A valid link's claims and when it stops working (the earlier of its signed lifetime and its record's)."""

    expires_at: datetime


class LinkSecretError(LinkError):
    """The configured signing secret must not be used here (a message for whoever deploys)."""


def emulators_in_use() -> bool:
    """True when Firestore is the local emulator (the only place the demo secret is acceptable)."""
    return bool(os.environ.get("FIRESTORE_EMULATOR_HOST"))


def link_secret(secret: str | None = None) -> str:
    """The signing secret: ``secret`` or FJ_LINK_SECRET; the demo secret when unset under the emulators.

    Outside the emulators a missing secret, the public demo secret and secrets shorter than
    MIN_SECRET_LENGTH characters raise LinkSecretError: anyone could forge links with them."""
    secret = secret if secret is not None else os.environ.get("FJ_LINK_SECRET")
    if emulators_in_use():
        return secret or DEMO_SECRET
    if not secret:
        raise LinkSecretError("FJ_LINK_SECRET is not set; links cannot be signed or checked without it.")
    if secret == DEMO_SECRET:
        raise LinkSecretError("FJ_LINK_SECRET is the public demo secret, which is refused outside the emulators.")
    if len(secret) < MIN_SECRET_LENGTH:
        raise LinkSecretError(
            f"FJ_LINK_SECRET must be at least {MIN_SECRET_LENGTH} characters (e.g. openssl rand -hex 32)."
        )
    return secret


class LinkSigner:
    def __init__(
        self,
        records: LinkRecords,
        secret: str | None = None,
        *,
        clock: Clock | None = None,
        record_ttl: timedelta = RECORD_TTL,
    ) -> None:
        """``records``: where links are recorded (``FactorJournalStore.links``); ``clock`` gives the current
        time (UTC) for signing, expiry and the record cache."""
        self.records = records
        secret = link_secret(secret)
        if secret == DEMO_SECRET:
            warnings.warn("signing links with the demo secret (emulators only)", stacklevel=2)
        self.clock: Clock = clock or system_clock
        self.record_ttl = record_ttl
        self._records: dict[str, tuple[datetime, LinkRecord | None]] = {}
        self._records_guard = threading.Lock()
        signer = self

        class _ClockedSigner(TimestampSigner):
            def get_timestamp(self) -> int:
                return int(signer.clock().timestamp())

        self.serializer = URLSafeTimedSerializer(secret, salt=_SALT, signer=_ClockedSigner)

    def issue(
        self,
        user_id: str,
        session_id: str | None = None,
        *,
        kind: LinkKind = "resume",
        ttl: timedelta = DEFAULT_TTL,
        org_id: str | None = None,
    ) -> str:
        """A new signed token for the user (and session); recorded so it can be revoked (UnknownUserError for
        someone who does not exist when it is recorded)."""
        if ttl <= timedelta(0):
            raise LinkError("a link's lifetime must be positive")
        claims = LinkClaims(
            link_id=secrets.token_urlsafe(12),
            user_id=user_id,
            session_id=session_id,
            kind=kind,
            ttl_seconds=int(ttl.total_seconds()),
            org_id=org_id,
        )
        now = self.clock()
        self.records.create(LinkRecord(**claims.model_dump(), created_at=now, expires_at=now + ttl))
        return self.serializer.dumps(claims.model_dump())

    def verify(self, token: str | None) -> VerifiedLink:
        """The claims of a valid link; raises InvalidLinkError, ExpiredLinkError or RevokedLinkError."""
        claims, signed_at = self._signed_claims(token)
        now = self.clock()
        signed_until = signed_at + timedelta(seconds=claims.ttl_seconds)
        if now > signed_until:
            raise ExpiredLinkError(signed_until)
        record = self._honoured(claims, self._record_data(claims.link_id, now))
        if record.expires_at is None or now >= record.expires_at:
            raise ExpiredLinkError(record.expires_at)
        return VerifiedLink(**claims.model_dump(), expires_at=min(signed_until, record.expires_at))

    def renewable(self, token: str | None) -> LinkClaims:
        """The claims of a link we issued that has stopped working only because it expired: a new link may be
        sent for them, to the address on file (``renewal``).  The signature must be intact (any age) and the
        record present, matching and not withdrawn, read afresh (no cache).  Raises InvalidLinkError for anything
        altered, not ours or whose record is gone (an erased person), RevokedLinkError for a withdrawn link and
        LinkStillWorksError for one that has not expired."""
        claims = self._signed_claims(token)[0]
        # read afresh, and kept for verify below (whose own read is skipped for a signature that expired first)
        self._honoured(claims, self._record_data(claims.link_id, self.clock(), fresh=True))
        try:
            self.verify(token)
        except ExpiredLinkError:
            return claims
        raise LinkStillWorksError()

    def _signed_claims(self, token: str | None) -> tuple[LinkClaims, datetime]:
        """The claims a token carries and when it was signed, if its signature is ours (any age)."""
        if not token or not isinstance(token, str) or len(token) > 2048:
            raise InvalidLinkError()
        try:
            payload, signed_at = self.serializer.loads(token, return_timestamp=True)
            return LinkClaims.model_validate(payload), signed_at
        except (BadSignature, ValidationError, TypeError, ValueError):
            raise InvalidLinkError() from None

    @staticmethod
    def _honoured(claims: LinkClaims, record: LinkRecord | None) -> LinkRecord:
        """The link's record, when it is this link's (same person, same kind) and not withdrawn; InvalidLinkError
        or RevokedLinkError otherwise."""
        if record is None or record.user_id != claims.user_id or record.kind != claims.kind:
            raise InvalidLinkError()
        if record.revoked_at is not None:
            raise RevokedLinkError()
        return record

    def _record_data(self, link_id: str, now: datetime, *, fresh: bool = False) -> LinkRecord | None:
        """The link's record, read at most once per ``record_ttl`` (one document read); ``fresh``: read now whatever
        was kept, and kept from now."""
        with self._records_guard:
            cached = self._records.get(link_id)
        if not fresh and cached is not None and timedelta(0) <= now - cached[0] < self.record_ttl:
            return cached[1]
        data = self.records.get(link_id)
        with self._records_guard:
            if len(self._records) > 10_000:  # a bound, not a policy: old entries are simply re-read
                self._records.clear()
            self._records[link_id] = (now, data)
        return data

    def revoke(self, token_or_link_id: str) -> None:
        """Withdraw a link (by token or link id); idempotent."""
        link_id = token_or_link_id
        with contextlib.suppress(BadSignature, ValidationError, TypeError, ValueError):
            link_id = LinkClaims.model_validate(self.serializer.loads(token_or_link_id)).link_id
        if not self.records.revoke(link_id, self.clock()):
            raise InvalidLinkError()
        with self._records_guard:
            self._records.pop(link_id, None)


SECTION_PARAM = "at"  # a link's section of the page it opens (the heading's anchor id)
SECTION_ID = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")  # the whole value (``is_section_id``), nothing around it


def is_section_id(value: object) -> bool:
    """Whether ``value`` is a section id as a whole: lower-case letters, digits and "-", at most 64 characters,
    and nothing else -- not even a trailing line break (``re.match`` with ``$`` lets one through)."""
    return isinstance(value, str) and SECTION_ID.fullmatch(value) is not None


def link_url(base_url: str, token: str, section: str | None = None) -> str:
    """The address to put in an email: the app's base URL with the token as ``t`` (in ``section``: see
    ``in_section``)."""
    url = f"{base_url.rstrip('/')}/?{urlencode({'t': token})}"
    return url if section is None else in_section(url, section)


def in_section(url: str, section: str) -> str:
    """``url`` opening scrolled to ``section`` (a heading's anchor id; ValueError for anything else): as the ``at``
    parameter, which the app reads as it opens, and as the ``#`` fragment.  The fragment alone is lost: the app
    takes the token out of the address as it opens, and the browser's fragment goes with it."""
    if not is_section_id(section):
        raise ValueError(f"not a section id: {section!r}")
    parts = urlsplit(url)
    query = "&".join(part for part in (parts.query, urlencode({SECTION_PARAM: section})) if part)
    return urlunsplit(parts._replace(query=query, fragment=section))
