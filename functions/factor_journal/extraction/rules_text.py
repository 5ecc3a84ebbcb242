"""Text handling shared by the keyword rules: normalising, clauses, sentences, negation, quoting."""

from __future__ import annotations

import re
from typing import Final

from factor_journal.vocabulary import clip

MAX_TEXT_CHARS: Final = 8000  # only the start of a turn (or of the question it answers) is read
NEGATION_WINDOW: Final = 4  # tokens before a phrase searched for a negation word
QUOTE_CHARS: Final = 120


def _wordlist(text: str) -> tuple[str, ...]:
    """The whitespace-separated words of ``text`` (keeps long word lists readable)."""
    return tuple(text.split())


_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\u2032": "'"})
_TOKEN = re.compile(r"\w+(?:['-]\w+)*")
_CLAUSE_BREAK = re.compile(
    r"[.!?;\u2026]+(?=\s|$)|,(?=\s|$)|[\r\n]+|(?<!\w)(?:but|however|although|though|whereas)(?!\w)",
    re.IGNORECASE,
)
_SENTENCE_BREAK = re.compile(r"(?<=[.!?\u2026])\s+|[\r\n]+")
_NEGATIONS: Final = frozenset(
    _wordlist(
        "no not never without lack lacks lacked lacking cannot nobody none nothing neither nor hardly barely "
        "dont doesnt didnt isnt arent havent hasnt cant wont wasnt werent"
    )
)


def _normalise(text: str) -> str:
    """The first ``MAX_TEXT_CHARS`` characters with typographic apostrophes made plain (same length)."""
    return text[:MAX_TEXT_CHARS].translate(_APOSTROPHES)


def _is_negation(token: str) -> bool:
    token = token.lower()
    return token in _NEGATIONS or token.endswith("n't")


def _has_negation(text: str) -> bool:
    return any(_is_negation(token) for token in _TOKEN.findall(text))


def split_clauses(text: str) -> list[str]:
    """Non-empty clauses of ``text``: split at . ; ! ? , line breaks, "but", "however" and the like."""
    return [clause.strip() for clause in _CLAUSE_BREAK.split(text) if clause and clause.strip()]


def _sentences(text: str) -> list[str]:
    return [sentence.strip() for sentence in _SENTENCE_BREAK.split(text) if sentence and sentence.strip()]


def _negated_before(clause: str, start: int) -> bool:
    """Whether a negation word is among the ``NEGATION_WINDOW`` tokens before ``start`` in ``clause``."""
    before = _TOKEN.findall(clause[max(0, start - 400) : start])
    return any(_is_negation(token) for token in before[-NEGATION_WINDOW:])


def _excerpt(clause: str, start: int, end: int) -> str:
    """The clause, or a window of it around ``start``..``end`` when it is longer than ``QUOTE_CHARS``."""
    if len(clause) <= QUOTE_CHARS:
        return clause
    room = max(0, QUOTE_CHARS - (end - start)) // 2
    left, right = max(0, start - room), min(len(clause), end + room)
    return ("…" if left else "") + clause[left:right].strip() + ("…" if right < len(clause) else "")


def _shorten(text: str, limit: int = QUOTE_CHARS) -> str:
    """``text`` on one line, whole when it has at most ``limit`` characters, else cut between words as
    ``vocabulary.clip`` cuts a line of prose (about ``limit`` characters with its "…")."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else clip(flat, limit - 1)
