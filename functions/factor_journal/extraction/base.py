"""The extractor interface: what a turn is analysed with, and what comes back.

An extractor reads one user turn (with the session's recent exchanges and the
candidate factors, their rubrics and current values) and proposes factor
updates.  Its output is *untrusted*: ``raw_updates`` are plain dictionaries
that the pipeline screens against the catalog before anything is stored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from factor_journal.errors import FactorJournalError


class ExchangeTurn(BaseModel):
    role: Literal["user", "assistant"]
    text: str
    created_at: datetime | None = None


class CandidateFactor(BaseModel):
    """A factor the turn may speak to, with what we know of it so far."""

    factor_id: str
    name: str
    category: str
    description: str = ""
    rubric_low: str
    rubric_mid: str
    rubric_high: str
    scale_min: float = 0
    scale_max: float = 100
    current_value: float | None = None
    current_confidence: float = 0.0
    inference_status: str = "unassessed"


class ExtractionRequest(BaseModel):
    user_id: str
    session_id: str
    turn_id: str
    text: str  # the user turn being analysed
    recent: list[ExchangeTurn] = Field(default_factory=list)  # preceding turns, oldest first
    candidates: list[CandidateFactor] = Field(default_factory=list)
    # The person said this answer is evidence about their organisation after the screen had set it aside
    # (``documents.LIFTABLE``): a reader must not set it aside again for that reason
    screen_lifted: bool = False


class ProposedUpdate(BaseModel):
    """One update as an extractor must return it (also the LLM's response schema)."""

    model_config = ConfigDict(extra="forbid")

    factor_id: str = Field(description="Id of a catalog factor")
    value: float = Field(description="The factor's value on its scale implied by the conversation")
    confidence: float = Field(description="0-1: how sure the conversation makes this value")
    rationale: str = Field(description="One sentence: what the user said that implies this value")
    quote: str = Field(
        default="",
        description="The few words of the user's answer this reading rests on, copied exactly (at most 12 words)",
    )
    inferred_from: list[str] = Field(
        default_factory=list, description="Ids of other catalog factors this reading rests on"
    )


# What a language model reader says a turn is, before any reading.  The values after ``evidence`` are
# ``documents.ScreenKind``'s, so a turn the model sets aside is named as the rules name it.  The docstring is the
# description the model reads in the response schema.
class TurnKind(StrEnum):
    """What the turn is: evidence about this organisation today, or why it is none."""

    evidence = "evidence"  # some part of it is evidence about this organisation today
    hostile = "hostile"
    other_organisation = "other_organisation"
    hypothetical = "hypothetical"
    deferral = "deferral"
    question_back = "question_back"
    pause = "pause"
    small_talk = "small_talk"


class ExtractionOutput(BaseModel):
    """The language model reader's response schema.  ``turn`` comes first, so the model says what the turn is
    before it reads any factor; only an ``evidence`` turn's updates are stored (``pipeline.read_turn``).  Output
    without ``turn`` (a reader answering the schema of before) is taken as evidence."""

    model_config = ConfigDict(extra="forbid")

    turn: TurnKind = Field(
        default=TurnKind.evidence,
        description="evidence when any part of the turn is evidence about this organisation today; else why not",
    )
    updates: list[ProposedUpdate] = Field(default_factory=list)


class TurnVerdict(BaseModel):
    """The evidence check's response schema: only what the turn is (``GeminiSettings.evidence_check``)."""

    model_config = ConfigDict(extra="forbid")

    turn: TurnKind = Field(
        description="evidence when any part of the turn is evidence about this organisation today; else why not"
    )


@dataclass
class ExtractionResult:
    raw_updates: list[Any]  # untrusted: each should be a ProposedUpdate-shaped dict
    extractor: str  # "offline" | "gemini"
    model: str | None = None
    prompt_tokens: int = 0  # all input tokens, cached ones included
    response_tokens: int = 0  # the output, thinking not included
    cached_tokens: int = 0  # input tokens billed at the cached rate (Gemini's implicit cache)
    thinking_tokens: int = 0  # billed as output
    rejected: list[str] = field(default_factory=list)  # reasons for output dropped while parsing
    # The factors the reader found the answer closest to, closest first, whether or not it read anything: what
    # the person chooses from when nothing was understood.  Optional: a reader may leave it empty.
    ranking: list[str] = field(default_factory=list)
    # Readings the reader could not choose between (two factors, or two bands of one factor): each a list of two
    # or more ProposedUpdate-shaped dicts, likeliest first, untrusted like ``raw_updates`` and screened the same
    # way.  None of them is stored: the person is asked which.  Optional: a reader may leave it empty.
    torn: list[list[Any]] = field(default_factory=list)
    # What the reader said the turn is when it said it is no evidence (a ``TurnKind`` other than ``evidence``, as
    # its value): the pipeline then stores none of its readings, unless the person lifted that reason.  None: the
    # reader took it as evidence, or does not say.
    set_aside_as: str | None = None


class ExtractionError(FactorJournalError):
    """The extractor could not produce a reading (after its retries); the turn is marked failed."""


class Extractor(Protocol):
    name: str

    def extract(self, request: ExtractionRequest) -> ExtractionResult:
        """Propose factor updates for the request's turn; raises ExtractionError on failure."""
        ...


def sees_whole_catalog(extractor: object) -> bool:
    """Whether ``extractor`` is shown every catalog factor and judges for itself what a turn is evidence of (a
    language model under its system instruction, ``sees_whole_catalog = True``): its output may name any catalog
    factor, and only what must never reach a model is screened before it.  Every other extractor reads the
    pre-selected candidates of a turn the rules let through."""
    return getattr(extractor, "sees_whole_catalog", False) is True
