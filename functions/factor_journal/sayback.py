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

from collections.abc import Iterable, Mapping
from enum import StrEnum

from pydantic import BaseModel

from factor_journal.catalog import Catalog, Level
from factor_journal.documents import HeardReading, ScreenedTurn, ScreenKind
from factor_journal.evidence import agrees
from factor_journal.models import USER_BACKED, FactorState

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
    catalog: Catalog, readings: Iterable[HeardReading], factors: Mapping[str, FactorState]
) -> list[SayBackLine]:
    """The lines to show under an answer, in the order the readings were made; readings of factors no longer in
    the catalog are left out.  An empty list means nothing was understood (say ``NOTHING_UNDERSTOOD``)."""
    lines = []
    for reading in readings:
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


def in_one_sentence(lines: list[SayBackLine]) -> str:
    """What an answer was understood to say, as one sentence to be read out (a screen reader's announcement of the
    lines shown under the answer): "Understood from your answer: Data quality is low; Automation maturity is high."
    """
    readings = "; ".join(f"{line.factor_name} is {line.band.value}" for line in lines)
    return f"Understood from your answer: {readings}."


def heard_factors(readings: Iterable[HeardReading]) -> set[str]:
    """The factors an answer spoke to: what the next question must not ask again."""
    return {reading.factor_id for reading in readings}
