"""Next best questions and the next-tier statement, from a real stored summary."""

from __future__ import annotations

from factor_journal.guidance import next_best_questions, next_tier_statement
from factor_journal.models import InferredUpdate


def test_questions_favour_factors_that_unlock_the_most(small_store, make_user):
    user = make_user(small_store)
    small_store.record_inference(user, InferredUpdate(factor_id="quality", value=65, confidence=0.75, rationale="r"))
    summary = small_store.summary(user)
    questions = next_best_questions(small_store.catalog, small_store.graph, summary, limit=3)
    assert questions[0].factor_id == "skills"  # the last blocker of "medium", and one of "hard"
    assert "helps unlock Medium" in questions[0].reason
    assert questions[0].question == small_store.catalog.factor("skills").elicitation_questions[0]
    asked = {questions[0].question}
    again = next_best_questions(small_store.catalog, small_store.graph, summary, limit=3, asked=asked)
    assert questions[0].question not in [q.question for q in again]


def test_next_tier_statement_says_exactly_what_is_missing(small_store, make_user):
    user = make_user(small_store)
    small_store.record_inference(user, InferredUpdate(factor_id="quality", value=65, confidence=0.5, rationale="r"))
    statement = next_tier_statement(small_store.summary(user))
    assert statement == "To unlock Low (< €25k): 1 more factor assessed and average confidence up from 50% to 60%."
