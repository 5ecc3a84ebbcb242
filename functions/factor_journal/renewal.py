"""A new link for someone whose link expired: there is no sign-in, only links, so a person who comes back after the
link's lifetime (14 days by default) would otherwise be locked out until the next reminder.

``send_new_link(…, token, …)`` promises: a new link, of the same kind and for the same person, session and
organisation as the expired one, is mailed only to the address on file for the person the link was issued to (never
shown to whoever holds the old link, who may have been forwarded it), and only when

* the old link is ours and unaltered, expired and never withdrawn (``LinkSigner.renewable``: a withdrawn link stays
  withdrawn);
* it would still open something today (``AccessChecker.admitted``: the person exists; a manager is still listed);
* the person has an email address.

At most one such mail per person per clock hour (its id names the person and the hour, created only if absent), so
pressing the button again, or holding several old links, sends nothing more.  Nothing else is written: no reminder
window is used up, and no link is issued when no mail is sent.  The mail is queued in one transaction with the
person's profile, so an erasure running meanwhile leaves no mail to them behind.
"""

from __future__ import annotations

import html
from datetime import UTC, datetime
from enum import StrEnum

from factor_journal.access import AccessChecker
from factor_journal.links import LinkClaims, LinkSigner, link_url
from factor_journal.models import UserProfile
from factor_journal.repositories.mail import MailDocument, MailMessage
from factor_journal.settings import settings
from factor_journal.store import FactorJournalStore


class Renewal(StrEnum):
    sent = "sent"
    sent_already = "sent_already"  # this hour's mail to the person exists
    no_address = "no_address"


SAID = {
    Renewal.sent: "A new link is on its way to the email address this one was sent to. It can take a few minutes; "
    "if it does not arrive, look in your spam folder.",
    Renewal.sent_already: "A new link was sent to your email address within the last hour. Please open that one.",
    Renewal.no_address: "We have no email address to send a new link to. Ask the person who invited you to Factor "
    "Journal for a new link.",
}


def renewal_mail_id(user_id: str, now: datetime) -> str:
    """The id of the person's new-link mail for the clock hour of ``now`` (UTC): one per person per hour."""
    return f"new-link-{user_id}-{now.astimezone(UTC):%Y%m%d%H}"


def compose_new_link(profile: UserProfile, claims: LinkClaims, url: str, now: datetime) -> MailDocument:
    """The mail carrying the new link: what it opens (the person's assessment, or the organisation's progress for a
    manager), how long it works, and that it was asked for from an expired link (ignore it if you did not)."""
    name = html.escape(profile.display_name.split(" (")[0] or "there")
    opens = "your organisation's progress" if claims.kind == "manager" else "your AI-readiness assessment"
    days = f"{settings().link_ttl_days:g}"
    body = "\n".join(
        [
            f"<p>Hello {name},</p>",
            "<p>Someone opened an expired Factor Journal link of yours and asked for a new one.</p>",
            f'<p><a href="{html.escape(url, quote=True)}">Open {opens}</a> (the link is valid for {days} days).</p>',
            "<p style='color:#64748b;font-size:small'>If that was not you, you can ignore this email: only you "
            "received the new link.</p>",
        ]
    )
    return MailDocument(
        to=[profile.email],
        message=MailMessage(subject="Your new Factor Journal link", html=body),
        user_id=claims.user_id,
        kind="new_link",
        created_at=now,
    )


def send_new_link(
    store: FactorJournalStore, signer: LinkSigner, token: str | None, base_url: str, now: datetime | None = None
) -> Renewal:
    """Mail a new link for an expired one (see the module's promise).  Raises the ``LinkError`` that says why not
    (altered or not ours, withdrawn, still working, or the account has changed)."""
    now = now or signer.clock()
    claims = signer.renewable(token)
    profile = AccessChecker(signer, store).admitted(claims)[0]
    if not profile.email:
        return Renewal.no_address
    mail_id = renewal_mail_id(claims.user_id, now)
    if store.mail.exists(mail_id):
        return Renewal.sent_already
    new_token = signer.issue(claims.user_id, claims.session_id, kind=claims.kind, org_id=claims.org_id)
    document = compose_new_link(profile, claims, link_url(base_url, new_token), now)
    if store.mail.create_once(mail_id, document):
        return Renewal.sent
    signer.revoke(new_token)  # another press won the race: its mail carries the link
    return Renewal.sent_already
