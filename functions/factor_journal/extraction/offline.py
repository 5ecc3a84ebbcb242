"""The offline extractor: a deterministic, rule-based reading of a user turn against the catalog's cues.

It is the embedded default (no network, no model): every non-composite factor's
cue phrases and numeric cues are compiled once, then each user turn is split
into clauses and read with four rules:

* **cue phrases**, matched word-bounded and case-insensitively (flexible
  whitespace, each word singular or plural), give the cue's level;
* **negation**: a negation word within the four tokens before a phrase, in the
  same clause, turns the level into ``negated_level`` (or high<->low, mid->low).
  A phrase that itself holds a negation word ("nobody owns") is never negated
  again;
* **counts**: a number ("5", "two", "a couple of", "dozens of", "no") directly
  before one of a numeric cue's nouns, with at most two adjectives between,
  picks the cue's band ("5 different systems");
* **short answers**: a bare yes/no ("No, nothing like that yet") applies the
  cue phrase of the question the assistant asked just before, with the answer's
  polarity.

Several readings of one factor are averaged; agreeing readings raise the
confidence, conflicting ones lower it, and it always stays within
``MIN_CONFIDENCE``..``MAX_CONFIDENCE``: a lexical reading never claims certainty.
Production uses Gemini (``factor_journal.extraction.gemini``); see
docs/offline-extractor.md for what this reader can and cannot understand.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from factor_journal.catalog.models import Catalog, Cue, Factor, Level, NumericCue, load_catalog
from factor_journal.extraction.base import ExchangeTurn, ExtractionRequest, ExtractionResult, ProposedUpdate

__all__ = ["Evidence", "OfflineExtractor", "answer_polarity", "combine_confidence", "split_clauses"]

MAX_TEXT_CHARS: Final = 8000  # only the start of a turn (or of the question it answers) is read
NEGATION_WINDOW: Final = 4  # tokens before a phrase searched for a negation word
MAX_ADJECTIVES: Final = 2  # words allowed between a count and its noun
MAX_ANSWER_WORDS: Final = 10  # a longer first sentence is not a bare yes/no
QUOTE_CHARS: Final = 120
RATIONALE_CHARS: Final = 600

PHRASE_BASE: Final = 0.55
NUMERIC_BASE: Final = 0.65  # a count is more specific than a phrase
ANSWER_BASE: Final = 0.5  # a yes/no leans on the assistant's wording
AGREEMENT_STEP: Final = 0.1
AGREEMENT_CAP: Final = 0.8
CONFLICT_PENALTY: Final = 0.15
MIN_CONFIDENCE: Final = 0.3
MAX_CONFIDENCE: Final = 0.85

Kind = Literal["cue", "count", "answer"]
Polarity = Literal["yes", "no", "partly"]
Where = tuple[str, int]  # ("user" | "question" | "answer", clause index): where a reading was found

# Text ---------------------------------------------------------------------------------------------


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
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


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
                r"\s+" + _ADJECTIVE + f"{{0,{MAX_ADJECTIVES}}}?"
                + "(?P<noun>" + "|".join(_words_pattern(noun) for noun in nouns) + r")(?!\w)"
            )  # fmt: skip
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


# The extractor ------------------------------------------------------------------------------------


class OfflineExtractor:
    """Deterministic cue-phrase extractor over a catalog; never calls out, never raises on text."""

    name = "offline"
    model = "offline-rules-v1"

    def __init__(self, catalog: Catalog | None = None) -> None:
        self.catalog = catalog if catalog is not None else load_catalog()
        self._rules = tuple(_compile_factor(factor) for factor in self.catalog.assessable_factors)

    # Protocol -------------------------------------------------------------------------------------

    def extract(self, request: ExtractionRequest) -> ExtractionResult:
        """Updates for every factor the turn's cues speak to (or the question a bare yes/no answers)."""
        updates = self.read(request.text, request.recent)
        return ExtractionResult(
            raw_updates=[update.model_dump() for update in updates],
            extractor=self.name,
            model=self.model,
            prompt_tokens=0,
            response_tokens=0,
        )

    def read(self, text: str, recent: Sequence[ExchangeTurn] = ()) -> list[ProposedUpdate]:
        """The proposed updates for a user turn, in catalog order, one per factor read."""
        evidence = self.evidence(text, recent)
        by_factor: dict[str, list[Evidence]] = defaultdict(list)
        for item in evidence:
            by_factor[item.factor_id].append(item)
        return [
            self._update(rules.factor, by_factor[rules.factor.id], evidence)
            for rules in self._rules
            if by_factor.get(rules.factor.id)
        ]

    def evidence(self, text: str, recent: Sequence[ExchangeTurn] = ()) -> list[Evidence]:
        """Every reading of the turn: its clauses' cues and counts, then a bare answer's reading."""
        text = _normalise(text)
        found = [
            item
            for index, clause in enumerate(split_clauses(text))
            for item in self._read_clause(clause, ("user", index))
        ]
        return found + self._read_answer(text, recent)

    # Reading --------------------------------------------------------------------------------------

    def _read_clause(self, clause: str, where: Where, *, counts: bool = True) -> list[Evidence]:
        """Readings in one clause, one per stretch of text and factor.

        A reading inside a longer one of the same factor is dropped ("two data scientists" is a
        count, not also the phrase "data scientists"), and so is a second reading of the very same
        words ("data scientist" and "data scientists" both match "data scientists").
        """
        found: list[Evidence] = []
        for rules in self._rules:
            readings = self._phrases(rules, clause, where)
            if counts:
                readings += self._counts(rules, clause, where)
            readings.sort(key=lambda reading: not _says_exactly(clause, reading))  # stable: exact wording first
            spans: set[tuple[int, int]] = set()
            for reading in readings:
                if (reading.start, reading.end) in spans or any(other.contains(reading) for other in readings):
                    continue
                spans.add((reading.start, reading.end))
                found.append(reading)
        return found

    def _phrases(self, rules: _FactorRules, clause: str, where: Where) -> list[Evidence]:
        found = []
        for rule in rules.phrases:
            for match in rule.regex.finditer(clause):
                negated = not rule.self_negating and _negated_before(clause, match.start())
                phrase = rule.cue.phrase
                found.append(
                    Evidence(
                        factor_id=rules.factor.id,
                        kind="cue",
                        level=_cue_level(rule.cue, negated),
                        where=where,
                        start=match.start(),
                        end=match.end(),
                        key=f"cue:{phrase.lower()}:{negated}",
                        quote=_excerpt(clause, match.start(), match.end()),
                        note=f'{"negated cue" if negated else "cue"} "{phrase}"',
                        cue=rule.cue,
                        negated=negated,
                    )
                )
        return found

    def _counts(self, rules: _FactorRules, clause: str, where: Where) -> list[Evidence]:
        if not rules.counts:
            return []
        found = []
        for quantity in _QUANTITY.finditer(clause):
            number = self._count_value(quantity, clause)
            if number is None:
                continue
            for rule in rules.counts:
                noun = rule.follow.match(clause, quantity.end())
                if noun is None:
                    continue
                level = _band_level(rule.numeric, number)
                found.append(
                    Evidence(
                        factor_id=rules.factor.id,
                        kind="count",
                        level=level,
                        where=where,
                        start=quantity.start(),
                        end=noun.end(),
                        key=f"count:{rule.index}:{level.value}",
                        quote=_excerpt(clause, quantity.start(), noun.end()),
                        note=f'count {number:g} of "{" ".join(noun["noun"].split())}"',
                    )
                )
                break  # one quantity counts one thing
        return found

    @staticmethod
    def _count_value(quantity: re.Match[str], clause: str) -> float | None:
        """The count a quantity states in its clause; None when unusable (e.g. "we don't have 5 ...")."""
        value = _quantity_value(quantity)
        words = " ".join((quantity["words"] or "").lower().split())
        if _negated_before(clause, quantity.start()) and not _COMPARATIVE_BEFORE.search(
            clause, max(0, quantity.start() - 40), quantity.start()
        ):
            return 0.0 if words in _MEANS_AT_LEAST_ONE else None
        return value

    def _read_answer(self, text: str, recent: Sequence[ExchangeTurn]) -> list[Evidence]:
        """A bare yes/no's reading: the cues of the question just asked, with the answer's polarity."""
        if not recent or recent[-1].role != "assistant":
            return []
        sentences = _sentences(text)
        answer = sentences[0] if sentences else ""
        polarity = answer_polarity(answer)
        if polarity is None:
            return []
        if any(self._read_clause(clause, ("answer", i)) for i, clause in enumerate(split_clauses(answer))):
            return []  # the answer says something itself: read as such, not as a bare yes/no
        question = _last_question(_normalise(recent[-1].text))
        if question is None:
            return []
        asked = [
            item
            for index, clause in enumerate(split_clauses(question))
            for item in self._read_clause(_unframed(clause), ("question", index), counts=False)
        ]
        return [self._answered(item, item.cue, polarity, answer, question) for item in asked if item.cue]

    @staticmethod
    def _answered(asked: Evidence, cue: Cue, polarity: Polarity, answer: str, question: str) -> Evidence:
        """The question's reading turned by the answer: yes keeps it, no negates it, partly is mid."""
        negated = asked.negated if polarity == "yes" else not asked.negated
        level = Level.mid if polarity == "partly" else _cue_level(cue, negated)
        described = "partly" if polarity == "partly" else ("negated cue" if negated else "cue")
        return Evidence(
            factor_id=asked.factor_id,
            kind="answer",
            level=level,
            where=asked.where,
            start=asked.start,
            end=asked.end,
            key=f"answer:{cue.phrase.lower()}:{level.value}",
            quote=f'"{_shorten(answer)}" to "{_shorten(question)}"',
            note=f'{described} "{cue.phrase}"',
        )

    # Updates --------------------------------------------------------------------------------------

    def _update(self, factor: Factor, readings: list[Evidence], everything: list[Evidence]) -> ProposedUpdate:
        """One factor's update: mean level value, combined confidence, quoted rationale, dependencies."""
        distinct = _first_of_each_key(sorted(readings, key=_position))
        values = [self.catalog.level_value(factor.id, item.level) for item in distinct]
        return ProposedUpdate(
            factor_id=factor.id,
            value=round(sum(values) / len(values), 2),
            confidence=combine_confidence([(item.level, item.base) for item in distinct]),
            rationale=_rationale(distinct),
            inferred_from=_inferred_from(factor, readings, everything),
        )


def _says_exactly(clause: str, reading: Evidence) -> bool:
    """Whether the clause has the reading's cue phrase word for word (not another inflection of it)."""
    said = " ".join(clause[reading.start : reading.end].lower().split())
    return reading.cue is not None and said == " ".join(_normalise(reading.cue.phrase).lower().split())


def _first_of_each_key(readings: Sequence[Evidence]) -> list[Evidence]:
    """The readings without repeats: the same cue said twice is one piece of evidence, not two."""
    seen: set[str] = set()
    distinct = []
    for item in readings:
        if item.key not in seen:
            seen.add(item.key)
            distinct.append(item)
    return distinct


def _position(item: Evidence) -> tuple[int, int, int]:
    """Reading order: the user's clauses first, then the question a bare answer answered."""
    return (0 if item.where[0] == "user" else 1, item.where[1], item.start)


def _rationale(readings: Sequence[Evidence]) -> str:
    """One sentence quoting what was said: 'User said "..." (negated cue "..."); ...'."""
    said = _quoted([item for item in readings if item.kind != "answer"], quote_marks=True)
    answered = _quoted([item for item in readings if item.kind == "answer"], quote_marks=False)
    parts = []
    if said:
        parts.append("User said " + "; ".join(said))
    if answered:
        parts.append(("and answered " if said else "User answered ") + "; ".join(answered))
    sentence = " ".join(parts)
    if len(sentence) > RATIONALE_CHARS:
        sentence = sentence[: RATIONALE_CHARS - 1].rstrip() + "…"
    return sentence + "."


def _quoted(readings: Sequence[Evidence], *, quote_marks: bool) -> list[str]:
    """'"quote" (note, note)' per quote, readings with the same quote sharing it."""
    notes: dict[str, list[str]] = {}
    for item in readings:
        notes.setdefault(item.quote, []).append(item.note)
    return [
        (f'"{_shorten(quote)}"' if quote_marks else quote) + f" ({', '.join(described)})"
        for quote, described in notes.items()
    ]


def _inferred_from(factor: Factor, readings: Sequence[Evidence], everything: Sequence[Evidence]) -> list[str]:
    """The factor's dependencies whose cues matched in a clause where this factor's cues matched."""
    clauses = {item.where for item in readings}
    present = {item.factor_id for item in everything if item.where in clauses}
    return [dependency for dependency in factor.depends_on if dependency in present - {factor.id}]
