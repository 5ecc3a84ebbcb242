"""The offline composer of Ask why, pure: an answer built from a context names what a person reads on the other
pages (capabilities by their names, never their ids)."""

from __future__ import annotations

from factor_journal.questions import OfflineComposer, QuestionContext, QuestionIntent


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
