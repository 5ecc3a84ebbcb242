"""Bringing people back: reminder emails for people who went quiet with an incomplete assessment.

Each reminder is a document in ``mail`` shaped for the Firebase "Trigger Email"
extension (``to``, ``message.subject``, ``message.html``), with the person's
resume link and a short "where we were".  Promises: a person gets at most one
reminder per ``window`` (checked and recorded in one transaction with the mail
document), never one after opting out, and never one with a complete
assessment.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter

from factor_journal.guidance import next_best_questions
from factor_journal.links import LinkSigner, link_url
from factor_journal.models import AssessmentSummary, UserProfile
from factor_journal.store import FactorJournalStore

MAIL_COLLECTION = "mail"


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


def compose(profile: UserProfile, summary: AssessmentSummary, url: str, next_question: str | None) -> dict[str, str]:
    """Subject and HTML of a reminder: where we were, progress, the next question, the link."""
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
    lines.append("<p>To stop these reminders, reply with \"unsubscribe\".</p>")
    return {"subject": "Pick up your AI-readiness assessment where we left off", "html": "\n".join(lines)}


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

    @firestore.transactional
    def run(transaction: firestore.Transaction) -> str | None:
        current = UserProfile.model_validate(user_ref.get(transaction=transaction).to_dict())
        if current.reminders_opt_out:
            return None
        if current.last_reminded_at is not None and now - current.last_reminded_at < policy.window:
            return None
        if "token" not in token_box:
            token_box["token"] = signer.issue(profile.user_id, session_id)
        message = compose(current, summary, link_url(base_url, token_box["token"]), questions[0].question if questions else None)
        transaction.set(
            mail_ref,
            {"to": [current.email], "message": message, "user_id": profile.user_id, "kind": "resume_reminder", "created_at": now},
        )
        transaction.set(user_ref, {"last_reminded_at": now}, merge=True)
        return mail_ref.id

    return store.run_transaction(run)
