"""Bringing people back: reminder emails for people who went quiet with an incomplete assessment or with answers
due for a re-check.

Each reminder is a document in ``mail`` shaped for the Firebase "Trigger Email"
extension (``to``, ``message.subject``, ``message.html``), with the person's
resume link and a short "where we were".  Promises: a person gets at most one
reminder per ``window`` (checked and recorded in one transaction with the mail
document, whose id is derived from the person and the day, so a page processed
twice, or by two task instances at once, writes one mail), never one after
opting out, and never one with a complete assessment that has no answer due for a re-check.

Who is due is read in pages with cursors (:func:`due_page`), in two scans: people
whose last activity is older than the cut-off (``quiet``), and people never active
who registered before it (``silent``).  A page ends with the cursor of its last
person, so the next page (in this process or in another task) continues exactly
where it stopped: everyone due is seen once per night, whatever their number.

Every reminder carries a signed one-click unsubscribe link: in the text, to the
app's page that confirms it, and as ``List-Unsubscribe`` / ``List-Unsubscribe-Post``
in ``message.headers``, to the ``unsubscribe`` HTTP function that mail clients
POST to (RFC 8058).  The token names only the person, is signed with the link
secret under its own salt (so it can never open the app), does not expire, and
is honoured without signing in: ``unsubscribe`` sets ``reminders_opt_out``.
Opening a link (a GET, as mail scanners and link previewers do with every link in
a mail) never opts anyone out: the page and the function ask, and only a POST (the
page's button, the function's confirmation form, a mail client's one-click) does.
"""

from __future__ import annotations

import hashlib
import html
import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal
from urllib.parse import urlencode

from itsdangerous import BadSignature, URLSafeSerializer
from pydantic import BaseModel, Field, ValidationError

from factor_journal import freshness
from factor_journal.errors import UnknownUserError
from factor_journal.guidance import SuggestedQuestion, next_best_questions
from factor_journal.links import InvalidLinkError, LinkSigner, in_section, link_secret, link_url
from factor_journal.models import AssessmentSummary, UserProfile
from factor_journal.repositories.mail import MAIL_COLLECTION as MAIL_COLLECTION  # re-exported for callers
from factor_journal.repositories.mail import MailDocument, MailMessage
from factor_journal.settings import settings
from factor_journal.store import FactorJournalStore

log = logging.getLogger(__name__)

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
    return settings().unsubscribe_url or default


ONE_CLICK_DONE = (
    "<!doctype html><meta charset='utf-8'><title>Unsubscribed · Factor Journal</title>"
    "<p style='font-family:sans-serif'>You are unsubscribed: we will not send you any more reminder emails.</p>"
)


def one_click_confirmation(token: str) -> str:
    """The page a GET of the one-click address shows: it asks, and its button POSTs the one-click body
    (``List-Unsubscribe=One-Click``) to the same address with the same token."""
    action = html.escape(f"?{urlencode({'u': token})}", quote=True)
    return (
        "<!doctype html><meta charset='utf-8'><title>Reminder emails · Factor Journal</title>"
        "<div style='font-family:sans-serif'>"
        "<p>Do you want to stop the reminder emails from Factor Journal?</p>"
        f"<form method='post' action='{action}'>"
        "<input type='hidden' name='List-Unsubscribe' value='One-Click'>"
        "<button type='submit'>Unsubscribe from reminder emails</button></form>"
        "<p>Nothing changes until you press the button. Your assessment is kept as it is.</p></div>"
    )


def one_click_response(
    store: FactorJournalStore, links: UnsubscribeLinks, method: str, token: str | None
) -> tuple[int, str]:
    """(HTTP status, HTML) for a request to the ``unsubscribe`` function.  Only a POST opts out: a mail client's
    RFC 8058 one-click (body ``List-Unsubscribe=One-Click``) or the confirmation page's button.  A GET (or
    HEAD) changes nothing: mail scanners and link previewers fetch every link in a mail, so it only checks the
    token and shows the confirmation page, whose button POSTs.  A bad token is 400 and changes nothing; other
    methods are 405."""
    if method not in ("GET", "HEAD", "POST"):
        return 405, "Method not allowed"
    try:
        if method != "POST":
            links.user_of(token)  # nothing is read or written: the page only asks
            return 200, one_click_confirmation(token)  # type: ignore[arg-type]  # a valid token is a str
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
    profile = store.mail.opt_out(user_id, now or datetime.now(UTC))
    if profile is None:
        raise UnknownUserError(user_id)
    return profile


DEFAULT_PAGE_SIZE = 200
MAX_PAGE_SIZE = 1000

Scan = Literal["quiet", "silent"]
SCANS: tuple[Scan, ...] = ("quiet", "silent")
_SCAN_FIELD: dict[str, str] = {"quiet": "last_active", "silent": "created_at"}


@dataclass(frozen=True)
class ReminderPolicy:
    inactive_after: timedelta = timedelta(days=7)
    window: timedelta = timedelta(days=7)
    page_size: int = DEFAULT_PAGE_SIZE  # people read per page (one task's work)

    def __post_init__(self) -> None:
        if not 1 <= self.page_size <= MAX_PAGE_SIZE:
            raise ValueError(f"page_size must lie between 1 and {MAX_PAGE_SIZE}, got {self.page_size}")
        if self.inactive_after <= timedelta(0) or self.window <= timedelta(0):
            raise ValueError("inactive_after and window must be positive")


class Cursor(BaseModel):
    """Where a scan stopped: the ordering value and the document id of the last person read."""

    value: datetime
    user_id: str = Field(min_length=1)


@dataclass
class ReminderPage:
    """One page of a scan: the people read, and the cursor of the next page (None: the scan is done)."""

    people: list[UserProfile]
    next_cursor: Cursor | None


@dataclass
class PageOutcome:
    seen: int = 0
    mail_ids: list[str] = field(default_factory=list)
    next_cursor: Cursor | None = None


def mail_id_for(user_id: str, now: datetime) -> str:
    """The reminder's document id: one per person and (UTC) day, so repeated runs write it once."""
    digest = hashlib.sha256(user_id.encode()).hexdigest()[:16]
    return f"reminder-{now.astimezone(UTC):%Y-%m-%d}-{digest}"


def due_page(
    store: FactorJournalStore,
    scan: Scan,
    cutoff: datetime,
    cursor: Cursor | None = None,
    page_size: int = DEFAULT_PAGE_SIZE,
) -> ReminderPage:
    """People of ``scan`` who went quiet before ``cutoff``, in a stable order, after ``cursor``.

    ``quiet``: last activity before the cut-off, ordered by it; ``silent``: never active and
    registered before it, ordered by registration.  Ties are broken by document id, so a
    cursor is exact.  A full page returns the cursor of its last person (the next page may
    be empty); a short page ends the scan.  Everyone read is returned: who is actually
    reminded is decided per person (role, email, opt-out, window, completeness).
    """
    order_field = _SCAN_FIELD[scan]
    if scan == "quiet":
        filters: list[tuple[str, str, Any]] = [("last_active", "<", cutoff)]
    elif scan == "silent":
        filters = [("last_active", "==", None), ("created_at", "<", cutoff)]
    else:
        raise ValueError(f"unknown scan {scan!r}; expected one of {SCANS}")
    after = (cursor.value, cursor.user_id) if cursor is not None else None
    found = store.mail.people_page(order_field, filters, after, page_size)
    people = []
    for user_id, data in found:
        try:
            people.append(UserProfile.model_validate(data))
        except ValidationError as damage:  # one damaged profile never stops the page: the others are reminded
            log.warning("profile of %s no longer reads (%s): not reminded", user_id, damage.errors()[0]["loc"])
    next_cursor = None
    if len(found) == page_size:
        last_id, last = found[-1]
        next_cursor = Cursor(value=last.get(order_field), user_id=last_id)
    return ReminderPage(people=people, next_cursor=next_cursor)


def may_be_reminded(profile: UserProfile, now: datetime, policy: ReminderPolicy) -> bool:
    """What the page's own data already rules out (re-checked in the sending transaction)."""
    if profile.role == "manager" or not profile.email or profile.reminders_opt_out:
        return False
    return profile.last_reminded_at is None or now - profile.last_reminded_at >= policy.window


RECHECK_ANCHOR = "to-re-check"  # the overview's "To re-check" section
RECHECK_NAMED = 5


def in_words(items: list[str]) -> str:
    """Items as a sentence lists them: 'A', 'A and B', 'A, B and C'."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def compose(
    profile: UserProfile,
    summary: AssessmentSummary,
    url: str,
    next_question: SuggestedQuestion | None,
    unsubscribe_url: str,
    one_click_url: str | None = None,
    recheck: list[str] | None = None,
) -> dict[str, object]:
    """The mail's ``message``: subject, HTML (where we were, progress once something is assessed, how many answers
    are due for a re-check (``recheck``: their names, listed as a sentence) with a link to them, the next question
    and why it is asked, the resume link, the unsubscribe link to the app's confirming page) and the
    ``List-Unsubscribe`` headers (RFC 2369 / RFC 8058: ``one_click_url`` accepts the mail client's POST; without
    it the header names the page).  ``summary`` is the one the person sees today (aged: ``freshness``)."""
    recheck = recheck or []
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
    if overall.total_factors_assessed:  # nothing assessed: no figures to report, the conversation is the news
        lines.append(
            f"<p>Your assessment is {overall.completeness:.0%} mapped "
            f"({overall.total_factors_assessed} of {overall.total_factors} factors); "
            f"decision tier: {html.escape(overall.decision_tier_name)}.</p>"
        )
    if recheck:
        count = len(recheck)
        named = [html.escape(name) for name in recheck[:RECHECK_NAMED]]
        if count > RECHECK_NAMED:
            named.append(f"{count - RECHECK_NAMED} more")
        # no "long ago": an answer just sure enough is due a quarter of a half-life after it was said
        # (docs/freshness.md)
        lines.append(
            f"<p><strong>{count} answer{'s are' if count != 1 else ' is'} due for a re-check</strong>: "
            f"what you told us about {in_words(named)} counts for less as time passes, and things change. "
            f'<a href="{html.escape(in_section(url, RECHECK_ANCHOR), quote=True)}">'
            f"Re-check {'them' if count != 1 else 'it'}</a> — one click confirms what still holds.</p>"
        )
    if next_question:  # with why it is asked: a question the person answered before says it is asked again
        lines.append(
            f"<p>Next, we would like to ask: <em>{html.escape(next_question.question)}</em> "
            f"({html.escape(next_question.reason)})</p>"
        )
    lines.append(
        f'<p><a href="{html.escape(url, quote=True)}">Pick up where we left off</a> '
        f"(the link is valid for {settings().link_ttl_days:g} days).</p>"
    )
    lines.append(
        f'<p style="color:#64748b;font-size:small">Don\'t want these reminders? '
        f'<a href="{html.escape(unsubscribe_url, quote=True)}">Unsubscribe</a>.</p>'
    )
    complete = overall.completeness >= 1.0
    return {
        "subject": (
            f"{len(recheck)} answer{'s' if len(recheck) != 1 else ''} in your AI-readiness assessment to re-check"
            if recheck and complete
            else "Pick up your AI-readiness assessment where we left off"
        ),
        "html": "\n".join(lines),
        "headers": (
            {"List-Unsubscribe": f"<{one_click_url}>", "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"}
            if one_click_url
            else {"List-Unsubscribe": f"<{unsubscribe_url}>"}
        ),
    }


def send_reminders_page(
    store: FactorJournalStore,
    signer: LinkSigner,
    base_url: str,
    scan: Scan,
    now: datetime,
    cursor: Cursor | None = None,
    policy: ReminderPolicy = ReminderPolicy(),
) -> PageOutcome:
    """Read one page of ``scan`` after ``cursor`` and queue a reminder for each person due on it.

    Idempotent per day: processing the same page again (a retried or duplicated task)
    writes no second mail, because each mail's id is :func:`mail_id_for` the person and
    day and the window is checked in the writing transaction.
    """
    page = due_page(store, scan, now - policy.inactive_after, cursor, policy.page_size)
    mail_ids = remind(store, signer, base_url, page.people, now, policy)
    return PageOutcome(seen=len(page.people), mail_ids=mail_ids, next_cursor=page.next_cursor)


def remind(
    store: FactorJournalStore,
    signer: LinkSigner,
    base_url: str,
    people: list[UserProfile],
    now: datetime,
    policy: ReminderPolicy = ReminderPolicy(),
) -> list[str]:
    """Queue a reminder for each of ``people`` who is due at ``now``; returns the mail ids written.

    Per person: a member with an email, not opted out, not reminded within the window, and
    with an incomplete assessment or answers due for a re-check at ``now``.  Safe to repeat:
    see :func:`mail_id_for`.
    """
    mail_ids = []
    for profile in people:
        if not may_be_reminded(profile, now, policy):
            continue
        summary = store.summary(profile.user_id)
        if summary is None:
            continue
        fresh = freshness.assess(store.catalog, store.graph, summary, now)
        if summary.overall.completeness >= 1.0 and not fresh.to_recheck:
            continue
        mail_id = _send_once(store, signer, base_url, profile, fresh, now, policy)
        if mail_id:
            mail_ids.append(mail_id)
    return mail_ids


def send_due_reminders(
    store: FactorJournalStore,
    signer: LinkSigner,
    base_url: str,
    now: datetime | None = None,
    policy: ReminderPolicy = ReminderPolicy(),
) -> list[str]:
    """Queue reminder mail for everyone due, page by page in this process; returns the mail ids written.

    The deployed nightly job runs the same pages as tasks (``factor_journal.nightly``).
    """
    now = now or datetime.now(UTC)
    sent: list[str] = []
    for scan in SCANS:
        cursor: Cursor | None = None
        while True:
            outcome = send_reminders_page(store, signer, base_url, scan, now, cursor, policy)
            sent.extend(outcome.mail_ids)
            if outcome.next_cursor is None:
                break
            cursor = outcome.next_cursor
    return sent


def _send_once(
    store: FactorJournalStore,
    signer: LinkSigner,
    base_url: str,
    profile: UserProfile,
    fresh: freshness.FreshAssessment,
    now: datetime,
    policy: ReminderPolicy,
) -> str | None:
    summary = fresh.summary
    session_id = summary.last_conversation.session_id if summary.last_conversation else None
    questions = next_best_questions(
        store.catalog, store.graph, summary, limit=1, stale=fresh.stale, as_said=fresh.stored
    )
    recheck = [store.graph.name(item.factor_id) for item in fresh.to_recheck]
    token_box: dict[str, str] = {}
    unsubscribe_links = UnsubscribeLinks.like(signer)

    def build(current: UserProfile) -> MailDocument | None:
        if current.reminders_opt_out:
            return None
        if current.last_reminded_at is not None and now - current.last_reminded_at < policy.window:
            return None
        if "token" not in token_box:
            try:
                token_box["token"] = signer.issue(profile.user_id, session_id)
            except UnknownUserError:  # erased while the page was read: nobody to remind
                return None
        message = compose(
            current,
            summary,
            link_url(base_url, token_box["token"]),
            questions[0] if questions else None,
            unsubscribe_links.url(base_url, profile.user_id),
            unsubscribe_links.url(one_click_endpoint(store.project), profile.user_id, page=""),
            recheck=recheck,
        )
        return MailDocument(
            to=[current.email],
            message=MailMessage.model_validate(message),
            user_id=profile.user_id,
            kind="resume_reminder",
            created_at=now,
        )

    return store.mail.queue_once(profile.user_id, mail_id_for(profile.user_id, now), build)
