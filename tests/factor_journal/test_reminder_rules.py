"""Who a reminder page may remind, from the profile it read (pure: ``reminders.may_be_reminded``; the scan, the
sending transaction and the mail are tested on the emulator in test_reminders.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from factor_journal.catalog import Catalog
from factor_journal.graph import graph_for
from factor_journal.guidance import SuggestedQuestion
from factor_journal.links import in_section, link_url
from factor_journal.models import UserProfile
from factor_journal.reminders import ReminderPolicy, compose, may_be_reminded
from factor_journal.summary import build_summary

NOW = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
POLICY = ReminderPolicy(inactive_after=timedelta(days=7), window=timedelta(days=7))


def profile(**fields: object) -> UserProfile:
    return UserProfile.model_validate({"user_id": "u", "email": "p@example.com", **fields})


@pytest.mark.parametrize(
    ("fields", "reminded"),
    [
        ({}, True),  # never reminded
        ({"reminders_opt_out": True}, False),  # opted out: nothing, ever
        ({"role": "manager"}, False),  # managers are not reminded to answer
        ({"email": ""}, False),  # nowhere to send it
        ({"last_reminded_at": NOW - timedelta(days=3)}, False),  # still inside the window
        ({"last_reminded_at": NOW - timedelta(days=7)}, True),  # the window has passed, to the instant
    ],
)
def test_a_page_reminds_only_whom_the_profile_allows(fields, reminded):
    assert may_be_reminded(profile(**fields), NOW, POLICY) is reminded


def _mail(catalog: Catalog, recheck: list[str]) -> str:
    """The reminder's HTML for someone who has assessed nothing yet, with ``recheck`` answers due."""
    summary = build_summary(catalog, graph_for(catalog), {}, None, None)
    person = profile(display_name="Chloé Martin (Operations)")
    return str(compose(person, summary, "https://app/?t=T", None, "https://app/u", recheck=recheck)["html"])


@pytest.mark.parametrize(
    ("recheck", "said"),
    [
        (["Process documentation"], "what you told us about Process documentation counts for less"),
        (["Process documentation", "Budget commitment"], "about Process documentation and Budget commitment counts"),
        (["A", "B", "C", "D", "E", "F", "G"], "about A, B, C, D, E and 2 more counts for less as time passes"),
    ],
)
def test_the_reminders_recheck_paragraph_lists_the_answers_as_a_sentence_and_never_says_long_ago(
    catalog, recheck, said
):
    """Chloé's answers, said 10 days before her reminder at a confidence just above the re-check line, were 'due
    for a re-check: you told us about Process documentation, Budget commitment long ago', under 'When we last
    talked (25 November 2026)'."""
    mail = _mail(catalog, recheck)
    assert said in mail and "long ago" not in mail


def test_a_reminder_to_someone_who_has_not_started_reports_no_figures(catalog):
    """'We have not started your conversation yet', then 'Your assessment is 0% mapped (0 of 52 factors); decision
    tier: Exploratory': figures about nothing."""
    mail = _mail(catalog, [])
    assert "We have not started your AI-readiness conversation yet" in mail and "Hello Chloé Martin," in mail
    assert "% mapped" not in mail and "decision tier" not in mail


def test_the_recheck_link_names_its_section_as_a_parameter_the_app_reads_not_only_as_a_fragment(catalog):
    """The app takes the token out of the address as it opens, and the browser drops the '#to-re-check' fragment
    with it: the section travels as ``at`` too (``context.sign_in`` reads it and scrolls there)."""
    assert link_url("https://app/", "T", section="to-re-check") == "https://app/?t=T&at=to-re-check#to-re-check"
    assert in_section("https://app/?t=T", "to-re-check") == "https://app/?t=T&at=to-re-check#to-re-check"
    mail = _mail(catalog, ["Process documentation"])
    assert 'href="https://app/?t=T&amp;at=to-re-check#to-re-check">Re-check it</a>' in mail
    for bad in ("", "To Re-check", "x'><script>", "a#b", "to-re-check\n", "a" * 65):
        with pytest.raises(ValueError):
            in_section("https://app/?t=T", bad)


def test_the_next_question_in_a_reminder_says_why_it_is_asked(catalog: Catalog):
    summary = build_summary(catalog, graph_for(catalog), {}, None, None)
    asked = SuggestedQuestion(
        factor_id="data_infrastructure",
        factor_name="Data infrastructure",
        question="Where does your data live today?",
        reason="we are not sure about this yet; it helps unlock Basic annual forecasting",
        score=1.0,
    )
    mail = str(compose(profile(), summary, "https://app/?t=T", asked, "https://app/u")["html"])
    assert "<em>Where does your data live today?</em> (we are not sure about this yet; it helps unlock" in mail
