"""Ask why, stage 1 (``questions.intent``, pure): a question's type, the factors it names, from when, and a question
about the whole assessment in everyday words."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from factor_journal.catalog import load_catalog
from factor_journal.graph import graph_for
from factor_journal.page_models import RETURN_AFTER
from factor_journal.questions.intent import about_the_whole, analyse_intent, previous_visit_end, question_topic

NOW = datetime.now(UTC)


@pytest.mark.parametrize(
    ("question", "kind", "factors"),
    [
        ("Why is data quality only 20%?", "why_value", {"data_quality"}),
        ("Why can't we do predictive maintenance?", "why_blocker", {"sensor_data", "data_quality", "ml_expertise"}),
        ("What changed since last month?", "what_changed", set()),
        ("What if we improve data governance?", "what_if", {"data_governance"}),
        ("Why is our AI readiness score so low?", "why_value", {"ai_readiness_score", "data_quality", "ml_expertise"}),
    ],
)
def test_intent(catalog, question, kind, factors):
    intent = analyse_intent(question, catalog, graph_for(catalog), NOW)
    assert intent.question_type == kind
    assert factors <= set(intent.factor_ids)
    if kind == "what_changed":
        assert intent.since is not None and NOW - intent.since == timedelta(days=30)


@pytest.mark.parametrize(
    "question",
    [
        "What has changed since my last visit?",
        "anything new since last time?",
        "What changed since we last spoke?",
        "What's different since I was here?",
        "What has changed since I was last here?",
        "Has data quality changed since our last session?",
    ],
)
def test_since_my_last_visit_is_the_persons_previous_visit_not_a_month(catalog, question):
    """ "Since my last visit" is when the person was last here (``answer_question`` finds when from their answers),
    never a fixed span: it used to read as the last 30 days, whatever the person's visits."""
    intent = analyse_intent(question, catalog, graph_for(catalog), NOW)
    assert intent.question_type == "what_changed" and intent.since_visit and intent.since is None
    for span in ("What changed since last month?", "What has changed since last week?", "What changed since?"):
        other = analyse_intent(span, catalog, graph_for(catalog), NOW)
        assert not other.since_visit and other.since is not None


def test_the_previous_visit_ended_before_the_gap_that_starts_this_one():
    gap = RETURN_AFTER
    now = NOW
    this_visit = [now - timedelta(minutes=2), now - timedelta(minutes=20), now - timedelta(minutes=45)]
    before = [now - timedelta(days=3), now - timedelta(days=3, minutes=10), now - timedelta(days=12)]
    assert previous_visit_end([*before, *this_visit], now) == now - timedelta(days=3)  # any order
    assert previous_visit_end(before, now) == now - timedelta(days=3)  # nothing said on this visit yet
    assert previous_visit_end(this_visit, now) is None  # a first visit
    assert previous_visit_end([], now) is None
    assert previous_visit_end([now - gap], now) == now - gap  # a reply exactly a gap ago: that visit is over
    assert previous_visit_end([now + timedelta(seconds=5), now - timedelta(days=1)], now) == now - timedelta(days=1)


@pytest.mark.parametrize(
    "question",
    [
        "why are we stuck?",
        "What should we fix first?",
        "What's holding us back right now?",
        "Where should we start?",
        "What do we need to do to get to the next level?",
        "How are we doing overall?",
        "Why are we only Exploratory?",
        "Why can't we do anything with AI yet?",
        "next steps?",
    ],
)
def test_a_question_about_the_whole_assessment_in_everyday_words_is_recognised(question):
    catalog = load_catalog()
    assert about_the_whole(question, catalog)
    assert analyse_intent(question, catalog, graph_for(catalog)).question_type == "standing"


@pytest.mark.parametrize(
    "question",
    [
        "What should we do about the vans?",  # about the vans
        "Why are we stuck with paper forms?",
        "How are we doing on data quality?",  # names a factor
        "What did I say about the spreadsheets?",
        "Why can't we do predictive maintenance?",  # names a capability
    ],
)
def test_a_question_about_something_in_particular_is_not_about_the_whole(question):
    catalog = load_catalog()
    assert analyse_intent(question, catalog, graph_for(catalog)).question_type != "standing"


def test_the_topic_of_a_question_about_ones_own_words_drops_the_frame():
    assert question_topic("What did I say about the delivery vans?") == "the delivery vans"
    assert question_topic("What did I tell you about the spreadsheets?") == "the spreadsheets"
    assert question_topic("Did I mention anything about our mechanic?") == "our mechanic"
    assert question_topic("Why are the figures late?") == "Why are the figures late"
