"""Turn documents at the boundary, table-driven (no Firestore)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from factor_journal.conversation import (
    MAX_TURN_TEXT_CHARS,
    InvalidTurnError,
    Turn,
    excerpt_as_read,
    format_excerpt,
    parse_turn,
    text_length,
    turn_text_problem,
)

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
