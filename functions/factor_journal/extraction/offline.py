"""The offline extractor: a deterministic, rule-based reading of a user turn against the catalog's cues.

The keyword rules (``FJ_EXTRACTOR=rules``; no network, no model): every non-composite factor's
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
The default is the semantic extractor (``semantic.py``), which also reads these rules as one feature;
production may use Gemini (``factor_journal.extraction.gemini``); see
docs/offline-extractor.md for what this reader can and cannot understand.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from typing import Final

from factor_journal.catalog.models import Catalog, Cue, Factor, Level, load_catalog
from factor_journal.extraction.base import ExchangeTurn, ExtractionRequest, ExtractionResult, ProposedUpdate
from factor_journal.extraction.rules_answers import (  # noqa: F401 (re-exported)
    MAX_ANSWER_WORDS,
    Polarity,
    _last_question,
    _unframed,
    answer_polarity,
)
from factor_journal.extraction.rules_patterns import (  # noqa: F401 (re-exported)
    _COMPARATIVE_BEFORE,
    _MEANS_AT_LEAST_ONE,
    _QUANTITY,
    AGREEMENT_CAP,
    AGREEMENT_STEP,
    ANSWER_BASE,
    CONFLICT_PENALTY,
    MAX_ADJECTIVES,
    MAX_CONFIDENCE,
    MIN_CONFIDENCE,
    NUMERIC_BASE,
    PHRASE_BASE,
    Evidence,
    Where,
    _band_level,
    _compile_factor,
    _cue_level,
    _FactorRules,
    _quantity_value,
    combine_confidence,
)
from factor_journal.extraction.rules_text import (  # noqa: F401 (re-exported)
    MAX_TEXT_CHARS,
    NEGATION_WINDOW,
    QUOTE_CHARS,
    _excerpt,
    _negated_before,
    _normalise,
    _sentences,
    _shorten,
    split_clauses,
)

__all__ = ["Evidence", "OfflineExtractor", "answer_polarity", "combine_confidence", "split_clauses"]

RATIONALE_CHARS: Final = 600

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
