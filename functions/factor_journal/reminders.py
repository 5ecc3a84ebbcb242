"""Bringing people back: reminder emails for people who went quiet with an incomplete assessment.

Each reminder is a document in ``mail`` shaped for the Firebase "Trigger Email"
extension (``to``, ``message.subject``, ``message.html``), with the person's
resume link and a short "where we were".  Promises: a person gets at most one
reminder per ``window`` (checked and recorded in one transaction with the mail
document), never one after opting out, and never one with a complete
assessment.

Every reminder carries a signed one-click unsubscribe link: in the text, to the
app's page that confirms it, and as ``List-Unsubscribe`` / ``List-Unsubscribe-Post``
in ``message.headers``, to the ``unsubscribe`` HTTP function that mail clients
POST to (RFC 8058).  The token names only the person, is signed with the link
secret under its own salt (so it can never open the app), does not expire, and
is honoured without signing in: ``unsubscribe`` sets ``reminders_opt_out``.
"""

from __future__ import annotations

import html
import os
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from urllib.parse import urlencode

from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter
from itsdangerous import BadSignature, URLSafeSerializer

from factor_journal.errors import UnknownUserError
from factor_journal.guidance import next_best_questions
from factor_journal.links import InvalidLinkError, LinkSigner, link_secret, link_url
from factor_journal.models import AssessmentSummary, UserProfile
from factor_journal.store import FactorJournalStore

MAIL_COLLECTION = "mail"
UNSUBSCRIBE_PAGE = "unsubscribe"  # the app's page that honours the link (url path)
_UNSUBSCRIBE_SALT = "factor-journal.unsubscribe.v1"


class UnsubscribeLinks:
    """Signed unsubscribe tokens: ``{"u": user_id}`` under their own salt, no expiry (an old email must still work)."""

    def __init__(self, secret: str | bytes | None = None) -> None:
        self.serializer = URLSafeSerializer(secret or link_secret(), salt=_UNSUBSCRIBE_SALT)

    @classmethod
    def like(cls, signer: LinkSigner) -> UnsubscribeLinks:
        """Unsubscribe links signed with the same secret as ``signer``'s resume links."""
        return cls(signer.serializer.secret_keys[-1])

    def token(self, user_id: str) -> str:
        return self.serializer.dumps({"u": user_id})

    def user_of(self, token: str | None) -> str:
        """The person a token was issued for; InvalidLinkError for anything altered or not ours."""
        if not token or not isinstance(token, str) or len(token) > 1024:
            raise InvalidLinkError()
        try:
            payload = self.serializer.loads(token)
        except (BadSignature, TypeError, ValueError):
            raise InvalidLinkError() from None
        user_id = payload.get("u") if isinstance(payload, dict) else None
        if not isinstance(user_id, str) or not user_id or "/" in user_id:
            raise InvalidLinkError()
        return user_id

    def url(self, base_url: str, user_id: str, page: str = UNSUBSCRIBE_PAGE) -> str:
        """``{base_url}/{page}?u=…`` (the app's confirming page by default; ``page=""`` for an endpoint)."""
        path = f"{base_url.rstrip('/')}/{page}" if page else base_url.rstrip("/")
        return f"{path}?{urlencode({'u': self.token(user_id)})}"


FUNCTIONS_REGION = "europe-west1"  # where functions/main.py deploys the ``unsubscribe`` HTTP function


def one_click_endpoint(project_id: str) -> str:
    """The address mail clients POST to for a one-click unsubscribe (RFC 8058): the ``unsubscribe`` HTTP
    function; ``FJ_UNSUBSCRIBE_URL`` overrides it (for example behind your own domain)."""
    default = f"https://{FUNCTIONS_REGION}-{project_id}.cloudfunctions.net/unsubscribe"
    return os.environ.get("FJ_UNSUBSCRIBE_URL") or default


ONE_CLICK_DONE = (
    "<!doctype html><meta charset='utf-8'><title>Unsubscribed · Factor Journal</title>"
    "<p style='font-family:sans-serif'>You are unsubscribed: we will not send you any more reminder emails.</p>"
)


def one_click_response(
    store: FactorJournalStore, links: UnsubscribeLinks, method: str, token: str | None
) -> tuple[int, str]:
    """(HTTP status, HTML) for a request to the ``unsubscribe`` function: POST (a mail client's one-click,
    body ``List-Unsubscribe=One-Click``) or GET (a person following the header's link) both opt out;
    a bad token is 400 and changes nothing; other methods are 405."""
    if method not in ("GET", "POST"):
        return 405, "Method not allowed"
    try:
        unsubscribe(store, links, token)
    except InvalidLinkError as error:
        return 400, html.escape(str(error))
    except UnknownUserError:
        return 200, ONE_CLICK_DONE  # nobody left to send reminders to
    return 200, ONE_CLICK_DONE


def unsubscribe(
    store: FactorJournalStore, links: UnsubscribeLinks, token: str | None, now: datetime | None = None
) -> UserProfile:
    """Honour an unsubscribe link: set ``reminders_opt_out`` (idempotent) and return the profile.

    Raises InvalidLinkError for a bad token and UnknownUserError when the person no longer exists;
    nothing is written then."""
    user_id = links.user_of(token)
    user_ref = store.client.collection("users").document(user_id)
    snapshot = user_ref.get()
    store.stats.reads += 1
    if not snapshot.exists:
        raise UnknownUserError(user_id)
    profile = UserProfile.model_validate(snapshot.to_dict())
    if not profile.reminders_opt_out:
        user_ref.set({"reminders_opt_out": True, "reminders_opt_out_at": now or datetime.now(UTC)}, merge=True)
        store.stats.writes += 1
    return profile.model_copy(update={"reminders_opt_out": True})


@dataclass(frozen=True)
class ReminderPolicy:
    inactive_after: timedelta = timedelta(days=7)
    window: timedelta = timedelta(days=7)
    batch_limit: int = 500


def _candidates(store: FactorJournalStore, cutoff: datetime, limit: int) -> list[UserProfile]:
    """Members whose last activity (or, never active, whose registration) is older than ``cutoff``."""
    users = store.client.collection("users")
    quiet = users.where(filter=FieldFilter("last_active", "<", cutoff)).limit(limit)
    silent = (
        users.where(filter=FieldFilter("last_active", "==", None))
        .where(filter=FieldFilter("created_at", "<", cutoff))
        .limit(limit)
    )
    found: dict[str, UserProfile] = {}
    for query in (quiet, silent):
        snapshots = list(query.stream())
        for snapshot in snapshots:
            found[snapshot.id] = UserProfile.model_validate(snapshot.to_dict())
    return [p for p in found.values() if p.role != "manager" and p.email and not p.reminders_opt_out]


def compose(
    profile: UserProfile, summary: AssessmentSummary, url: str, next_question: str | None, unsubscribe_url: str,
    one_click_url: str | None = None,
) -> dict[str, object]:  # fmt: skip
    """The mail's ``message``: subject, HTML (where we were, progress, the next question, the resume link,
    the unsubscribe link to the app's confirming page) and the ``List-Unsubscribe`` headers (RFC 2369 /
    RFC 8058: ``one_click_url`` accepts the mail client's POST; without it the header names the page)."""
    name = html.escape(profile.display_name.split(" (")[0] or "there")
    overall = summary.overall
    lines = [f"<p>Hello {name},</p>"]
    last = summary.last_conversation
    if last is not None:
        lines.append(
            f"<p>When we last talked ({last.timestamp:%d %B %Y}), we were discussing "
            f"<strong>{html.escape(last.topic)}</strong>.</p>"
        )
    else:
        lines.append("<p>We have not started your AI-readiness conversation yet.</p>")
    lines.append(
        f"<p>Your assessment is {overall.completeness:.0%} mapped "
        f"({overall.total_factors_assessed} of {overall.total_factors} factors); "
        f"decision tier: {html.escape(overall.decision_tier_name)}.</p>"
    )
    if next_question:
        lines.append(f"<p>Next, we would like to ask: <em>{html.escape(next_question)}</em></p>")
    lines.append(f'<p><a href="{html.escape(url, quote=True)}">Pick up where we left off</a> (the link is valid for 14 days).</p>')
    lines.append(
        f'<p style="color:#64748b;font-size:small">Don\'t want these reminders? '
        f'<a href="{html.escape(unsubscribe_url, quote=True)}">Unsubscribe with one click</a>.</p>'
    )
    return {
        "subject": "Pick up your AI-readiness assessment where we left off",
        "html": "\n".join(lines),
        "headers": (
            {"List-Unsubscribe": f"<{one_click_url}>", "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"}
            if one_click_url else {"List-Unsubscribe": f"<{unsubscribe_url}>"}
        ),
    }


def send_due_reminders(
    store: FactorJournalStore, signer: LinkSigner, base_url: str, now: datetime | None = None,
    policy: ReminderPolicy = ReminderPolicy(),
) -> list[str]:  # fmt: skip
    """Queue reminder mail for everyone due; returns the ids of the mail documents written."""
    now = now or datetime.now(UTC)
    sent = []
    for profile in _candidates(store, now - policy.inactive_after, policy.batch_limit):
        summary = store.summary(profile.user_id)
        if summary is None or summary.overall.completeness >= 1.0:
            continue
        mail_id = _send_once(store, signer, base_url, profile, summary, now, policy)
        if mail_id:
            sent.append(mail_id)
    return sent


def _send_once(
    store: FactorJournalStore, signer: LinkSigner, base_url: str, profile: UserProfile,
    summary: AssessmentSummary, now: datetime, policy: ReminderPolicy,
) -> str | None:  # fmt: skip
    user_ref = store.client.collection("users").document(profile.user_id)
    session_id = summary.last_conversation.session_id if summary.last_conversation else None
    questions = next_best_questions(store.catalog, store.graph, summary, limit=1)
    mail_ref = store.client.collection(MAIL_COLLECTION).document()
    token_box: dict[str, str] = {}
    unsubscribe_links = UnsubscribeLinks.like(signer)

    @firestore.transactional
    def run(transaction: firestore.Transaction) -> str | None:
        current = UserProfile.model_validate(user_ref.get(transaction=transaction).to_dict())
        if current.reminders_opt_out:
            return None
        if current.last_reminded_at is not None and now - current.last_reminded_at < policy.window:
            return None
        if "token" not in token_box:
            token_box["token"] = signer.issue(profile.user_id, session_id)
        message = compose(
            current, summary, link_url(base_url, token_box["token"]), questions[0].question if questions else None,
            unsubscribe_links.url(base_url, profile.user_id),
            unsubscribe_links.url(one_click_endpoint(store.client.project), profile.user_id, page=""),
        )  # fmt: skip
        transaction.set(
            mail_ref,
            {"to": [current.email], "message": message, "user_id": profile.user_id, "kind": "resume_reminder", "created_at": now},
        )
        transaction.set(user_ref, {"last_reminded_at": now}, merge=True)
        return mail_ref.id

    return store.run_transaction(run)
