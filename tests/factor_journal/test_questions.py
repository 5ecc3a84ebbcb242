"""Ask-why on the emulator: intent, context within a token budget, answers citing dated evidence."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from factor_journal.graph import graph_for
from factor_journal.models import InferredUpdate
from factor_journal.questions import analyse_intent, answer_question, build_context, estimate_tokens

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


def test_context_respects_the_token_budget(store, user, catalog):
    intent = analyse_intent("Why can't we do predictive maintenance?", catalog, store.graph, NOW)
    summary = store.summary(user)
    roomy = build_context(store, user, intent, summary, budget_tokens=5000)
    tight = build_context(store, user, intent, summary, budget_tokens=150)
    assert not roomy.truncated and roomy.estimated_tokens <= 5000
    assert tight.truncated and tight.estimated_tokens <= 150
    assert len(tight.factors) < len(roomy.factors)
    assert estimate_tokens(roomy.model_dump()) > estimate_tokens(tight.model_dump())


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
