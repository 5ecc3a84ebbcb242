"""Saying back what was understood: under each analysed answer, one line per reading, for the person to confirm
or correct on the spot.

Pure functions over the catalog, the readings stored with the turn's outcome (``documents.HeardReading``) and
the factor states of the summary (no reads of their own): the conversation page renders what comes back, and
acts through the store's confirm / correct / retract.

A line's state says where the person stands on that factor now, whatever page they decided it on (so the page
words it about the factor, not about the line: another answer's line may be the one they decided on):

* ``open``: not decided by the person (the reading, or a later one, stands unconfirmed);
* ``held``: the person had said otherwise before, so this reading is held for them (a conflict);
* ``confirmed``: the person's value agrees with the reading (they confirmed it, here or elsewhere);
* ``corrected``: the person's value is in another band than the reading (``decided`` says which);
* ``withdrawn``: the factor has no value any more (the person said the reading does not apply).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from enum import StrEnum

from pydantic import BaseModel

from factor_journal.catalog import Catalog, Level
from factor_journal.documents import LIFTABLE, HeardReading, ScreenedTurn, ScreenKind, ScreenLift, TornReading
from factor_journal.evidence import agrees
from factor_journal.guidance import in_sentence
from factor_journal.models import USER_BACKED, FactorState
from factor_journal.vocabulary import content_words, word_score

NOTHING_UNDERSTOOD = "Noted — nothing to change in the assessment."


class LineState(StrEnum):
    open = "open"
    held = "held"
    confirmed = "confirmed"
    corrected = "corrected"
    withdrawn = "withdrawn"


class LevelChoice(BaseModel):
    """A level the person can choose instead: its band, the value it stands for and the factor's words for it."""

    level: Level
    value: float
    meaning: str


class SayBackLine(BaseModel):
    """One reading of an answer, as the person is told it."""

    factor_id: str
    factor_name: str
    value: float  # what the answer was read as, on the factor's scale
    band: Level
    meaning: str  # the factor's own words for that band (its rubric)
    quote: str  # the few words of the answer the reading rests on
    state: LineState
    decided: Level | None = None  # the band the person's own value is in, when they decided otherwise
    choices: list[LevelChoice]  # the other levels "Not quite" offers: not the reading's (that is "That's right"),
    # nor the one the person already set
    told: bool = False  # the person told us this, where nothing (or nothing sure) was understood from the answer

    @property
    def can_confirm(self) -> bool:
        """ "That's right" is offered until the person's value agrees with the reading; also after "doesn't
        apply", which it undoes (the reading's value becomes theirs)."""
        return self.state != LineState.confirmed

    @property
    def can_correct(self) -> bool:
        """ "Not quite" is offered while another level is left to choose, or the reading can still be withdrawn."""
        return bool(self.choices) or self.can_withdraw

    @property
    def can_withdraw(self) -> bool:
        """ "Doesn't apply" is offered while the factor has a value to withdraw."""
        return self.state != LineState.withdrawn


def _state_of(catalog: Catalog, reading: HeardReading, state: FactorState | None) -> tuple[LineState, Level | None]:
    if state is None or not state.is_assessed:
        return LineState.withdrawn, None
    assert state.current_value is not None
    factor = catalog.factor(reading.factor_id)
    if state.inference_status not in USER_BACKED:
        return LineState.open, None
    if agrees(factor.scale, state.current_value, reading.value):
        return LineState.confirmed, None
    decided = catalog.band(reading.factor_id, state.current_value)
    return (LineState.held if state.open_conflict is not None else LineState.corrected), decided


def say_back(
    catalog: Catalog,
    readings: Iterable[HeardReading],
    factors: Mapping[str, FactorState],
    told: Iterable[HeardReading] = (),
) -> list[SayBackLine]:
    """The lines to show under an answer, in the order the readings were made, then what the person ``told`` us it
    was about (``documents.told_readings``; a factor already read is not said twice); readings of factors no
    longer in the catalog are left out.  An empty list means nothing was understood (say ``NOTHING_UNDERSTOOD``)."""
    lines = []
    read = [(reading, False) for reading in readings]
    heard = {reading.factor_id for reading, _ in read}
    for reading, by_person in [*read, *((r, True) for r in told if r.factor_id not in heard)]:
        if not catalog.has_factor(reading.factor_id):
            continue
        factor = catalog.factor(reading.factor_id)
        band = catalog.band(factor.id, reading.value)
        state, decided = _state_of(catalog, reading, factors.get(factor.id))
        lines.append(
            SayBackLine(
                factor_id=factor.id,
                factor_name=factor.name,
                value=reading.value,
                band=band,
                meaning=getattr(factor.rubric, band.value),
                quote=reading.quote,
                state=state,
                decided=decided,
                told=by_person,
                choices=[
                    LevelChoice(
                        level=level,
                        value=catalog.level_value(factor.id, level),
                        meaning=getattr(factor.rubric, level.value),
                    )
                    for level in Level
                    if level not in (band, decided)
                ],
            )
        )
    return lines


WHY_NOTHING = {
    ScreenKind.other_organisation: "it is about another organisation",
    ScreenKind.hypothetical: "it is about what might be, not how things are now",
    ScreenKind.deferral: "it hands the question on",
    ScreenKind.question_back: "it is a question for us",
    ScreenKind.pause: "you asked to pause or move on",
    ScreenKind.small_talk: "it says nothing about the company",
    ScreenKind.hostile: "it reads as instructions, not an answer",
    ScreenKind.oversized: "it is longer than an answer may be",
}


def nothing_understood(screened: ScreenedTurn | None) -> str:
    """What to say under an answer that changed nothing: ``NOTHING_UNDERSTOOD``, with why when the answer was set
    aside before it was read (``extraction.listening``)."""
    why = WHY_NOTHING.get(screened.kind) if screened is not None else None
    return f"{NOTHING_UNDERSTOOD.removesuffix('.')} ({why})." if why else NOTHING_UNDERSTOOD


READ_OFFLINE = "Read offline"
READ_BY_GEMINI = "Read by Gemini"
OFFLINE_READERS = frozenset({"semantic", "rules", "offline"})  # the embedded reader and the keyword rules
GEMINI_PATH = "gemini"  # ``GeminiExtractor.name``


def read_by(extractor: str | None, model: str | None) -> str | None:
    """Who read an answer, as the say-back says it in small text under the answer's lines, from what the pipeline
    wrote on the turn's outcome (``AnalysisDetails.extractor`` and ``model``; a client never writes an outcome):

    * the embedded reader or the keyword rules: ``READ_OFFLINE``;
    * the Gemini path, when the model version the answer came back with names Gemini: ``READ_BY_GEMINI``;
    * the Gemini path answered by any other model (a language model in Gemini's seat, whose answers a stand-in
      serves with that model's name, as ``make demo`` replays them): said as such, with the model's name, and
      never as Gemini.

    None when no reader read the answer (set aside before any reader: no model on the outcome) or the reader is
    not one of these.  Pure."""
    if not model:
        return None
    if extractor in OFFLINE_READERS:
        return READ_OFFLINE
    if extractor != GEMINI_PATH:
        return None
    if model.strip().lower().startswith("gemini"):
        return READ_BY_GEMINI
    return f"Read through the Gemini path by {model.strip()}, a language model in Gemini's seat, not by Gemini"


def in_one_sentence(lines: list[SayBackLine]) -> str:
    """What an answer was understood to say, as one sentence to be read out (a screen reader's announcement of the
    lines shown under the answer): "Understood from your answer: Data quality is low; Automation maturity is high."
    """
    readings = "; ".join(f"{line.factor_name} is {line.band.value}" for line in lines)
    return f"Understood from your answer: {readings}."


def heard_factors(readings: Iterable[HeardReading]) -> set[str]:
    """The factors an answer spoke to: what the next question must not ask again."""
    return {reading.factor_id for reading in readings}


# When nothing, or nothing sure, was understood --------------------------------------------------------------------

ABOUT_CHOICES = 4  # factors "This was about…" offers under an answer nothing was understood from


def levels_of(catalog: Catalog, factor_id: str) -> list[LevelChoice]:
    """A factor's three levels, low first, each with the value it stands for and the factor's words for it."""
    factor = catalog.factor(factor_id)
    return [
        LevelChoice(level=level, value=catalog.level_value(factor_id, level), meaning=getattr(factor.rubric, level))
        for level in Level
    ]


class AboutChoice(BaseModel):
    """A factor an answer may have been about, with its three levels in its own words (one click each)."""

    factor_id: str
    factor_name: str
    levels: list[LevelChoice]


def about_choice(catalog: Catalog, factor_id: str) -> AboutChoice:
    return AboutChoice(
        factor_id=factor_id, factor_name=catalog.factor(factor_id).name, levels=levels_of(catalog, factor_id)
    )


def closest_factors(
    catalog: Catalog, ranking: Iterable[str], answer: str, limit: int = ABOUT_CHOICES
) -> list[AboutChoice]:
    """The few factors an answer nothing was understood from comes closest to, for "This was about…": the reader's
    own ranking (``AnalysisDetails.ranking``, closest first) and a search of the catalog by the answer's words
    (``vocabulary.word_score`` of at least 1: a cue phrase, or two name or cue words), the search's best in the
    last place when the ranking does not have it; each factor once, composites and factors no longer in the
    catalog left out."""
    text = " ".join(answer.lower().split())
    words = content_words(text)
    searched = sorted(
        (
            (score, factor.id)
            for factor in catalog.assessable_factors
            if (score := word_score(factor, text, words)) >= 1
        ),
        key=lambda item: (-item[0], item[1]),
    )
    known = [fid for fid in ranking if catalog.has_factor(fid) and not catalog.factor(fid).is_composite]
    found = [fid for _, fid in searched if fid not in known[: limit - 1]]
    chosen = list(dict.fromkeys([*known[: limit - 1], *found[:1], *known[limit - 1 :], *found[1:]]))
    return [about_choice(catalog, factor_id) for factor_id in chosen[:limit]]


def every_factor(catalog: Catalog) -> dict[str, str]:
    """Every factor a person can say an answer was about ("Something else"), factor id -> name, by name."""
    return {f.id: f.name for f in sorted(catalog.assessable_factors, key=lambda f: (f.name.lower(), f.id))}


def gist(catalog: Catalog, factor_id: str) -> str:
    """What a factor is about, as the words of a question ("who owns the data and what its terms mean"): the
    catalog's description up to its first colon, asides in parentheses and the final full stop left out."""
    described = re.sub(r"\s*\([^)]*\)", "", " ".join(catalog.factor(factor_id).description.split()))
    return in_sentence(described.split(":")[0].strip().rstrip(".")) or in_sentence(catalog.factor(factor_id).name)


class TornOption(BaseModel):
    """One answer to a torn reading's question: the reading it stands for, and its button's words."""

    factor_id: str
    factor_name: str
    level: Level
    value: float
    label: str  # names its factor (and its level when the question is about the level)


class TornQuestion(BaseModel):
    """What the say-back asks when the reader could not choose (``documents.TornReading``), and its answers."""

    question: str
    options: list[TornOption]


def torn_question(catalog: Catalog, torn: TornReading) -> TornQuestion | None:
    """The question for a torn reading, in the catalog's words: which factor ("Is this about how far … (Data
    quality) or who owns … (Data governance)?") or, when its options are levels of one factor, which level ("For
    Data quality, is it more “…” or “…”?", the rubric's words).  None when fewer than two of its options are left
    in the catalog."""
    options = [option for option in torn.options if catalog.has_factor(option.factor_id)]
    factors = list(dict.fromkeys(option.factor_id for option in options))
    if len(options) < 2:
        return None
    one_factor = len(factors) == 1
    answers, phrases = [], []
    for option in options:
        factor = catalog.factor(option.factor_id)
        level = catalog.band(factor.id, option.value)
        if one_factor:
            phrases.append(f"“{getattr(factor.rubric, level).strip().rstrip('.')}”")
            label = f"{factor.name} is {level.value}"
        else:
            phrases.append(f"{gist(catalog, factor.id)} ({factor.name})")
            label = f"It is about {factor.name}"
        answers.append(
            TornOption(factor_id=factor.id, factor_name=factor.name, level=level, value=option.value, label=label)
        )
    between = ", ".join(phrases[:-1]) + f" or {phrases[-1]}"
    if one_factor:
        question = f"For {catalog.factor(factors[0]).name}, is it more {between}?"
    else:
        question = f"Is this about {between}?"
    return TornQuestion(question=question, options=answers)


def torn_questions(catalog: Catalog, torn: Iterable[TornReading], told: Iterable[HeardReading]) -> list[TornQuestion]:
    """The questions still to ask about an answer: none once the person told us what it was about (``told``), one
    per torn reading otherwise."""
    if any(True for _ in told):
        return []
    return [question for reading in torn if (question := torn_question(catalog, reading)) is not None]


LIFT = "It was about us"


def can_lift(screened: ScreenedTurn | None, lifted: ScreenLift | None) -> bool:
    """Whether an answer set aside by the screen offers "It was about us": set aside for a reason its person may
    lift (``documents.LIFTABLE``), and not lifted yet."""
    return screened is not None and screened.kind in LIFTABLE and lifted is None
