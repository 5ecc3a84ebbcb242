"""The keyword rules compiled from the catalog: cue-phrase and count patterns, evidence, confidence."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from factor_journal.catalog.models import Cue, Factor, Level, NumericCue
from factor_journal.extraction.rules_text import _has_negation, _normalise, _wordlist

MAX_ADJECTIVES: Final = 2  # words allowed between a count and its noun
PHRASE_BASE: Final = 0.55
NUMERIC_BASE: Final = 0.65  # a count is more specific than a phrase
ANSWER_BASE: Final = 0.5  # a yes/no leans on the assistant's wording
AGREEMENT_STEP: Final = 0.1
AGREEMENT_CAP: Final = 0.8
CONFLICT_PENALTY: Final = 0.15
MIN_CONFIDENCE: Final = 0.3
MAX_CONFIDENCE: Final = 0.85

Kind = Literal["cue", "count", "answer"]
Where = tuple[str, int]  # ("user" | "question" | "answer", clause index): where a reading was found

# Patterns -----------------------------------------------------------------------------------------


def _inflected(word: str) -> str:
    """A regex for ``word`` in its singular or plural form ("system(s)", "year(s)", "glossar(y|ies)").

    Words shorter than three letters, with other characters than letters, or of three letters ending
    in "s" ("aws") are matched exactly.
    """
    lower = word.lower()
    if len(word) < 3 or not word.isalpha() or (len(word) == 3 and lower.endswith("s")):
        return re.escape(word)
    if lower.endswith("ies"):
        return re.escape(word[:-3]) + "(?:y|ies)"
    if lower.endswith(("ss", "ch", "sh", "x", "z")):
        return re.escape(word) + "(?:es)?"
    if lower.endswith("s"):
        return re.escape(word[:-1]) + "s?"
    if len(word) > 3 and lower.endswith("y") and lower[-2] not in "aeiou":
        return re.escape(word[:-1]) + "(?:y|ies)"
    return re.escape(word) + "s?"


def _words_pattern(phrase: str) -> str:
    """A regex for a phrase: its words in order, any whitespace between, each singular or plural."""
    return r"\s+".join(_inflected(word) for word in _normalise(phrase).split())


def _phrase_regex(phrase: str) -> re.Pattern[str]:
    return re.compile(r"(?<!\w)" + _words_pattern(phrase) + r"(?!\w)", re.IGNORECASE)


_NUMBER_WORDS: Final[dict[str, int]] = {
    word: value
    for value, word in enumerate(
        _wordlist(
            "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
            "sixteen seventeen eighteen nineteen twenty"
        )
    )
}
# Quantities in words; None ("any") counts as zero only when negated ("we don't have any ...").
_QUANTITY_WORDS: Final[dict[str, float | None]] = {
    **_NUMBER_WORDS,
    "a couple of": 2,
    "a couple": 2,
    "couple of": 2,
    "a few": 3,
    "several": 4,
    "a dozen": 12,
    "dozens of": 24,
    "dozens": 24,
    "hundreds of": 200,
    "hundreds": 200,
    "thousands of": 2000,
    "thousands": 2000,
    "a single": 1,
    "no": 0,
    "any": None,
}
_COMPARATIVE_BEFORE = re.compile(r"(?:no|not)\s+(?:more|less|fewer)\s+than\s*$", re.IGNORECASE)
_MEANS_AT_LEAST_ONE: Final = frozenset({"any", "one", "a single"})  # negated, these mean none
_DIGITS = r"\d{1,12}(?:,\d{3})*(?:\.\d+)?"
_QUANTITY = re.compile(
    r"(?<![\w.,-])(?:(?P<digits>" + _DIGITS + r")(?:\s*(?:-|\u2013|to)\s*(?P<upper>" + _DIGITS + r"))?\+?"
    r"|(?P<words>"
    + "|".join(r"\s+".join(map(re.escape, q.split())) for q in sorted(_QUANTITY_WORDS, key=len, reverse=True))
    + r"))(?![\w-])",
    re.IGNORECASE,
)
_NOT_ADJECTIVES: Final = _wordlist(
    "of the a an and or nor but to in on for with from at by per than as that which who whom whose we our "
    "us they their them it its is are was were be been being have has had do does did not no never about "
    "over under across between into onto out up down each every all some any"
)
_ADJECTIVE = r"(?:(?!(?:" + "|".join(_NOT_ADJECTIVES) + r")(?![\w'-]))[^\W\d_][\w'-]*\s+)"


def _quantity_value(match: re.Match[str]) -> float | None:
    """The number a quantity match stands for (a range is its midpoint); None for "any"."""
    if match["digits"] is not None:
        low = float(match["digits"].replace(",", ""))
        return low if match["upper"] is None else (low + float(match["upper"].replace(",", ""))) / 2
    return _QUANTITY_WORDS[" ".join(match["words"].lower().split())]


def _band_level(numeric: NumericCue, number: float) -> Level:
    """The level of the band with the smallest max at or above ``number`` (else the last band's)."""
    for band in numeric.bands:
        if band.max is None or number <= band.max:
            return band.level
    return numeric.bands[-1].level


_NEGATED_LEVEL: Final = {Level.high: Level.low, Level.low: Level.high, Level.mid: Level.low}


def _cue_level(cue: Cue, negated: bool) -> Level:
    """The cue's level, or its negated level (``negated_level`` or high<->low, mid->low) when negated."""
    if not negated:
        return cue.level
    return cue.negated_level or _NEGATED_LEVEL[cue.level]


# Rules --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _PhraseRule:
    cue: Cue
    regex: re.Pattern[str]
    self_negating: bool  # the phrase holds its own negation ("nobody owns"): never negated again


@dataclass(frozen=True, slots=True)
class _CountRule:
    numeric: NumericCue
    index: int
    follow: re.Pattern[str]  # matched right after a quantity: adjectives, then one of the nouns


@dataclass(frozen=True, slots=True)
class _FactorRules:
    factor: Factor
    phrases: tuple[_PhraseRule, ...]
    counts: tuple[_CountRule, ...]


def _compile_factor(factor: Factor) -> _FactorRules:
    """The factor's cue phrases and numeric cues as regexes (phrases without any words are skipped)."""
    phrases = tuple(
        _PhraseRule(cue, _phrase_regex(cue.phrase), _has_negation(cue.phrase))
        for cue in factor.cues
        if cue.phrase.split()
    )
    counts = []
    for index, numeric in enumerate(factor.numeric_cues):
        nouns = sorted({noun for noun in numeric.nouns if noun.split()}, key=lambda n: (-len(n), n))
        if nouns:
            follow = (
                r"\s+"
                + _ADJECTIVE
                + f"{{0,{MAX_ADJECTIVES}}}?"
                + "(?P<noun>"
                + "|".join(_words_pattern(noun) for noun in nouns)
                + r")(?!\w)"
            )
            counts.append(_CountRule(numeric, index, re.compile(follow, re.IGNORECASE)))
    return _FactorRules(factor, phrases, tuple(counts))


@dataclass(frozen=True, slots=True)
class Evidence:
    """One reading of one factor: where it was found, the level it suggests and how to quote it."""

    factor_id: str
    kind: Kind
    level: Level
    where: Where
    start: int
    end: int
    key: str  # what makes two readings the same evidence (a repeated phrase counts once)
    quote: str
    note: str
    cue: Cue | None = None
    negated: bool = False

    @property
    def base(self) -> float:
        return {"cue": PHRASE_BASE, "count": NUMERIC_BASE, "answer": ANSWER_BASE}[self.kind]

    def contains(self, other: Evidence) -> bool:
        return (
            self.where == other.where
            and self.start <= other.start
            and other.end <= self.end
            and (self.start, self.end) != (other.start, other.end)
        )


def combine_confidence(readings: Sequence[tuple[Level, float]]) -> float:
    """Confidence of several (level, base confidence) readings of one factor, within 0.3..0.85.

    The most specific base, plus ``AGREEMENT_STEP`` per further reading of the most
    common level (capped at ``AGREEMENT_CAP``), minus ``CONFLICT_PENALTY`` when the
    readings disagree.
    """
    if not readings:
        return MIN_CONFIDENCE
    counts = Counter(level for level, _ in readings)
    agreeing = max(counts.values())
    confidence = min(max(base for _, base in readings) + AGREEMENT_STEP * (agreeing - 1), AGREEMENT_CAP)
    if len(counts) > 1:
        confidence -= CONFLICT_PENALTY
    return round(min(max(confidence, MIN_CONFIDENCE), MAX_CONFIDENCE), 2)
