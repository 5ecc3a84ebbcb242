"""Ask why, stage 3 (``questions.composing``, pure): the offline composer answers from a context in what a person
reads on the other pages (the tier, capabilities by their names, "yours" for a value they gave)."""

from __future__ import annotations

from datetime import UTC, datetime

from factor_journal.questions.composing import OfflineComposer
from factor_journal.questions.context import Citation, FactorContext, QuestionContext, Standing
from factor_journal.questions.intent import QuestionIntent

NOW = datetime.now(UTC)


def test_a_blocked_capability_is_named_as_on_the_capabilities_page():
    context = QuestionContext(
        intent=QuestionIntent(question_type="why_blocker", archetype_ids=["ml_automation", "genai_assistant"]),
        blocked={
            "ml_automation": [
                {
                    "factor_name": "ML infrastructure",
                    "value": None,
                    "confidence": 0.0,
                    "min_value": 50,
                    "min_confidence": 0.7,
                }
            ],
            "genai_assistant": [],
        },
        capability_names={
            "ml_automation": "Machine-learning automation",
            "genai_assistant": "Internal knowledge assistant",
        },
    )
    text = OfflineComposer().compose("Why can't we do machine-learning automation?", context)
    assert "Machine-learning automation is blocked by:" in text
    assert "You can already evaluate Internal knowledge assistant" in text
    assert "Ml automation" not in text and "genai" not in text.lower()


def test_what_an_improvement_would_unlock_is_named_too():
    context = QuestionContext(
        intent=QuestionIntent(question_type="what_if", factor_ids=["data_quality"]),
        factors={
            "data_quality": FactorContext(
                factor_id="data_quality", name="Data quality", value=30, confidence=0.8, status="unconfirmed"
            )
        },
        unlocks={"data_quality": ["basic_forecasting_annual"]},
        capability_names={"basic_forecasting_annual": "Basic annual forecasting"},
    )
    text = OfflineComposer().compose("What if we improve data quality?", context)
    assert "would unlock: Basic annual forecasting." in text


def test_an_answer_about_the_whole_says_the_tier_what_blocks_and_where_to_start():
    context = QuestionContext(
        intent=QuestionIntent(question_type="standing", archetype_ids=["basic_forecasting_annual"]),
        standing=Standing(
            tier_name="Exploratory",
            budget="No spend decisions yet",
            assessed=6,
            total=52,
            avg_confidence=0.65,
            next_tier="To unlock Low-risk pilots (< €25k): 10 more factors assessed.",
        ),
        blocked={
            "basic_forecasting_annual": [
                {
                    "factor_name": "Data quality",
                    "value": 30,
                    "confidence": 0.8,
                    "min_value": 60,
                    "min_confidence": 0.7,
                    "missing": ["value"],
                },
                {
                    "factor_name": "Historical data depth",
                    "value": None,
                    "confidence": 0.0,
                    "min_value": 40,
                    "min_confidence": 0.6,
                    "missing": ["unassessed"],
                },
            ]
        },
        capability_names={"basic_forecasting_annual": "Basic annual forecasting"},
        found_by="standing",
    )
    text = OfflineComposer().compose("Why are we stuck?", context)
    assert text.startswith("Your decision tier is Exploratory (No spend decisions yet): 6 of 52 factors assessed")
    assert "To unlock Low-risk pilots (< €25k): 10 more factors assessed." in text
    assert "Basic annual forecasting is blocked by:" in text
    assert "To improve in the company first: Data quality." in text
    assert "To tell the assistant more about: Historical data depth (not assessed yet)." in text
    assert "could not tell" not in text


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


def test_words_that_fed_no_entry_are_cited_with_their_date_and_mark_and_never_said_to_be_unsaid():
    from factor_journal.questions.composing import NOT_ASSESSED, _closing
    from factor_journal.questions.context import UnassessedAnswer

    said = "Every month our controller spends two days making the two reports agree."
    unread = UnassessedAnswer(
        date=datetime(2026, 3, 9, tzinfo=UTC), said=said, session_id="s1", turn_id="t1", similarity=0.41
    )
    context = QuestionContext(
        intent=QuestionIntent(question_type="why_value"), found_by="none", unassessed_answers=[unread]
    )
    lines = OfflineComposer().compose_lines("Why does the month take so long to close?", context)
    assert lines[0].plain == "I could not tell which factor or capability the question is about."
    assert lines[-1].kind == "point" and lines[-1].plain == f"09 Mar 2026: “{said}” ({NOT_ASSESSED})"
    closing = " ".join(line.plain for line in _closing(context, []))
    assert f"the words above are {NOT_ASSESSED}" in closing and "so far speaks to it" not in closing
    assert "every answer you gave, understood or not" in closing
    own_words = context.model_copy(update={"intent": QuestionIntent(question_type="what_said")})
    assert [line.kind for line in OfflineComposer().compose_lines("What did I say about it?", own_words)] == [
        "sentence",
        "point",
    ]  # what they said, and nothing about a factor it names none of
