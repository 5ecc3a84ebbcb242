"""Saying back what was understood: one line per reading, and where the person stands on it (pure)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from factor_journal.catalog import Level
from factor_journal.documents import HeardReading, ScreenedTurn, ScreenKind
from factor_journal.models import Conflict, FactorState, InferenceStatus
from factor_journal.sayback import (
    NOTHING_UNDERSTOOD,
    READ_BY_GEMINI,
    READ_OFFLINE,
    LineState,
    heard_factors,
    in_one_sentence,
    nothing_understood,
    read_by,
    say_back,
)

NOW = datetime(2026, 11, 20, tzinfo=UTC)


def state(fid: str, value: float | None, status: InferenceStatus, conflict: bool = False) -> FactorState:
    held = Conflict(entry_id="c", proposed_value=20, proposed_confidence=0.6, rationale="r", observed_at=NOW)
    return FactorState(
        factor_id=fid,
        category="data_readiness",
        current_value=value,
        inference_status=status,
        current_confidence=0.0 if value is None else 0.7,
        evidence_count=1,
        open_conflict=held if conflict else None,
    )


def test_each_reading_is_one_line_in_the_factors_own_words(catalog):
    readings = [
        HeardReading(factor_id="data_quality", value=18, confidence=0.8, quote="numbers never match"),
        HeardReading(factor_id="ml_expertise", value=25, confidence=0.6, quote="no machine learning engineers"),
    ]
    factors = {
        "data_quality": state("data_quality", 18, InferenceStatus.unconfirmed),
        "ml_expertise": state("ml_expertise", 25, InferenceStatus.unconfirmed),
    }
    quality, expertise = say_back(catalog, readings, factors)
    assert (quality.factor_name, quality.band, quality.quote) == ("Data quality", Level.low, "numbers never match")
    assert quality.meaning == catalog.factor("data_quality").rubric.low
    assert expertise.factor_name == catalog.factor("ml_expertise").name and expertise.band == Level.low
    assert [c.level for c in quality.choices] == [Level.mid, Level.high]  # low is "That's right"
    assert [c.value for c in quality.choices] == [50, 80]
    assert quality.state == LineState.open and quality.can_confirm and quality.can_correct
    assert heard_factors(readings) == {"data_quality", "ml_expertise"}
    expertise_name = catalog.factor("ml_expertise").name
    assert in_one_sentence([quality, expertise]) == (
        f"Understood from your answer: Data quality is low; {expertise_name} is low."
    )  # read out to a screen reader: every line, in the order shown


def test_nothing_understood_is_no_line(catalog):
    assert say_back(catalog, [], {}) == []


@pytest.mark.parametrize(
    ("current", "expected", "decided", "can_confirm", "can_correct"),
    [
        (state("data_quality", 30, InferenceStatus.unconfirmed), LineState.open, None, True, True),
        (state("data_quality", 30, InferenceStatus.confirmed), LineState.confirmed, None, False, True),  # same band
        (state("data_quality", 20, InferenceStatus.user_provided), LineState.confirmed, None, False, True),
        (state("data_quality", 50, InferenceStatus.user_provided), LineState.corrected, Level.mid, True, True),
        (state("data_quality", 80, InferenceStatus.confirmed), LineState.corrected, Level.high, True, True),
        (state("data_quality", 80, InferenceStatus.user_provided, True), LineState.held, Level.high, True, True),
        # "doesn't apply" is undone by "That's right" (the reading comes back) or by choosing another level
        (state("data_quality", None, InferenceStatus.unassessed), LineState.withdrawn, None, True, True),
        (None, LineState.withdrawn, None, True, True),
    ],
)
def test_a_line_shows_where_the_person_stands_whatever_page_they_decided_on(
    catalog, current, expected, decided, can_confirm, can_correct
):
    reading = HeardReading(factor_id="data_quality", value=20, confidence=0.7, quote="a mess")
    [line] = say_back(catalog, [reading], {"data_quality": current} if current else {})
    assert (line.state, line.decided) == (expected, decided)
    assert (line.can_confirm, line.can_correct) == (can_confirm, can_correct)
    assert line.can_withdraw is (expected != LineState.withdrawn)
    assert Level.low not in {c.level for c in line.choices}  # the reading's own band is "That's right"
    assert decided is None or decided not in {c.level for c in line.choices}  # nor the band the person set


def test_a_reading_of_a_factor_no_longer_in_the_catalog_is_left_out(catalog):
    gone = HeardReading(factor_id="retired_factor", value=20, confidence=0.7, quote="x")
    assert say_back(catalog, [gone], {}) == []


def test_an_answer_set_aside_says_why_nothing_changed():
    assert nothing_understood(None) == NOTHING_UNDERSTOOD
    elsewhere = ScreenedTurn(kind=ScreenKind.other_organisation, reason="my brother-in-law's firm")
    assert (
        nothing_understood(elsewhere)
        == "Noted — nothing to change in the assessment (it is about another organisation)."
    )
    assert all(nothing_understood(ScreenedTurn(kind=kind, reason="r")) != NOTHING_UNDERSTOOD for kind in ScreenKind)


@pytest.mark.parametrize(
    ("extractor", "model", "said"),
    [
        ("semantic", "all-MiniLM-L6-v2+v12", READ_OFFLINE),  # the embedded reader
        ("offline", "rules-3", READ_OFFLINE),  # the keyword rules
        ("gemini", "gemini-2.5-flash-001", READ_BY_GEMINI),  # the model version Vertex AI answers with
        ("gemini", "Gemini-2.5-Flash", READ_BY_GEMINI),
        (
            "gemini",
            "claude-opus-4-5",
            "Read through the Gemini path by claude-opus-4-5, a language model in Gemini's seat, not by Gemini",
        ),
        ("gemini", None, None),  # the Gemini path's screen set it aside before the model: no model read it
        ("semantic", None, None),  # set aside before the embedded reader
        ("scripted", "scripted-1", None),  # a reader the say-back does not know is named by nothing
        (None, None, None),
    ],
)
def test_the_say_back_names_the_reader_from_the_turns_outcome(extractor, model, said):
    assert read_by(extractor, model) == said


def test_only_a_model_version_naming_gemini_is_said_to_be_gemini():
    """Whatever else answers through the Gemini path is a language model in Gemini's seat, named, never Gemini."""
    for model in ("claude-opus-4-5", "gpt-5", "seat:claude-opus-4-5", "my-gemini-lookalike"):
        said = read_by("gemini", model)
        assert said is not None and said != READ_BY_GEMINI
        assert model in said and "language model in Gemini's seat, not by Gemini" in said
