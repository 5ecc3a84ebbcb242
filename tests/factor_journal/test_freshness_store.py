"""Freshness on the emulator: the nightly reminder counts and links the answers due for a re-check, the team
view ages the roll-up rows, the nightly figures are aged to their day, the as-of view ages to its date, and a
confirmation refreshes an answer in one transaction without touching the stored journal."""

from __future__ import annotations

import html as html_module
import math
import uuid
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
from pydantic import ValidationError

from factor_journal import freshness
from factor_journal.links import LinkSigner
from factor_journal.models import InferredUpdate, UserProfile
from factor_journal.organisation import OrganisationDirectory, TeamFilter
from factor_journal.reminders import MAIL_COLLECTION, ReminderPolicy, send_due_reminders
from factor_journal.repositories.links import LinkRecords
from factor_journal.upkeep import RowUpkeep

POLICY = ReminderPolicy(inactive_after=timedelta(days=7), window=timedelta(days=7))
NOW = datetime.now(UTC)


@pytest.fixture
def signer(firestore_client) -> LinkSigner:
    return LinkSigner(LinkRecords(firestore_client), secret="test-secret")


def said(store, user: str, factor: str, days_ago: float, value: float = 30, confidence: float = 0.7) -> None:
    store.record_inference(
        user,
        InferredUpdate(
            factor_id=factor,
            value=value,
            confidence=confidence,
            rationale=f"about {factor}",
            conversation_excerpt="User: …",
            session_id="kickoff",
            observed_at=NOW - timedelta(days=days_ago),
        ),
    )


def quiet_person(store, org_id: str | None = None, name: str = "Pat Doe") -> str:
    user = f"fresh-{uuid.uuid4().hex[:10]}"
    store.register_user(UserProfile(user_id=user, display_name=name, email=f"{user}@example.com", org_id=org_id))
    return user


def went_quiet(store, user: str, days: float = 12) -> None:
    store.client.document(f"users/{user}").update(
        {"last_active": NOW - timedelta(days=days), "created_at": NOW - timedelta(days=500)}
    )


def mail_for(store, user: str) -> list[dict]:
    return [
        d.to_dict() for d in store.client.collection(MAIL_COLLECTION).stream() if d.to_dict().get("user_id") == user
    ]


def test_the_nightly_reminder_says_how_many_answers_are_due_and_links_to_them(small_store, signer):
    user = quiet_person(small_store)
    said(small_store, user, "quality", 400)
    said(small_store, user, "governance", 380)
    said(small_store, user, "storage", 3)  # fresh
    went_quiet(small_store, user)
    send_due_reminders(small_store, signer, "https://app.example", policy=POLICY)
    [mail] = mail_for(small_store, user)
    html = mail["message"]["html"]
    assert "<strong>2 answers are due for a re-check</strong>" in html
    assert "what you told us about Quality and Governance counts" in html or "about Governance and Quality" in html
    link = html.split("Re-check them")[0].rsplit('href="', 1)[1].split('"')[0]
    assert link.startswith("https://app.example/?t=") and link.endswith("&amp;at=to-re-check#to-re-check")
    query = parse_qs(urlsplit(html_module.unescape(link)).query)
    assert query["at"] == ["to-re-check"] and signer.verify(query["t"][0]).user_id == user
    assert "Next, we would like to ask: <em>How clean is your data?</em>" in html  # the stale, high-impact one


def test_a_complete_assessment_with_answers_due_is_reminded_to_recheck_them(small_store, signer, small_catalog):
    stale, fresh = quiet_person(small_store), quiet_person(small_store)
    for factor in small_catalog.assessable_factors:
        said(small_store, stale, factor.id, 400, value=50, confidence=0.8)
        said(small_store, fresh, factor.id, 20, value=50, confidence=0.8)
    went_quiet(small_store, stale, 20)
    went_quiet(small_store, fresh, 20)
    send_due_reminders(small_store, signer, "https://app.example", policy=POLICY)
    assert mail_for(small_store, fresh) == []  # complete and fresh: nothing to ask
    [mail] = mail_for(small_store, stale)
    count = len(small_catalog.assessable_factors)
    assert mail["message"]["subject"] == f"{count} answers in your AI-readiness assessment to re-check"
    assert f"<strong>{count} answers are due for a re-check</strong>" in mail["message"]["html"]


def test_the_team_view_ages_the_rows_and_filters_people_with_answers_due(small_store, make_user):
    org = f"org-{uuid.uuid4().hex[:6]}"
    directory = OrganisationDirectory(small_store)
    directory.create(org, "Aged Org")
    old, new = quiet_person(small_store, org, "Olga"), quiet_person(small_store, org, "Nora")
    for factor in ("quality", "governance", "storage"):
        said(small_store, old, factor, 400, value=50, confidence=0.8)
        said(small_store, new, factor, 2, value=50, confidence=0.8)
    said(small_store, old, "skills", 1, value=50, confidence=0.8)
    manager = make_user(small_store, org_id=org)
    directory.assign_manager(org, manager)
    olga, nora = (next(p for p in directory.rows(org) if p.user_id == u) for u in (old, new))
    assert olga.decision_tier == "medium_risk"  # as stored: 80% mapped at 0.8
    assert (olga.fresh.due, olga.fresh.share) == (3, 0.75)  # aged when the row was written
    assert olga.fresh.decision_tier != "medium_risk"  # aged, 0.8 said 13 months ago counts for about 0.37
    assert olga.fresh.avg_confidence == pytest.approx((3 * 0.8 * 0.5 ** (400 / 365.25) + 0.8) / 4, abs=2e-3)
    assert (nora.fresh.due, nora.fresh.decision_tier) == (0, nora.decision_tier)
    team = directory.team(manager, org, now=NOW)
    assert team.stale_share() == pytest.approx(3 / 7, abs=1e-4) and team.stale == 1
    chosen = directory.table_page(team, TeamFilter(stale_only=True), "Name", 1, 25).rows
    assert [p.user_id for p in chosen] == [old]
    assert directory.selected(team, TeamFilter(stale_only=True, min_stale_share=0.5)) == 1  # 3 of Olga's 4
    with pytest.raises(ValidationError):  # the rows are counted by a quarter and a half: no other share
        TeamFilter(stale_only=True, min_stale_share=0.8)
    assert team.avg_confidence() == pytest.approx((olga.fresh.avg_confidence + nora.fresh.avg_confidence) / 2, abs=1e-3)
    # a year on, Nora's answers are due too: the nightly job ages her row when its time comes
    later = NOW + timedelta(days=365)
    assert RowUpkeep(small_store).age(org, later).done == 2
    then = directory.team(manager, org, now=later)
    assert then.stale == 2 and then.stale_share() == 1.0
    # the nightly figures are aged to their day
    day = directory.record_day(org, later)
    assert day.stale_share == 1.0
    assert day.avg_confidence == then.avg_confidence()


def test_as_of_ages_to_the_as_of_date_and_a_confirmation_refreshes_in_one_transaction(small_store, make_user):
    user = make_user(small_store)
    said(small_store, user, "quality", 400, confidence=0.7)
    moment = NOW - timedelta(days=200)
    then = small_store.summary_as_of(user, moment)
    aged_then = freshness.assess(small_store.catalog, small_store.graph, then, moment)
    assert aged_then.factors["quality"].confidence == pytest.approx(0.7 * 0.5 ** (200 / 365.25), abs=1e-4)
    assert not aged_then.factors["quality"].due or aged_then.factors["quality"].due_at <= moment
    now = freshness.assess(small_store.catalog, small_store.graph, small_store.summary(user), NOW)
    assert now.factors["quality"].confidence == pytest.approx(0.7 * 0.5 ** (400 / 365.25), abs=1e-4)
    assert now.factors["quality"].due
    journal_before = small_store.history(user, "quality").entries
    small_store.stats.reset()
    small_store.confirm(user, "quality")
    assert small_store.stats.transactions == 1
    refreshed = freshness.assess(small_store.catalog, small_store.graph, small_store.summary(user), datetime.now(UTC))
    assert refreshed.to_recheck == [] and refreshed.factors["quality"].confidence == pytest.approx(
        0.95, abs=1e-3
    )  # the person's word
    # the entries said before are as they were: time passing rewrote nothing, the confirmation added one
    after = small_store.history(user, "quality").entries
    assert [e.to_document() for e in after[1:]] == [e.to_document() for e in journal_before]
    assert after[0].kind == "confirmed"
    assert math.isclose(freshness.decay(timedelta(days=365.25), small_store.catalog.half_life("quality")), 0.5)
