"""Ask-why on the emulator: intent, context within a token budget, answers citing dated evidence."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from factor_journal.conversation import Turn, format_excerpt
from factor_journal.graph import graph_for
from factor_journal.guidance import clarifying_question
from factor_journal.models import InferredUpdate
from factor_journal.page_models import RETURN_AFTER
from factor_journal.questions import (
    Citation,
    FactorContext,
    OfflineComposer,
    QuestionContext,
    QuestionIntent,
    analyse_intent,
    answer_question,
    as_asked,
    build_context,
    estimate_tokens,
    previous_visit_end,
    speaks_of,
)

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


def test_a_clarification_is_shown_as_the_question_it_asked(catalog):
    """An entry's excerpt and rationale read "answering" the question, not the assistant's explanation of it
    (stored rationales quoted "Good question. I am asking about …")."""
    first = catalog.factor("ai_ethics_policy").elicitation_questions[0]
    explained = clarifying_question(catalog, "ai_ethics_policy", {first})
    turns = [("assistant", first), ("user", "What do you mean?"), ("assistant", explained), ("user", "Yes, written.")]
    excerpt = format_excerpt([Turn(turn_id=str(i), role=r, text=t, created_at=NOW) for i, (r, t) in enumerate(turns)])
    stored = f'User said "Yes, written." (answering "{explained[:99]}…"): reads as high (P=0.80).'
    shown, rationale = as_asked(excerpt, stored)
    assert rationale == f'User said "Yes, written." (answering "{first}"): reads as high (P=0.80).'
    assert "Good question" not in shown and shown.splitlines()[-1] == "User: Yes, written."
    assert as_asked("Assistant: Why?\nUser: Because.", 'User said "Because." (answering "Why?")')[1].endswith('"Why?")')


def test_what_was_said_speaks_of_a_factor_in_the_catalogs_own_words(catalog):
    """The second reading that lets an answer recorded under another factor be cited for one with nothing recorded:
    every content word of one of the factor's cue phrases, in any order."""
    said = "All over the place, but management just approved a budget to pull it all into a cloud warehouse."
    assert speaks_of(catalog, "budget_commitment", said)  # "budget approved"
    assert not speaks_of(catalog, "budget_commitment", "We approved the new supplier last week.")
    assert not speaks_of(catalog, "data_security", "The secretary opens it in the case-management software.")


def test_an_answer_speaks_of_the_persons_own_value_as_the_pages_do():
    """A value the person gave reads "yours" (the pages' word), and a rationale is a phrase of its own, so the app
    turns "User corrected … their answer" into "You corrected … your answer" wherever it sits in the line."""
    change = Citation(
        factor_id="data_quality",
        factor_name="Data quality",
        date=NOW,
        change="55 → 25",
        excerpt="",
        rationale="User corrected what was understood from their answer (low) in the conversation",
    )
    item = FactorContext(
        factor_id="data_quality",
        name="Data quality",
        value=25,
        confidence=0.95,
        status="user_provided",
        latest_change=change,
    )
    intent = QuestionIntent(question_type="why_value", factor_ids=["data_quality"])
    lines = OfflineComposer().compose_lines("Why?", QuestionContext(intent=intent, factors={"data_quality": item}))
    assert "(confidence 95%, yours)" in lines[0].plain and "user provided" not in lines[0].plain
    assert lines[1].phrases[-1].text == change.rationale  # its own phrase: it starts "User …"


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
