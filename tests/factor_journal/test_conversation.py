"""Turn documents at the boundary, table-driven (no Firestore): refused by the pipeline, read by the pages."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from factor_journal.conversation import (
    MAX_TURN_TEXT_CHARS,
    InvalidTurnError,
    StoredTurn,
    Turn,
    excerpt_as_read,
    format_excerpt,
    parse_turn,
    stored_turns,
    text_length,
    turn_text_problem,
)
from factor_journal.documents import ScreenKind, TurnStatus

NOW = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "length", "refused"),
    [
        ("hello", 5, None),
        ("é" * MAX_TURN_TEXT_CHARS, MAX_TURN_TEXT_CHARS, None),  # one unit each, as the rules count
        ("😀" * (MAX_TURN_TEXT_CHARS // 2), MAX_TURN_TEXT_CHARS, None),  # two units each
        ("x" * (MAX_TURN_TEXT_CHARS + 1), MAX_TURN_TEXT_CHARS + 1, "over the"),
        ("  \n\t ", 5, "empty"),  # whitespace only
    ],
)
def test_one_text_limit_in_utf16_units(text, length, refused):
    assert text_length(text) == length
    problem = turn_text_problem(text)
    assert (problem is None) if refused is None else (refused in problem)


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (None, "empty"),
        ({"role": "user", "created_at": NOW}, "text is missing"),
        ({"role": "robot", "text": "hi", "created_at": NOW}, "role must be"),
        ({"role": "user", "text": "hi", "created_at": "yesterday"}, "created_at must be a timestamp"),
        ({"role": "user", "text": 7, "created_at": NOW}, "text is a int"),
        ({"role": "user", "text": "x" * 9000, "created_at": NOW}, "over the 4,000-character limit"),
        ({"role": "user", "text": "   ", "created_at": NOW}, "text is empty"),
    ],
)
def test_bad_turns_are_refused_naming_the_problem(document, message):
    with pytest.raises(InvalidTurnError, match=message):
        parse_turn("t1", document)


def test_a_good_turn_is_parsed_and_naive_times_are_utc():
    turn = parse_turn("t1", {"role": "user", "text": "Our data is a mess", "created_at": NOW.replace(tzinfo=None)})
    assert turn.created_at == NOW and turn.role == "user"


def test_a_stored_turn_reads_every_field_it_has_for_the_pages():
    told = {"cloud": {"value": 70, "confidence": 0.95, "quote": "all on AWS", "told_at": NOW}}
    lifted = {"kind": "small_talk", "reason": "because", "lifted_at": NOW}
    extraction = {"status": "processed", "readings": [{"factor_id": "cloud", "value": 70, "confidence": 0.6}]}
    answer = {"role": "user", "text": "All on AWS", "created_at": NOW, "extraction": extraction}
    turn = StoredTurn.of("u1", answer | {"told": told, "screen_lifted": lifted})
    assert (turn.turn_id, turn.role, turn.text, turn.created_at, turn.status) == (
        "u1",
        "user",
        "All on AWS",
        NOW,
        "processed",
    )
    assert not turn.by_assistant and turn.about is None
    assert turn.outcome is not None and [reading.factor_id for reading in turn.outcome.readings] == ["cloud"]
    assert [(reading.factor_id, reading.value) for reading in turn.told] == [("cloud", 70)]
    assert turn.lift is not None and turn.lift.kind == ScreenKind.small_talk
    asked = StoredTurn.of("a1", {"role": "assistant", "text": "Where?", "about": "cloud", "created_at": NOW})
    assert asked.by_assistant and asked.about == "cloud" and asked.outcome is None and asked.status is None
    naive = StoredTurn.of("u2", {"role": "user", "text": "x", "created_at": NOW.replace(tzinfo=None)})
    assert naive.created_at == NOW  # as parse_turn reads it


@pytest.mark.parametrize(
    "document",
    [
        None,
        {},
        "not a document",
        {"role": "robot", "text": 7, "created_at": "yesterday", "about": ["cloud"]},
        {"role": "user", "text": "hi", "extraction": "oops", "told": "x", "screen_lifted": 3},
        {"role": "user", "text": "hi", "extraction": {"status": ["processed"]}, "told": {"cloud": 5}},
        {"role": "user", "text": "hi", "extraction": {"status": "nonsense"}, "told": {"cloud": {"value": "much"}}},
        {"role": "user", "text": "hi", "screen_lifted": {"kind": "nonsense"}, "about": ""},
    ],
)
def test_a_damaged_or_half_written_turn_reads_as_a_stored_turn_without_what_does_not_read(document):
    turn = StoredTurn.of("t1", document)
    assert turn.turn_id == "t1" and turn.role in (None, "user") and not turn.by_assistant
    assert turn.text in (None, "hi") and turn.created_at is None and turn.about is None
    assert turn.outcome is None and turn.told == [] and turn.lift is None


def test_a_damaged_analysis_record_reads_as_needing_attention_and_keeps_its_status_as_written():
    turn = StoredTurn.of("t1", {"role": "user", "text": "hi", "extraction": {"status": "processing", "attempts": "x"}})
    assert turn.outcome is not None and turn.outcome.status == TurnStatus.needs_attention
    assert turn.status == "processing"


def test_the_pages_show_the_turns_with_text_in_their_order():
    documents = [("a", {"role": "assistant", "text": "Hi?"}), ("b", {"role": "user"}), ("c", {"text": "Hello"})]
    assert [(turn.turn_id, turn.by_assistant) for turn in stored_turns(documents)] == [("a", True), ("c", False)]


def test_the_excerpt_names_speakers_flattens_and_shortens():
    turns = [
        Turn(turn_id="a", role="assistant", text="How clean\nis your data?", created_at=NOW),
        Turn(turn_id="b", role="user", text="x" * 500, created_at=NOW),
    ]
    lines = format_excerpt(turns, limit_per_turn=40).split("\n")
    assert lines[0] == "Assistant: How clean is your data?"
    assert lines[1].startswith("User: xxx") and lines[1].endswith("…") and len(lines[1]) == len("User: ") + 40


def test_an_excerpt_reads_as_the_persons_own_conversation():
    turns = [
        Turn(turn_id="a", role="assistant", text="How good is your data?", created_at=datetime(2026, 1, 1, tzinfo=UTC)),
        Turn(turn_id="u", role="user", text="User: it is a mess", created_at=datetime(2026, 1, 1, tzinfo=UTC)),
    ]
    stored = format_excerpt(turns)
    assert excerpt_as_read(stored) == "Assistant: How good is your data?\nYou: User: it is a mess"
    for cut in (3, 10, 15):  # the "where we were" card keeps an excerpt's most recent part: its first line may be cut
        assert excerpt_as_read(stored[cut:]) == "You: User: it is a mess"
    rationale = 'User said "it is a mess"'  # kept in an excerpt's place when there is none: left as it is
    assert excerpt_as_read(rationale) == rationale
    assert excerpt_as_read("") == ""
