"""When the reader was unsure (pure): what "This was about…" offers, the question a torn reading asks and when it
is answered, which screens a person may lift, and the semantic reader's rule for being torn."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from factor_journal import page_models
from factor_journal.catalog import Level, load_catalog
from factor_journal.conversation import StoredTurn
from factor_journal.documents import (
    HeardReading,
    ScreenedTurn,
    ScreenKind,
    ScreenLift,
    TornReading,
    lift_refused,
    told_readings,
)
from factor_journal.extraction.semantic import Reading, torn_readings
from factor_journal.graph import graph_for
from factor_journal.models import FactorState, InferenceStatus
from factor_journal.output_checks import MAX_TORN_PER_TURN, check_torn
from factor_journal.sayback import (
    LineState,
    can_lift,
    closest_factors,
    every_factor,
    gist,
    say_back,
    torn_question,
    torn_questions,
)
from factor_journal.summary import build_summary

CATALOG = load_catalog()
NOW = datetime(2026, 11, 30, 9, tzinfo=UTC)
CONTROLLER = (
    "Every month our controller spends two days making the sales report and the stock report agree, "
    "and they still never quite do."
)


def option(factor_id: str, value: float, confidence: float = 0.4) -> HeardReading:
    return HeardReading(factor_id=factor_id, value=value, confidence=confidence, quote="q")


# "This was about…" -------------------------------------------------------------------------------------------


def test_this_was_about_offers_the_readers_ranking_then_the_catalog_search_each_with_its_three_levels():
    ranking = ["data_quality", "forecasting_practice", "value_tracking", "maintenance_practice", "ai_strategy"]
    answer = "We have no data catalog at all."  # "data catalog" is a cue phrase of data governance
    choices = closest_factors(CATALOG, ranking, answer)
    assert [c.factor_id for c in choices] == [
        "data_quality",
        "forecasting_practice",
        "value_tracking",
        "data_governance",
    ]
    quality = choices[0]
    assert quality.factor_name == "Data quality"
    assert [(level.level, level.meaning) for level in quality.levels] == [
        (Level.low, CATALOG.factor("data_quality").rubric.low),
        (Level.mid, CATALOG.factor("data_quality").rubric.mid),
        (Level.high, CATALOG.factor("data_quality").rubric.high),
    ]
    assert [level.value for level in quality.levels] == [20, 50, 80]
    # the ranking fills every place when the search finds nothing it does not have
    assert [c.factor_id for c in closest_factors(CATALOG, ranking, CONTROLLER)] == ranking[:4]


def test_without_a_ranking_the_search_alone_offers_and_nothing_unknown_or_computed_is_offered():
    composite = next(f.id for f in CATALOG.factors if f.is_composite)
    choices = closest_factors(CATALOG, ["gone_factor", composite], "Nobody owns our data catalog.")
    assert [c.factor_id for c in choices] == ["data_governance"]
    assert closest_factors(CATALOG, [], "Lovely weather today.") == []  # weak word overlaps offer nothing


def test_something_else_lists_every_factor_people_can_say_by_name():
    names = every_factor(CATALOG)
    assert set(names) == {f.id for f in CATALOG.assessable_factors}
    assert list(names.values()) == sorted(names.values(), key=str.lower)


# A torn reading -------------------------------------------------------------------------------------------------


def test_a_reading_torn_between_two_factors_asks_which_in_the_catalogs_words():
    asked = torn_question(CATALOG, TornReading(options=[option("data_quality", 20), option("data_governance", 25)]))
    assert asked is not None
    quality, governance = CATALOG.factor("data_quality"), CATALOG.factor("data_governance")
    assert asked.question == (
        f"Is this about {gist(CATALOG, 'data_quality')} (Data quality) or {gist(CATALOG, 'data_governance')} "
        "(Data governance)?"
    )
    assert gist(CATALOG, "data_governance") == "who owns the data and what its terms mean"  # its description's words
    assert gist(CATALOG, "data_quality").lower() in quality.description.lower()
    assert [(o.factor_id, o.level, o.label) for o in asked.options] == [
        ("data_quality", Level.low, f"It is about {quality.name}"),
        ("data_governance", Level.low, f"It is about {governance.name}"),
    ]
    # asides in parentheses are left out of a question
    assert "(" not in gist(CATALOG, "external_data")


def test_a_reading_torn_between_two_bands_asks_which_in_the_rubrics_words():
    expertise = CATALOG.factor("ml_expertise")
    asked = torn_question(CATALOG, TornReading(options=[option("ml_expertise", 72), option("ml_expertise", 20)]))
    assert asked is not None
    high, low = (words.rstrip(".") for words in (expertise.rubric.high, expertise.rubric.low))
    assert asked.question == f"For {expertise.name}, is it more “{high}” or “{low}”?"
    assert [o.label for o in asked.options] == [f"{expertise.name} is high", f"{expertise.name} is low"]
    assert [o.value for o in asked.options] == [72, 20]  # the reader's own values


def test_a_torn_question_is_asked_until_the_person_tells_us_and_never_with_less_than_two_options():
    torn = [TornReading(options=[option("data_quality", 20), option("data_governance", 25)])]
    assert len(torn_questions(CATALOG, torn, [])) == 1
    assert torn_questions(CATALOG, torn, [option("data_governance", 25)]) == []
    gone = TornReading(options=[option("data_quality", 20), option("no_such_factor", 25)])
    assert torn_question(CATALOG, gone) is None


def test_what_the_person_told_us_is_a_line_of_its_own_after_the_readings():
    told = [option("data_quality", 20), option("ml_expertise", 20)]
    factors = {
        "data_quality": FactorState(
            factor_id="data_quality",
            category="data_readiness",
            current_value=20,
            current_confidence=0.95,
            inference_status=InferenceStatus.user_provided,
        )
    }
    read = [HeardReading(factor_id="ml_expertise", value=72, confidence=0.5, quote="two data scientists")]
    lines = say_back(CATALOG, read, factors, told)
    assert [(line.factor_id, line.told) for line in lines] == [("ml_expertise", False), ("data_quality", True)]
    assert lines[1].state == LineState.confirmed  # theirs, in the band they told us


# The answer's turn ------------------------------------------------------------------------------------------------


def test_told_readings_read_the_turns_map_and_skip_what_no_longer_reads():
    turn = {
        "told": {
            "ml_expertise": {"value": 20, "confidence": 0.95, "quote": "two data scientists", "told_at": NOW},
            "data_quality": {"value": "much"},
            "cloud_adoption": "oops",
        }
    }
    assert [(r.factor_id, r.value) for r in told_readings(turn)] == [("ml_expertise", 20)]
    assert told_readings({}) == [] and told_readings({"told": ["x"]}) == []


def _screened(kind: ScreenKind) -> dict:
    return {"extraction": {"status": "no_update", "screened": {"kind": kind, "reason": "because"}}}


@pytest.mark.parametrize("kind", list(ScreenKind))
def test_a_person_may_lift_what_sets_an_answer_aside_about_them_but_never_instructions_a_pause_or_a_question(kind):
    liftable = kind in {"other_organisation", "hypothetical", "small_talk", "deferral"}
    assert (lift_refused(_screened(kind)) is None) == liftable
    screened = ScreenedTurn(kind=kind, reason="because")
    assert can_lift(screened, None) == liftable
    assert not can_lift(screened, ScreenLift(kind=kind, reason="because", lifted_at=NOW))  # once


def test_an_answer_is_lifted_once_and_only_when_it_was_set_aside():
    lifted = {"screen_lifted": {"kind": "other_organisation", "reason": "because", "lifted_at": NOW}}
    assert lift_refused(lifted) == "it is being read again, at your word"
    assert lift_refused(lifted | {"extraction": {"status": "no_update"}}) == "it was read again already, at your word"
    assert lift_refused({"extraction": {"status": "processed"}}) == "it was not set aside"
    assert lift_refused({}) == "it was not set aside"
    assert ScreenLift.of({"screen_lifted": {"kind": "nonsense"}}) is None
    assert not can_lift(None, None)


# The conversation's next question ----------------------------------------------------------------------------------

TORN = {
    "status": "no_update",
    "torn": [
        {
            "options": [
                {"factor_id": "data_quality", "value": 20, "confidence": 0.5},
                {"factor_id": "data_governance", "value": 25, "confidence": 0.45},
            ]
        }
    ],
}


def stored(documents: list[dict]) -> list[StoredTurn]:
    """A session's turn documents (oldest first) as the pages read them."""
    return [StoredTurn.of(f"turn-{index}", document) for index, document in enumerate(documents)]


def _fresh():
    from factor_journal import freshness

    graph = graph_for(CATALOG)
    return freshness.assess(CATALOG, graph, build_summary(CATALOG, graph, {}, None, NOW), NOW)


def test_a_torn_answers_question_is_the_next_question_in_its_own_words():
    answer = {
        "role": "user",
        "text": "The numbers never match and nobody agrees what a customer is.",
        "extraction": TORN,
    }
    turns = [{"role": "assistant", "text": "How clean is your data?", "about": "data_quality"}, answer]
    assert page_models.time_for_next_question(stored(turns))
    first, *_ = page_models.questions_ahead(CATALOG, graph_for(CATALOG), _fresh(), stored(turns), NOW)
    asked = torn_question(CATALOG, TornReading.model_validate(TORN["torn"][0]))
    assert asked is not None
    assert (first.question, first.factor_id, first.verbatim) == (asked.question, "data_quality", True)
    # once asked, it waits for its answer, as every question does
    waiting = [*turns, {"role": "assistant", "text": asked.question, "about": "data_quality"}]
    assert not page_models.time_for_next_question(stored(waiting))
    assert (
        page_models.questions_ahead(CATALOG, graph_for(CATALOG), _fresh(), stored(waiting), NOW)[0].question
        == asked.question
    )


def test_a_torn_question_answered_under_the_answer_moves_the_conversation_on():
    told = {"data_governance": {"value": 25, "confidence": 0.95, "quote": "nobody agrees", "told_at": NOW}}
    answer = {"role": "user", "text": "The numbers never match.", "extraction": TORN, "told": told}
    asked = {"role": "assistant", "text": "Is this about …?", "about": "data_quality"}
    turns = [{"role": "assistant", "text": "How clean is your data?", "about": "data_quality"}, answer, asked]
    assert page_models.answered_in_place(stored(turns))
    assert page_models.time_for_next_question(stored(turns))
    ahead = page_models.questions_ahead(CATALOG, graph_for(CATALOG), _fresh(), stored(turns), NOW)
    assert ahead and ahead[0].question != "Is this about …?" and not ahead[0].verbatim
    assert "data_governance" in page_models.next_question_bounds(stored(turns)).just_heard  # what they told us is heard
    # a question after an answer that was not torn still waits for its typed answer
    plain = [turns[0], {**answer, "extraction": {"status": "no_update"}}, asked]
    assert not page_models.answered_in_place(stored(plain)) and not page_models.time_for_next_question(stored(plain))


# Screening what a reader could not choose between -------------------------------------------------------------


def _proposed(factor_id: str, value: float, confidence: float = 0.5) -> dict:
    return {"factor_id": factor_id, "value": value, "confidence": confidence, "rationale": "r"}


def test_torn_readings_are_screened_like_readings_and_kept_only_with_two_distinct_options():
    from factor_journal.extraction.base import ProposedUpdate

    accepted = [ProposedUpdate.model_validate(_proposed("cloud_adoption", 80))]
    raw = [
        [_proposed("data_quality", 20), _proposed("data_governance", 25)],  # kept
        [_proposed("data_quality", 20), _proposed("data_quality", 30)],  # one band twice: one option
        [_proposed("data_quality", 20), _proposed("no_such_factor", 30)],  # one left
        [_proposed("cloud_adoption", 20), _proposed("it_integration", 30)],  # the turn reads cloud adoption already
        "not a list",
        [_proposed("ml_expertise", 80), _proposed("ml_expertise", 20)],  # kept
        [_proposed("data_labeling", 80), _proposed("data_labeling", 20)],  # over the limit
    ]
    kept, rejected = check_torn(raw, CATALOG, accepted)
    assert [[o.factor_id for o in options] for options in kept] == [
        ["data_quality", "data_governance"],
        ["ml_expertise", "ml_expertise"],
    ]
    assert len(kept) == MAX_TORN_PER_TURN
    assert any("unknown factor 'no_such_factor'" in why for why in rejected)
    assert sum("fewer than two" in why for why in rejected) == 3
    assert any("reads already" in why for why in rejected) and any("over the limit" in why for why in rejected)
    only_asked, _ = check_torn(raw[:1], CATALOG, [], allowed={"data_quality"})
    assert only_asked == []  # an option outside the factors asked about is dropped like a reading


# The semantic reader's rule -----------------------------------------------------------------------------------


def _reading(fid: str, detected: float, band: str, p: float, second: str = "", p2: float = 0.0) -> Reading:
    values = {"low": 20.0, "mid": 50.0, "high": 80.0}
    return Reading(fid, detected, band, p, values[band], second, p2, values.get(second, 0.0))


def test_the_reader_is_torn_between_two_bands_or_two_factors_scored_within_the_margin_whichever_is_closer():
    sure = _reading("data_quality", 1.0, "low", 0.8, "mid", 0.1)  # score 0.8, next band 0.7 below
    bands = _reading("ml_expertise", 1.0, "high", 0.40, "low", 0.30)  # bands 0.1 apart
    rival = _reading("data_governance", 0.5, "low", 0.5, "mid", 0.4)  # score 0.25, below the threshold
    torn = torn_readings([sure, bands, rival], threshold=0.3, margin=0.12)
    assert set(torn) == {"ml_expertise"}
    assert (torn["ml_expertise"].other.band, torn["ml_expertise"].other.value) == ("low", 20.0)
    assert torn["ml_expertise"].gap == pytest.approx(0.1)
    # a rival factor closer than the second band: asked which factor; the rival is asked about once only
    close = _reading("data_quality", 0.6, "low", 0.6, "mid", 0.2)  # score 0.36, bands 0.24 apart
    also = _reading("it_integration", 0.55, "low", 0.6, "mid", 0.2)  # score 0.33
    torn = torn_readings([close, also, rival], threshold=0.3, margin=0.15)
    assert torn["data_quality"].other is rival and torn["data_quality"].gap == pytest.approx(0.11)
    assert "it_integration" not in torn  # the rival was claimed; its own bands are 0.22 apart
    assert torn_readings([close, also, rival], threshold=0.3, margin=0.0) == {}  # never torn at 0
    assert torn_readings([rival], threshold=0.3, margin=0.5) == {}  # nothing stored: nothing to be torn about
