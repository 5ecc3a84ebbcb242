"""Ask why, pure: a question about the whole assessment in everyday words is recognised, and the offline composer
answers from a context in what a person reads on the other pages (the tier, capabilities by their names)."""

from __future__ import annotations

import pytest

from factor_journal.catalog import load_catalog
from factor_journal.graph import graph_for
from factor_journal.questions import (
    OfflineComposer,
    QuestionContext,
    QuestionIntent,
    Standing,
    about_the_whole,
    analyse_intent,
)


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
    from factor_journal.questions import FactorContext

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
