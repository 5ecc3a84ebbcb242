"""Ask why on the emulator, the three stages together (``answer_question``): answers citing dated evidence, as the
pages show the assessment."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from factor_journal.models import InferredUpdate
from factor_journal.questions import answer_question

NOW = datetime.now(UTC)


def said(store, user, factor, value, confidence, days_ago, why, **extra):
    store.record_inference(
        user,
        InferredUpdate(
            factor_id=factor,
            value=value,
            confidence=confidence,
            rationale=why,
            conversation_excerpt=f"User: {why}",
            observed_at=NOW - timedelta(days=days_ago),
            **extra,
        ),
    )


@pytest.fixture
def user(store, make_user):
    user = make_user(store)
    said(store, user, "data_governance", 15, 0.7, 40, "No data catalog and nobody owns the data")
    said(
        store, user, "data_quality", 20, 0.75, 40, "Data scattered across 5 systems", inferred_from=["data_governance"]
    )
    said(store, user, "sensor_data", 60, 0.8, 10, "Telemetry from the two newest presses")
    said(store, user, "data_quality", 35, 0.8, 5, "They started deduplicating customers")
    return user


def test_why_value_cites_dated_evidence(store, user):
    answer = answer_question(store, user, "Why is data quality only 35%?")
    assert answer.has_evidence
    assert [c.change for c in answer.citations[:2]] == ["20 → 35", "unassessed → 20"]
    assert answer.citations[0].date.date() == (NOW - timedelta(days=5)).date()
    assert "They started deduplicating customers" in answer.text and "Data governance (15)" in answer.text


def test_why_blocker_names_each_gap(store, user):
    answer = answer_question(store, user, "Why can't we do predictive maintenance?")
    assert "blocked by" in answer.text
    assert "Machine learning expertise: not assessed yet" in answer.text and "**" not in answer.text
    gap = next(line for line in answer.lines if line.plain.startswith("Machine learning expertise"))
    assert gap.kind == "point" and [p.strong for p in gap.phrases] == [True, False]  # the name, laid out apart
    assert "Sensor and machine data" in answer.text and "needs ≥ 60" in answer.text


def test_what_changed_lists_only_recent_changes(store, user):
    answer = answer_question(store, user, "What changed since last month?")
    assert {c.factor_id for c in answer.citations} == {"data_quality", "sensor_data"}
    assert all(c.date >= NOW - timedelta(days=31) for c in answer.citations)


def test_what_if_names_what_would_unlock(store, user):
    answer = answer_question(store, user, "What if we improve sensor data?")
    assert answer.intent.question_type == "what_if"
    assert "would" in answer.text


def test_no_evidence_is_said_plainly(store, make_user):
    answer = answer_question(store, make_user(store), "Why is data quality low?")
    assert not answer.has_evidence and answer.citations == []
    assert "no journal evidence" in answer.text


def test_a_capability_is_named_in_the_answer_as_on_the_capabilities_page(store, user):
    answer = answer_question(store, user, "Why can't we do machine-learning automation?")
    assert "Machine-learning automation is blocked by:" in answer.text
    assert "Ml automation" not in answer.text


def test_an_answer_gives_the_confidence_the_pages_show_aged_to_today(store, make_user):
    """An answer said long ago counts for less today: the overview says so, and Ask why says the same figure, not
    the one stored when it was said (nor a capability's gap by it)."""
    from factor_journal import freshness

    user = make_user(store)
    said(store, user, "data_quality", 30, 0.8, 300, "Duplicates everywhere in the ERP")
    now = datetime.now(UTC)
    aged = freshness.assess(store.catalog, store.graph, store.summary(user), now).summary.factors["data_quality"]
    assert f"{aged.current_confidence:.0%}" != "80%"
    answer = answer_question(store, user, "Why is data quality so low?", now=now)
    assert f"Data quality is 30/100 (confidence {aged.current_confidence:.0%}" in answer.text
    blocked = answer_question(store, user, "Why can't we do predictive maintenance?", now=now)
    assert f"Data quality: 30 (confidence {aged.current_confidence:.0%})" in blocked.text


def test_why_are_we_stuck_is_answered_from_the_tier_and_the_nearest_capabilities(store, user):
    summary = store.summary(user)
    nearest = summary.capabilities.cannot_evaluate_yet[0]
    answer = answer_question(store, user, "Why are we stuck?")
    assert answer.found_by == "standing" and answer.intent.question_type == "standing"
    assert f"Your decision tier is {summary.overall.decision_tier_name}" in answer.text
    assert f"{nearest.name} is blocked by:" in answer.text
    assert "could not tell" not in answer.text and "nothing in your assessment about that" not in answer.text
    last = summary.last_conversation.factor_id if summary.last_conversation else None
    assert answer.has_evidence and {c.factor_id for c in answer.citations} <= {last} | {
        b.factor_id for c in summary.capabilities.cannot_evaluate_yet[:2] for b in c.blockers
    }


def test_a_question_that_names_nothing_and_finds_nothing_gets_the_whole_assessment_and_is_told_so(store, user):
    answer = answer_question(store, user, "What's the weather like tomorrow?", embedder=None)
    assert answer.found_by == "standing"
    assert answer.text.startswith("I found nothing in your assessment about that in particular")
    assert f"Your decision tier is {store.summary(user).overall.decision_tier_name}" in answer.text


def test_what_changed_since_my_last_visit_is_what_was_said_after_it_and_says_from_when(store, make_user):
    """The person's previous visit ended with their answer ten days ago; on this visit (answers 25 and 5 minutes
    ago) they spoke about sensor data and machine learning.  "Since my last visit" is this visit's changes, from
    when that visit ended -- not every factor touched in the last 30 days, as a fixed span gave."""
    user = make_user(store)
    session = store.start_session(user, started_at=NOW - timedelta(days=12))
    visits = {"data_governance": 10 * 24 * 60 + 20, "data_quality": 10 * 24 * 60, "sensor_data": 25, "ml_expertise": 5}
    for factor, minutes_ago in visits.items():
        at = NOW - timedelta(minutes=minutes_ago)
        store.add_turn(user, session, "assistant", f"About {factor}?", created_at=at - timedelta(seconds=30))
        turn = store.add_turn(user, session, "user", f"What I said about {factor}", created_at=at)
        said(store, user, factor, 40, 0.7, minutes_ago / (24 * 60), f"What I said about {factor}", turn_id=turn)
    answer = answer_question(store, user, "What has changed since my last visit?", now=NOW, embedder=None)
    ended = NOW - timedelta(days=10)
    assert answer.found_by == "recent" and answer.intent.since == ended
    assert {c.factor_id for c in answer.citations} == {"sensor_data", "ml_expertise"}
    assert answer.lines[0].plain == (
        f"Since your last visit, which ended with your answer of {ended:%d %b %Y}, {ended:%H:%M} UTC:"
    )
    # Back a day later, nothing said since: said so, never "nothing said speaks to it"
    later = answer_question(store, user, "anything new since last time?", now=NOW + timedelta(days=1), embedder=None)
    assert later.intent.since == NOW - timedelta(minutes=5) and later.citations == []
    assert "Nothing was recorded since then." in later.text
    assert "no journal evidence" not in later.text and "could not tell" not in later.text
