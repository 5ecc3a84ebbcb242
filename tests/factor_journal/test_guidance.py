"""Next best questions and the next-tier statement, from the summary a change leaves (pure: no Firestore)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from planned import Person

from factor_journal import freshness
from factor_journal.graph import graph_for
from factor_journal.guidance import (
    clarifying_question,
    in_sentence,
    next_best_questions,
    next_tier_statement,
    opened_by,
    question_asked,
)
from factor_journal.models import FactorState, InferenceStatus
from factor_journal.summary import build_summary


def test_questions_favour_factors_that_unlock_the_most(small_catalog):
    person = Person(small_catalog)
    person.say("quality", 65, 0.75)
    summary = person.summary
    questions = next_best_questions(small_catalog, person.graph, summary, limit=3)
    assert questions[0].factor_id == "skills"  # the last blocker of "medium", and one of "hard"
    assert "helps unlock Medium" in questions[0].reason
    assert questions[0].question == small_catalog.factor("skills").elicitation_questions[0]
    asked = {questions[0].question}
    again = next_best_questions(small_catalog, person.graph, summary, limit=3, asked=asked)
    assert questions[0].question not in [q.question for q in again]


def test_next_tier_statement_says_exactly_what_is_missing(small_catalog):
    person = Person(small_catalog)
    person.say("quality", 65, 0.5)
    statement = next_tier_statement(person.summary)
    assert statement == "To unlock Low (< €25k): 1 more factor assessed and average confidence up from 50% to 60%."


# The next question follows from what was understood (pure: a summary built from states) ----------------------


def summary_of(catalog, states: dict[str, tuple[float, float, InferenceStatus]]):
    now = datetime(2026, 11, 20, tzinfo=UTC)
    built = {
        fid: FactorState(
            factor_id=fid,
            category=catalog.factor(fid).category,
            current_value=value,
            current_confidence=confidence,
            inference_status=status,
            observed_at=now,
            evidence_count=1,
        )
        for fid, (value, confidence, status) in states.items()
    }
    return build_summary(catalog, graph_for(catalog), built, None, now)


def test_the_next_question_never_re_asks_what_the_last_answer_just_settled(catalog):
    graph = graph_for(catalog)
    summary = summary_of(catalog, {"data_quality": (20, 0.4, InferenceStatus.unconfirmed)})
    # A weakly known factor is asked again in general, but never right after an answer that spoke to it.
    before = next_best_questions(catalog, graph, summary, limit=60)
    assert "data_quality" in {q.factor_id for q in before}
    after = next_best_questions(catalog, graph, summary, limit=60, just_heard={"data_quality"})
    assert "data_quality" not in {q.factor_id for q in after}


def test_a_factor_the_session_covered_is_not_asked_again_in_other_words(catalog):
    graph = graph_for(catalog)
    summary = summary_of(catalog, {"data_quality": (20, 0.4, InferenceStatus.unconfirmed)})
    first, second = catalog.factor("ml_expertise").elicitation_questions[:2]
    assert {"data_quality", "ml_expertise"} <= {q.factor_id for q in next_best_questions(catalog, graph, summary, 60)}
    covered = next_best_questions(catalog, graph, summary, 60, covered={"data_quality", "ml_expertise"})
    assert {"data_quality", "ml_expertise"}.isdisjoint(q.factor_id for q in covered)
    # a question of the factor asked in the catalog's words (no record of its factor): none of its others either
    reworded = next_best_questions(catalog, graph, summary, 60, asked={first})
    assert second not in {q.question for q in reworded} and "ml_expertise" not in {q.factor_id for q in reworded}
    flagged = summary_of(catalog, {"data_quality": (20, 0.4, InferenceStatus.unconfirmed)})
    flagged.factors["data_quality"].needs_recheck = True
    again = next_best_questions(catalog, graph, flagged, 60, covered={"data_quality"})
    assert "data_quality" in {q.factor_id for q in again}  # a correction asked for a re-check: it is asked


def test_the_next_question_moves_to_what_the_answer_opened_up(catalog):
    graph = graph_for(catalog)
    summary = summary_of(catalog, {"data_quality": (20, 0.7, InferenceStatus.unconfirmed)})
    [first] = next_best_questions(catalog, graph, summary, limit=1, just_heard={"data_quality"})
    neighbours = set(graph.depends_on("data_quality")) | set(graph.dependents("data_quality"))
    assert first.factor_id in neighbours
    assert first.reason == "follows from what you said about data quality"
    assert opened_by(catalog, graph, {"data_quality"}).keys() == neighbours - {"data_quality"}
    opener = next(f for f in ("ml_infrastructure", "mlops_maturity") if opened_by(catalog, graph, {f}))
    reasons = {q.reason for q in next_best_questions(catalog, graph, summary, limit=60, just_heard={opener})}
    assert f"follows from what you said about {catalog.factor(opener).name}" in reasons  # an acronym keeps its case


def test_a_name_inside_a_sentence_keeps_its_acronyms():
    assert in_sentence("Data quality") == "data quality"
    assert in_sentence("ML infrastructure") == "ML infrastructure"
    assert in_sentence("MLOps maturity") == "MLOps maturity"
    assert in_sentence("AI project track record") == "AI project track record"


def test_a_value_the_person_gave_or_confirmed_is_not_asked_again(catalog):
    graph = graph_for(catalog)
    for status in (InferenceStatus.confirmed, InferenceStatus.user_provided):
        summary = summary_of(catalog, {"data_quality": (20, 0.95, status)})  # low: blocks capabilities
        assert "data_quality" not in {q.factor_id for q in next_best_questions(catalog, graph, summary, limit=60)}


def test_a_value_known_well_is_not_asked_again_though_it_blocks_a_capability(catalog):
    # Asking again would not unlock anything (only a change in it would); the say-back and Review confirm it.
    graph = graph_for(catalog)
    known = summary_of(catalog, {"data_quality": (20, 0.95, InferenceStatus.unconfirmed)})  # low: blocks
    assert any(b.factor_id == "data_quality" for c in known.capabilities.cannot_evaluate_yet for b in c.blockers)
    assert "data_quality" not in {q.factor_id for q in next_best_questions(catalog, graph, known, limit=60)}
    weak = summary_of(catalog, {"data_quality": (20, 0.4, InferenceStatus.unconfirmed)})
    [again] = [q for q in next_best_questions(catalog, graph, weak, limit=60) if q.factor_id == "data_quality"]
    assert again.reason.startswith("we are not sure about this yet; it helps unlock ")  # says why it comes back


def test_an_answer_said_surely_enough_is_not_asked_again_in_any_session(catalog):
    # One clear answer reads at 0.55 (a cue phrase) or 0.5 (a bare yes or no): asking the same question again, in
    # a later session, would only repeat it (Anna's "5 different systems" was asked again weeks later at 0.573).
    graph = graph_for(catalog)
    line = catalog.freshness.recheck_below
    answered = {
        "data_infrastructure": (28, 0.573, InferenceStatus.unconfirmed),
        "ml_expertise": (70, line, InferenceStatus.unconfirmed),
    }
    asked = {q.factor_id for q in next_best_questions(catalog, graph, summary_of(catalog, answered), limit=60)}
    assert asked.isdisjoint(answered) and "it_integration" in asked  # never answered: asked
    barely = summary_of(catalog, {"data_infrastructure": (28, round(line - 0.01, 2), InferenceStatus.unconfirmed)})
    [again] = [q for q in next_best_questions(catalog, graph, barely, limit=60) if q.factor_id == "data_infrastructure"]
    assert again.reason.startswith("we are not sure about this yet")  # under the line: counts for too little


def test_an_answer_aged_under_the_line_comes_back_only_once_it_is_due(catalog):
    # Judged on the confidence as said: time alone brings it back when freshness says it is due, not days later.
    graph = graph_for(catalog)
    said = summary_of(catalog, {"data_infrastructure": (28, 0.52, InferenceStatus.unconfirmed)})
    days_later = freshness.assess(catalog, graph, said, said.updated_at + timedelta(days=30))
    assert days_later.summary.factors["data_infrastructure"].current_confidence < catalog.freshness.recheck_below
    assert not days_later.stale
    soon = next_best_questions(
        catalog, graph, days_later.summary, limit=60, stale=days_later.stale, as_said=days_later.stored
    )
    assert "data_infrastructure" not in {q.factor_id for q in soon}
    due = freshness.assess(catalog, graph, said, said.updated_at + timedelta(days=200))
    assert "data_infrastructure" in due.stale
    later = next_best_questions(catalog, graph, due.summary, limit=60, stale=due.stale, as_said=due.stored)
    assert later[0].factor_id == "data_infrastructure" and later[0].stale


def test_a_clarifying_question_says_what_the_factor_means_and_asks_it_again_in_other_words(catalog):
    factor = catalog.factor("ml_expertise")
    first, second = factor.elicitation_questions[:2]
    said = clarifying_question(catalog, "ml_expertise", {first})
    assert "machine learning expertise: people who can build, evaluate and maintain machine learning models." in said
    assert f"“{factor.rubric.low.rstrip('.')}” to “{factor.rubric.high.rstrip('.')}”" in said
    assert said.endswith(f"So: {second}")
    assert clarifying_question(catalog, "ml_expertise", set(factor.elicitation_questions)).endswith(first)
    assert "asking about ML infrastructure: the hardware" in clarifying_question(catalog, "ml_infrastructure")


def test_an_answer_to_a_clarification_answers_the_question_it_asks_again_not_its_explanation(catalog):
    """The person asked what a question meant and the assistant explained: the answer that follows answers the
    question, which is what a rationale quotes and an excerpt shows, never "Good question. I am asking about …"."""
    first, second = catalog.factor("ml_expertise").elicitation_questions[:2]
    explained = clarifying_question(catalog, "ml_expertise", {first})
    cut = explained[: explained.index(" So: ") + 8] + "…"  # as a stored excerpt keeps it (240 characters a turn)
    back = [("assistant", first), ("user", "What do you mean?")]
    assert question_asked([*back, ("assistant", explained)]) == second
    assert question_asked([*back, ("assistant", cut)]) == first  # its question cut off: the one asked about
    assert question_asked([("assistant", cut)]) == "I am asking about machine learning expertise"  # what it is about
    assert question_asked([("assistant", first)]) == first and question_asked([("user", "hello")]) == ""
