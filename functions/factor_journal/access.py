"""Who a link lets in, re-checked on every interaction of an open app session.

``AccessChecker.viewer(token)`` promises: the viewer returned is what the link and the
current data allow *now*, never what they allowed when the session started.  Each call
re-verifies the link (signature, lifetime, its record: not revoked, not expired; see
``links.LinkSigner``) and the viewer's standing:

* a resume link opens the pages of a person whose profile still exists;
* a manager link opens an organisation only while ``organisations/{org}.managers`` lists the
  manager (``OrganisationDirectory.require_manager``): removal takes effect at once.

A check is cached for ``ttl`` (seconds, from the signer's clock), so a page that reruns on
every click costs at most a few document reads every few seconds, and a revocation, expiry,
removal or erasure takes effect on the next interaction after that.
"""

from __future__ import annotations

import threading
from datetime import datetime, timedelta
from typing import Literal

from pydantic import BaseModel

from factor_journal.links import RECORD_TTL, LinkClaims, LinkError, LinkSigner
from factor_journal.models import UserProfile
from factor_journal.organisation import DamagedOrganisationError, NotAManagerError, OrganisationDirectory
from factor_journal.store import FactorJournalStore


class AccessChangedError(LinkError):
    """The link is still valid, but what it opened is gone (a person erased, a manager removed)."""

    def __init__(self) -> None:
        super().__init__("This link no longer opens anything: the account has changed.")


class Viewer(BaseModel):
    """Who is looking: a person (resume link) or the manager of ``org_id`` (manager link)."""

    user_id: str
    kind: Literal["resume", "manager"]
    org_id: str | None = None
    session_id: str | None = None
    display_name: str = ""
    link_expires_at: datetime | None = None  # when the link in use stops working


class AccessChecker:
    def __init__(self, signer: LinkSigner, store: FactorJournalStore, ttl: timedelta = RECORD_TTL) -> None:
        self.signer = signer
        self.store = store
        self.directory = OrganisationDirectory(store)
        self.ttl = ttl
        self._checked: dict[str, tuple[datetime, Viewer]] = {}
        self._guard = threading.Lock()

    def viewer(self, token: str | None) -> Viewer:
        """The viewer this token admits now; raises a LinkError subclass (a message for the person) otherwise."""
        now = self.signer.clock()
        with self._guard:
            cached = self._checked.get(token or "")
        if cached is not None and timedelta(0) <= now - cached[0] < self.ttl:
            return cached[1]
        try:
            viewer = self._check(token)
        except LinkError:
            with self._guard:
                self._checked.pop(token or "", None)
            raise
        with self._guard:
            if len(self._checked) > 10_000:
                self._checked.clear()
            self._checked[token or ""] = (now, viewer)
        return viewer

    def _check(self, token: str | None) -> Viewer:
        claims = self.signer.verify(token)
        profile, org_id = self.admitted(claims)
        return Viewer(
            user_id=claims.user_id,
            kind=claims.kind,
            org_id=org_id,
            session_id=claims.session_id,
            display_name=profile.display_name or claims.user_id,
            link_expires_at=claims.expires_at,
        )

    def admitted(self, claims: LinkClaims) -> tuple[UserProfile, str | None]:
        """Whom a link's claims open today, and in which organisation: the person, while they exist; the
        manager, while their organisation lists them.  AccessChangedError otherwise (read now, never cached)."""
        if claims.kind == "manager":
            try:
                profile = self.directory.require_manager(claims.user_id, claims.org_id)
            except (NotAManagerError, DamagedOrganisationError):  # a list that does not read names nobody
                raise AccessChangedError() from None
            return profile, claims.org_id
        found = self.store.get_user(claims.user_id)
        if found is None:
            raise AccessChangedError()
        return found, found.org_id

    def forget(self) -> None:
        """Drop every cached check (the next call of each token re-verifies)."""
        with self._guard:
            self._checked.clear()
