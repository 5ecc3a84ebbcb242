"""Conversation turns: the documents the trigger listens on, validated at the boundary.

``users/{uid}/conversations/{session_id}/turns/{turn_id}`` holds ``role``
(user | assistant), ``text`` and ``created_at``.  Everything else about a
turn (its ``extraction`` outcome) is written by the pipeline.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel

from factor_journal.errors import InvalidInputError

MAX_TURN_TEXT_BYTES = 8 * 1024
CLIENT_TURN_FIELDS = frozenset({"role", "text", "created_at"})


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
    if not isinstance(text, str):
        kind = "missing" if text is None else f"a {type(text).__name__}, not text"
        problems.append(f"text is {kind}")
    elif not text.strip():
        problems.append("text is empty")
    elif len(text.encode("utf-8")) > MAX_TURN_TEXT_BYTES:
        problems.append(f"text is {len(text.encode('utf-8'))} bytes, over the {MAX_TURN_TEXT_BYTES}-byte limit")
    created_at = data.get("created_at")
    if not isinstance(created_at, datetime):
        problems.append(f"created_at must be a timestamp, got {type(created_at).__name__}")
    if problems:
        raise InvalidTurnError("; ".join(problems))
    if created_at.tzinfo is None:  # type: ignore[union-attr]
        created_at = created_at.replace(tzinfo=UTC)  # type: ignore[union-attr]
    return Turn(turn_id=turn_id, role=role, text=text, created_at=created_at)  # type: ignore[arg-type]


def format_excerpt(turns: list[Turn], limit_per_turn: int = 240) -> str:
    """The journal's conversation excerpt: the given turns as 'User: …' / 'Assistant: …' lines."""
    lines = []
    for turn in turns:
        text = " ".join(turn.text.split())
        if len(text) > limit_per_turn:
            text = text[: limit_per_turn - 1] + "…"
        lines.append(f"{'User' if turn.role == 'user' else 'Assistant'}: {text}")
    return "\n".join(lines)
