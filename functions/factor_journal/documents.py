"""Server-owned documents about conversation turns and sessions, and the turn's status.

A turn's ``extraction`` field is written only by the pipeline; its ``status``
is one of ``TurnStatus`` and nothing else, everywhere (pipeline, store, CLI,
app, tests).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from pydantic import Field, ValidationError

from factor_journal.models import DocumentModel


class TurnStatus(StrEnum):
    processing = "processing"  # claimed by one function instance; ``lease_until`` says until when
    processed = "processed"  # analysed; factor changes were journaled
    no_update = "no_update"  # analysed; nothing to change
    failed = "failed"  # a transient failure; retried automatically at ``next_attempt_at``
    needs_attention = "needs_attention"  # retries exhausted; listed for the person and their managers
    invalid = "invalid"  # the turn cannot be analysed as written; never retried
    rate_limited = "rate_limited"  # over the person's turn limit: kept, not analysed
    context = "context"  # an assistant turn: context for the next user turn, nothing to analyse


DONE = frozenset({TurnStatus.processed, TurnStatus.no_update})
SETTLED = DONE | {TurnStatus.invalid, TurnStatus.rate_limited, TurnStatus.context}
"""Statuses a delivery never acts on again (``reprocess`` may still re-run needs_attention)."""
AWAITING = (None, TurnStatus.processing)  # a turn not yet analysed, or being analysed now


DAMAGED = "damaged"  # ``error_kind`` of a turn whose stored analysis record no longer reads


def awaiting_analysis(status: str | None) -> bool:
    """True while a turn's analysis has not finished (whatever its outcome will be)."""
    return status in AWAITING


class HeardReading(DocumentModel):
    """One reading of a turn as the person is told it: the factor, the value read from this answer alone (before
    it was weighed with earlier evidence) and the few words of the answer it rests on."""

    factor_id: str
    value: float
    confidence: float
    quote: str = ""


class ScreenKind(StrEnum):
    """Why a turn was taken as no evidence about this organisation today (``extraction.listening``)."""

    hostile = "hostile"  # instructions to the system, not an answer
    other_organisation = "other_organisation"  # about a relative's firm, a supplier, a competitor, a former employer…
    hypothetical = "hypothetical"  # a wish, a what-if or a plan that says nothing about how things are now
    deferral = "deferral"  # "I don't know", "ask X", "I only joined"
    question_back = "question_back"  # a question to the interviewer
    pause = "pause"  # a request to pause, stop or change the subject
    small_talk = "small_talk"  # filler, asides about other people or the news
    oversized = "oversized"  # longer than a turn may be (conversation.MAX_TURN_TEXT_CHARS): never sent to a model


LIFTABLE = frozenset(
    {ScreenKind.other_organisation, ScreenKind.hypothetical, ScreenKind.small_talk, ScreenKind.deferral}
)
"""The reasons for setting an answer aside that its person may lift ("It was about us"): never instructions to the
system, and never a question back or a request to pause, which the conversation answers in its own way."""


class ScreenedTurn(DocumentModel):
    """``turn.extraction.screened``: the turn was refused before any factor was read, and why."""

    kind: ScreenKind
    reason: str  # readable, with the words that decided it


class ScreenLift(DocumentModel):
    """``turn.screen_lifted``: the person said an answer the screen had set aside was about their organisation after
    all; the screen it lifted and when.  The pipeline reads the turn again without that screen."""

    kind: ScreenKind
    reason: str
    lifted_at: datetime

    @classmethod
    def of(cls, turn_document: dict[str, Any] | None) -> ScreenLift | None:
        """The lift recorded on a turn document, None when there is none (or it no longer reads)."""
        raw = (turn_document or {}).get(SCREEN_LIFTED)
        try:
            return cls.model_validate(raw) if isinstance(raw, dict) else None
        except ValidationError:
            return None


SCREEN_LIFTED = "screen_lifted"  # the turn field of a ``ScreenLift``


def lift_refused(turn_document: dict[str, Any] | None) -> str | None:
    """Why the screen that set an answer aside cannot be lifted (the person said "It was about us"), None when it
    can: the answer was analysed, set aside for a reason its person may lift (``LIFTABLE``) and not lifted yet."""
    outcome = ExtractionOutcome.of(turn_document)
    if ScreenLift.of(turn_document) is not None:
        return (
            "it was read again already, at your word"
            if outcome is not None and outcome.is_done
            else ("it is being read again, at your word")
        )
    if outcome is None or outcome.status != TurnStatus.no_update or outcome.screened is None:
        return "it was not set aside"
    if outcome.screened.kind not in LIFTABLE:
        return "it was set aside for a reason that cannot be lifted"
    return None


TOLD = "told"  # the turn field of what its person told us it was about: factor id -> ``HeardReading``


def told_readings(turn_document: dict[str, Any] | None) -> list[HeardReading]:
    """What the person told us an answer was about, where nothing (or nothing sure) was understood from it
    (``turn.told``, written with their decision), in factor id order; entries that no longer read are left out."""
    raw = (turn_document or {}).get(TOLD)
    told = []
    for factor_id, document in sorted(raw.items()) if isinstance(raw, dict) else ():
        try:
            told.append(HeardReading.model_validate({**document, "factor_id": factor_id}))
        except (ValidationError, TypeError):
            continue
    return told


class TornReading(DocumentModel):
    """Readings of one answer the reader could not choose between (two factors, or two bands of one factor, that
    scored within its margin), likeliest first: none of them was stored; the person is asked which."""

    options: list[HeardReading]


class AnalysisDetails(DocumentModel):
    """What the pipeline learned while analysing a turn, written with its outcome."""

    extractor: str | None = None
    model: str | None = None
    prompt_tokens: int = 0
    response_tokens: int = 0
    candidates: list[str] = Field(default_factory=list)
    rejected: list[str] = Field(default_factory=list)
    guarded: list[str] = Field(default_factory=list)
    readings: list[HeardReading] = Field(default_factory=list)  # what was understood, said back under the answer
    screened: ScreenedTurn | None = None  # refused before extraction: not evidence about this organisation today
    ranking: list[str] = Field(default_factory=list)  # the factors the reader found the answer closest to
    torn: list[TornReading] = Field(default_factory=list)  # what the reader could not choose between: asked
    lifted: ScreenKind | None = None  # read with this screen lifted by the person (``ScreenLift``)


class ExtractionOutcome(AnalysisDetails):
    """``turn.extraction``: what became of the turn, with enough to audit and replay it."""

    status: TurnStatus
    attempts: int = 0
    claim_id: str | None = None
    claimed_at: datetime | None = None
    lease_until: datetime | None = None
    retry_at: datetime | None = None  # when the sweeper should pick the turn up (failed or claimed)
    next_attempt_at: datetime | None = None
    entry_ids: list[str] = Field(default_factory=list)
    factor_ids: list[str] = Field(default_factory=list)
    error: str | None = None
    error_kind: str | None = None
    processed_at: datetime | None = None
    failed_at: datetime | None = None

    @classmethod
    def of(cls, turn_document: dict[str, Any] | None) -> ExtractionOutcome | None:
        """The outcome stored on a turn document, or None when the turn was never touched; never raises (a damaged
        record reads as needing attention, see ``read``)."""
        return cls.read(turn_document)[0]

    @classmethod
    def read(cls, turn_document: dict[str, Any] | None) -> tuple[ExtractionOutcome | None, str | None]:
        """The outcome stored on a turn document and, when the stored record no longer reads (a bad write, a hand
        edit), what is wrong with it.

        A damaged record says the turn was touched but not what became of it, so it is neither claimable as new
        nor trusted as settled: it reads as ``needs_attention`` (attempts kept where they still read), which a
        delivery refuses and a person's reprocess claims again.  None when the turn was never touched."""
        raw = (turn_document or {}).get("extraction")
        status = raw.get("status") if isinstance(raw, dict) else None
        if not isinstance(raw, dict) or not isinstance(status, str) or status not in TurnStatus.__members__:
            return None, None
        try:
            return cls.model_validate(raw), None
        except ValidationError as error:
            fields = sorted({str(problem["loc"][0]) for problem in error.errors() if problem["loc"]})
            damage = f"the stored analysis record no longer reads ({', '.join(fields) or 'its shape'})"
            attempts = raw.get("attempts")
            return (
                cls(
                    status=TurnStatus.needs_attention,
                    attempts=attempts if isinstance(attempts, int) and attempts >= 0 else 0,
                    error=damage,
                    error_kind=DAMAGED,
                ),
                damage,
            )

    @property
    def is_done(self) -> bool:
        return self.status in DONE

    def lease_expired(self, now: datetime) -> bool:
        return self.status == TurnStatus.processing and (self.lease_until is None or self.lease_until <= now)


class TokenUsage(DocumentModel):
    prompt_tokens: int = 0
    response_tokens: int = 0


class SessionDocument(DocumentModel):
    """``users/{uid}/conversations/{session_id}``: a conversation session and its "where were we"."""

    session_id: str
    started_at: datetime | None = None
    last_active: datetime | None = None  # the newest analysed turn's time
    last_turn_id: str | None = None
    last_topic: str | None = None
    last_topic_factor_id: str | None = None
    last_topic_at: datetime | None = None
    last_excerpt: str | None = None
    analysed_turns: int = 0
    usage: TokenUsage = Field(default_factory=TokenUsage)

    @classmethod
    def of(cls, session_id: str, document: dict[str, Any] | None) -> SessionDocument:
        """The stored session; raises ``ValidationError`` when the document no longer reads as one."""
        return cls.model_validate({"session_id": session_id, **(document or {})})

    @classmethod
    def salvaged(cls, session_id: str, document: dict[str, Any] | None) -> tuple[SessionDocument, tuple[str, ...]]:
        """The stored session as far as it still reads, and the names of the fields that no longer do (left at
        their defaults).

        A session document is derived from its turns' analysis, so a damaged field (a bad write, a hand edit) is
        dropped rather than fatal: the next analysed turn moves "where were we" forward again.
        """
        data = {**(document or {}), "session_id": session_id}
        dropped: list[str] = []
        while True:
            try:
                return cls.model_validate(data), tuple(dropped)
            except ValidationError as error:
                names = {str(problem["loc"][0]) for problem in error.errors() if problem["loc"]} & data.keys()
                names.discard("session_id")
                if not names:  # nothing left to drop: not a session document at all
                    raise
                for name in sorted(names):
                    data.pop(name, None)
                dropped += sorted(names)


def claim_refused_by(outcome: ExtractionOutcome | None, now: datetime, force: bool = False) -> ExtractionOutcome | None:
    """The turn's stored ``outcome`` when it forbids a new claim, else None: a claim under a live lease, a settled
    turn, one needing attention, or a failed one not due again yet.  ``force`` (a person asking to reprocess)
    is refused only by a done, invalid or context turn (and a live claim)."""
    if outcome is None:
        return None
    if outcome.status == TurnStatus.processing:
        return None if outcome.lease_expired(now) else outcome
    if force:
        return outcome if outcome.status in DONE | {TurnStatus.invalid, TurnStatus.context} else None
    if outcome.status in SETTLED or outcome.status == TurnStatus.needs_attention:
        return outcome
    if outcome.status == TurnStatus.failed and outcome.next_attempt_at is not None and outcome.next_attempt_at > now:
        return outcome
    return None


def failure_recorded(
    stored: ExtractionOutcome | None, claim_id: str | None, failed: ExtractionOutcome
) -> ExtractionOutcome | None:
    """What a failed attempt writes over the turn's ``stored`` outcome, or None when it must write nothing: the
    turn was completed meanwhile, or re-claimed by another delivery. The attempts counted never go down."""
    if stored is not None and (stored.status in DONE or (claim_id and stored.claim_id not in (None, claim_id))):
        return None
    return failed.model_copy(update={"attempts": max(failed.attempts, stored.attempts if stored else 0)})


def latest_session_id(sessions: Iterable[SessionDocument]) -> str | None:
    """The session the person was last active in: its newest analysed turn, else when it started (ties to the
    larger id, so the answer never depends on read order); None without sessions."""
    since_ever = datetime.min.replace(tzinfo=UTC)
    keys = [(session.last_active or session.started_at or since_ever, session.session_id) for session in sessions]
    return max(keys)[1] if keys else None


def claim_abandoned(previous: ExtractionOutcome | None, max_attempts: int | None, force: bool) -> bool:
    """A claim whose holder died (a claimable ``processing`` outcome) with no attempt left: the turn is not
    claimed again but needs attention (a person's ``force`` still claims it)."""
    return (
        not force
        and max_attempts is not None
        and previous is not None
        and previous.status == TurnStatus.processing
        and previous.attempts >= max_attempts
    )
