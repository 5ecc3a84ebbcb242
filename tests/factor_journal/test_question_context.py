"""Ask why, stage 2 (``questions.context``): an entry cited as the question was asked, and the context within its
token budget (on the emulator)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from factor_journal.conversation import Turn, format_excerpt
from factor_journal.guidance import clarifying_question
from factor_journal.models import InferredUpdate
from factor_journal.questions.context import as_asked, build_context, estimate_tokens
from factor_journal.questions.intent import analyse_intent

NOW = datetime.now(UTC)


@pytest.fixture
def user(store, make_user):
    """A person with readings of the factors predictive maintenance needs."""
    user = make_user(store)
    for factor, value, why in [
        ("data_governance", 15, "No data catalog and nobody owns the data"),
        ("data_quality", 35, "They started deduplicating customers"),
        ("sensor_data", 60, "Telemetry from the two newest presses"),
    ]:
        update = InferredUpdate(
            factor_id=factor, value=value, confidence=0.7, rationale=why, conversation_excerpt=f"User: {why}"
        )
        store.record_inference(user, update)
    return user


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


def test_context_respects_the_token_budget(store, user, catalog):
    intent = analyse_intent("Why can't we do predictive maintenance?", catalog, store.graph, NOW)
    summary = store.summary(user)
    roomy = build_context(store, user, intent, summary, budget_tokens=5000)
    tight = build_context(store, user, intent, summary, budget_tokens=150)
    assert not roomy.truncated and roomy.estimated_tokens <= 5000
    assert tight.truncated and tight.estimated_tokens <= 150
    assert len(tight.factors) < len(roomy.factors)
    assert estimate_tokens(roomy.model_dump()) > estimate_tokens(tight.model_dump())
