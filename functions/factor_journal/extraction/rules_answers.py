"""Bare answers for the keyword rules: yes / no / partly, and the question they answer."""

from __future__ import annotations

import re
from typing import Final, Literal

from factor_journal.extraction.rules_text import _TOKEN, _has_negation, _sentences

MAX_ANSWER_WORDS: Final = 10  # a longer first sentence is not a bare yes/no

Polarity = Literal["yes", "no", "partly"]

# Short answers ------------------------------------------------------------------------------------

_PARTLY = re.compile(
    r"(?<!\w)(?:yes\s+and\s+no|sort\s+of|kind\s+of|partly|partially|somewhat|to\s+some\s+extent|"
    r"more\s+or\s+less|in\s+part)(?!\w)",
    re.IGNORECASE,
)
_UNSURE = re.compile(
    r"(?<!\w)(?:not\s+sure|(?:don't|do\s+not)\s+know|no\s+idea|unsure|maybe|perhaps|not\s+certain|"
    r"depends)(?!\w)",
    re.IGNORECASE,
)
_NO = re.compile(
    r"^\W*(?:no|nope|nah|not|never|none|nothing|negative|(?:i|we)\s+(?:don't|do\s+not|haven't|have\s+not|"
    r"doesn't|didn't)|don't\s+think\s+so)(?!\w)",
    re.IGNORECASE,
)
_YES = re.compile(
    r"^\W*(?:yes|yeah|yep|yup|yea|sure|definitely|absolutely|of\s+course|indeed|correct|certainly|"
    r"affirmative|that's\s+right)(?!\w)",
    re.IGNORECASE,
)
_WE_DO = re.compile(r"^\W*(?:i|we)\s+(?:do|have|does|did|think\s+so|believe\s+so)(?!\w)", re.IGNORECASE)


def answer_polarity(answer: str) -> Polarity | None:
    """A bare answer's polarity, "partly", "no" or "yes"; None if not one (over ``MAX_ANSWER_WORDS`` words).

    "we have nothing like that" is a no; "not sure", "maybe" and "I don't know" are no answer.
    """
    if not answer or len(_TOKEN.findall(answer)) > MAX_ANSWER_WORDS or _UNSURE.search(answer):
        return None
    if _PARTLY.search(answer):
        return "partly"
    if _NO.match(answer):
        return "no"
    if _YES.match(answer):
        return "yes"
    if _WE_DO.match(answer):
        return "no" if _has_negation(answer) else "yes"
    return None


_NEGATIVE_QUESTION = re.compile(
    r"^(?:don't|doesn't|didn't|isn't|aren't|haven't|hasn't|won't|can't|wasn't|weren't)(?!\w)", re.IGNORECASE
)


def _unframed(question_clause: str) -> str:
    """The clause with a leading negative auxiliary masked: "Don't you have X?" asks whether you have X."""
    return _NEGATIVE_QUESTION.sub(lambda match: "_" * len(match.group()), question_clause)


def _last_question(text: str) -> str | None:
    """The last sentence of ``text`` that ends with a question mark, if any."""
    questions = [s for s in _sentences(text) if s.rstrip(" \"')]»").endswith("?")]
    return questions[-1] if questions else None
