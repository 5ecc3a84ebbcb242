"""Conversation turns: the documents the trigger listens on, validated at the boundary.

``users/{uid}/conversations/{session_id}/turns/{turn_id}`` holds ``role``
(user | assistant), ``text`` and ``created_at``, and a person's turn
``awaiting_analysis: true`` until its first claim.  Everything else about a
turn (its ``extraction`` outcome) is written by the pipeline.

Two readings of a turn: ``parse_turn`` (``Turn``) for the pipeline, strict, refusing
what cannot be analysed; ``StoredTurn.of`` for the pages, lenient, keeping what still
reads of a damaged or half-written turn.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from factor_journal.documents import ExtractionOutcome, HeardReading, ScreenLift, told_readings
from factor_journal.errors import InvalidInputError

MAX_TURN_TEXT_CHARS = 4000
"""The one limit on a turn's text, in characters as JavaScript and Firestore rules count them:
UTF-16 code units (``text_length``).  "é" and "中" count 1, an emoji outside the Basic
Multilingual Plane counts 2.

The same number and unit are enforced by firestore.rules (``isValidTurnText``: ``string.size()``),
by the pipeline (``parse_turn``) and by the app's input box (``max_chars``, a browser text length);
tests/security/test_rules.py holds the rules and ``turn_text_problem`` equal."""
TURN_WHITESPACE = "\t\n\v\f\r "
"""What counts as whitespace when refusing blank text: the ASCII set RE2 (the rules' regex) knows."""
CLIENT_TURN_FIELDS = frozenset({"role", "text", "created_at"})
_BLANK = re.compile(f"[{re.escape(TURN_WHITESPACE)}]*")


def text_length(text: str) -> int:
    """The length of ``text`` in the unit of MAX_TURN_TEXT_CHARS (UTF-16 code units)."""
    return len(text.encode("utf-16-le")) // 2


def turn_text_problem(text: object) -> str | None:
    """Why ``text`` cannot be a turn's text (a sentence for a person), or None when it can.

    Refused: anything but a string, text made only of whitespace, more than MAX_TURN_TEXT_CHARS
    characters.  Exactly what firestore.rules accepts for a client-written turn."""
    if not isinstance(text, str):
        return "text is missing" if text is None else f"text is a {type(text).__name__}, not text"
    if _BLANK.fullmatch(text):
        return "text is empty"
    if text_length(text) > MAX_TURN_TEXT_CHARS:
        return f"text is {text_length(text):,} characters, over the {MAX_TURN_TEXT_CHARS:,}-character limit"
    return None


class InvalidTurnError(InvalidInputError):
    """A turn document that cannot be analysed; the message says why, for a person."""


class Turn(BaseModel):
    turn_id: str
    role: Literal["user", "assistant"]
    text: str
    created_at: datetime


def parse_turn(turn_id: str, data: dict[str, Any] | None) -> Turn:
    """The turn, or InvalidTurnError naming every problem (missing, wrong type, too large, empty)."""
    if not isinstance(data, dict):
        raise InvalidTurnError("the turn document is empty")
    problems: list[str] = []
    role = data.get("role")
    if role not in ("user", "assistant"):
        problems.append(f"role must be 'user' or 'assistant', got {role!r}")
    text = data.get("text")
    problem = turn_text_problem(text)
    if problem:
        problems.append(problem)
    created_at = data.get("created_at")
    if not isinstance(created_at, datetime):
        problems.append(f"created_at must be a timestamp, got {type(created_at).__name__}")
    if problems:
        raise InvalidTurnError("; ".join(problems))
    if created_at.tzinfo is None:  # type: ignore[union-attr]
        created_at = created_at.replace(tzinfo=UTC)  # type: ignore[union-attr]
    return Turn(turn_id=turn_id, role=role, text=text, created_at=created_at)


class StoredTurn(BaseModel):
    """A stored turn as the pages read it, read once (``of``) and never refused: a field that does not read (missing,
    of the wrong type, damaged) is absent (None, or empty), so a page shows what it can of any turn.

    ``status`` is the analysis status as written (what ``store.analysis_status`` reads, None while there is none);
    ``outcome`` the analysis parsed, where a damaged record reads as needing attention (``ExtractionOutcome.of``).
    """

    model_config = ConfigDict(frozen=True)

    turn_id: str
    role: Literal["user", "assistant"] | None = None  # None: no role a turn may have (the pages take it as an answer)
    text: str | None = None
    created_at: datetime | None = None
    about: str | None = None  # the factor an assistant's question asks about; None for one written without it
    status: str | None = None
    outcome: ExtractionOutcome | None = None
    told: list[HeardReading] = Field(default_factory=list)  # what the person told us it was about (``told_readings``)
    lift: ScreenLift | None = None  # the screen the person lifted from it ("It was about us"), None when none was

    @property
    def by_assistant(self) -> bool:
        """True for the assistant's question; any other turn is a person's answer."""
        return self.role == "assistant"

    @classmethod
    def of(cls, turn_id: str, data: Mapping[str, Any] | None) -> StoredTurn:
        """The turn stored under ``turn_id`` as ``data``, whatever state its document is in; never raises.  A time
        stored without a zone is read as UTC (as ``parse_turn`` reads it)."""
        document = dict(data) if isinstance(data, Mapping) else {}
        role, text, created_at, about = (document.get(name) for name in ("role", "text", "created_at", "about"))
        extraction = document.get("extraction")
        status = extraction.get("status") if isinstance(extraction, dict) else None
        if isinstance(created_at, datetime) and created_at.tzinfo is None:
            created_at = created_at.replace(tzinfo=UTC)
        return cls(
            turn_id=turn_id,
            role=role if role in ("user", "assistant") else None,
            text=text if isinstance(text, str) else None,
            created_at=created_at if isinstance(created_at, datetime) else None,
            about=about if isinstance(about, str) and about else None,
            status=None if status is None else str(status),
            outcome=ExtractionOutcome.of(document),
            told=told_readings(document),
            lift=ScreenLift.of(document),
        )


def stored_turns(documents: Iterable[tuple[str, Mapping[str, Any] | None]]) -> list[StoredTurn]:
    """A session's turns as the pages show them, from its (turn id, document) pairs in their order: each read once
    (``StoredTurn.of``), those without text left out (a turn with no words has nothing to show or answer)."""
    return [turn for turn in (StoredTurn.of(turn_id, data) for turn_id, data in documents) if turn.text is not None]


def format_excerpt(turns: list[Turn], limit_per_turn: int = 240) -> str:
    """The journal's conversation excerpt: the given turns as 'User: …' / 'Assistant: …' lines."""
    lines = []
    for turn in turns:
        text = " ".join(turn.text.split())
        if len(text) > limit_per_turn:
            text = text[: limit_per_turn - 1] + "…"
        lines.append(f"{'User' if turn.role == 'user' else 'Assistant'}: {text}")
    return "\n".join(lines)


_READ_AS = {"User": "You", "Assistant": "Assistant"}


def excerpt_as_read(excerpt: str) -> str:
    """A stored excerpt (``format_excerpt``) as the person whose conversation it is reads it: their lines say
    "You: …", the assistant's "Assistant: …". A first line a stored bound cut short (no speaker, with speaker lines
    after it) is left out. Anything else, such as a rationale kept in an excerpt's place, is returned as it is."""
    lines = [(line, *line.partition(": ")) for line in excerpt.split("\n")]
    spoken = [(line, speaker, words) for line, speaker, sep, words in lines if sep and speaker in _READ_AS]
    if not spoken:
        return excerpt
    if lines[0][0] != spoken[0][0]:
        lines = lines[1:]  # the oldest line, cut into by the card's bound
    return "\n".join(
        f"{_READ_AS[speaker]}: {words}" if sep and speaker in _READ_AS else line for line, speaker, sep, words in lines
    )
