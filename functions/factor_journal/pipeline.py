"""From a written conversation turn to factor updates, journal entries and a fresh summary.

``TurnProcessor.process`` is what the Firestore trigger (and the recovery
sweeper, and ``reprocess``) calls.  It promises:

* **One model call per turn, however often it is delivered.**  A delivery first
  claims the turn (``TurnLedger.claim``): a duplicate that finds it done, or
  claimed under a live lease, returns at once with one read and no write.
  A claimer that dies leaves a lease that runs out; the turn is then taken over.
* **Exactly one set of effects.**  The changes, the turn's outcome and the
  session's "where were we" commit in one transaction that skips a turn already
  done; the factor state does not depend on delivery order (``folding``).
* **Every turn ends in a recorded status** (``documents.TurnStatus``): processed,
  no_update, invalid (never retried), rate_limited (kept, not analysed),
  context (assistant turns), failed (transient: retried automatically with
  exponential backoff at ``next_attempt_at``) and, after the last attempt,
  needs_attention (listed for the person and their managers; ``reprocess``
  still works).
* What must never reach a reader (hostile, empty or oversized text) is refused
  before extraction, whatever the extractor; before the embedded reader so is
  a turn that is no evidence about this organisation today (about another
  organisation, a hypothetical, a deferral, a question back, a request to
  pause), which a language model judges for itself (``read_turn``).  The kind
  and reason are kept on the outcome (``extraction.listening``, ``screened``); a
  person who says such an answer was about them after all
  (``store.lift_screen``) has it read again without that screen
  (``documents.LIFTABLE``).
* Untrusted extractor output is checked (``output_checks``); what a reader could
  not choose between is asked, not stored; the move bound and
  evidence weighing apply when each reading is folded in.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from factor_journal.candidates import select_candidates
from factor_journal.catalog import Catalog
from factor_journal.conversation import InvalidTurnError, Turn, format_excerpt, parse_turn
from factor_journal.documents import (
    DONE,
    LIFTABLE,
    AnalysisDetails,
    ExtractionOutcome,
    HeardReading,
    ScreenedTurn,
    ScreenKind,
    ScreenLift,
    TornReading,
    TurnStatus,
)
from factor_journal.errors import FactorJournalError, UnknownUserError
from factor_journal.extraction.base import (
    CandidateFactor,
    ExchangeTurn,
    ExtractionError,
    ExtractionRequest,
    ExtractionResult,
    Extractor,
    ProposedUpdate,
    sees_whole_catalog,
)
from factor_journal.extraction.listening import screen_turn, why_set_aside
from factor_journal.extraction.quotes import quote_for
from factor_journal.graph import FactorGraph
from factor_journal.models import AssessmentSummary, FactorState, InferredUpdate
from factor_journal.output_checks import CheckedOutput, check_output, check_torn
from factor_journal.planner import TurnContext
from factor_journal.repositories.locks import CommitBusyError
from factor_journal.repositories.people import Claim, TurnRef
from factor_journal.settings import Settings, settings
from factor_journal.store import FactorJournalStore

log = logging.getLogger(__name__)

CONTEXT_TURNS = 4  # preceding turns read as context: with the analysed turn, 2-3 exchanges


@dataclass
class TurnOutcome:
    """What one delivery did: a TurnStatus it recorded, or duplicate | busy | missing (it did nothing)."""

    status: str
    entry_ids: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    error: str | None = None


@dataclass
class TurnReading:
    """What reading one turn gave: the screen's refusal before any extractor (or None), the candidate factors,
    the extractor's result, its output once checked (``checked.accepted`` are the updates the turn may write) and,
    when the turn changed nothing, why it was set aside (the refusal, or what the rules make of a turn a model
    left alone: a pause, a question back…, which the conversation acts on)."""

    refused: ScreenedTurn | None
    candidates: list[CandidateFactor]
    result: ExtractionResult
    checked: CheckedOutput
    set_aside: ScreenedTurn | None = None
    torn: list[list[ProposedUpdate]] = field(default_factory=list)  # what the reader could not choose between


def read_turn(
    extractor: Extractor,
    catalog: Catalog,
    graph: FactorGraph,
    request: ExtractionRequest,
    factors: Mapping[str, FactorState],
) -> TurnReading:
    """Read one turn as the pipeline does, without Firestore (``request`` without candidates: they are chosen
    here).  What must never reach the extractor is refused before it (no model call): for a language model shown
    the whole catalog (``sees_whole_catalog``) only hostile, empty or oversized text, since it judges the rest
    under its system instruction; for any other extractor also a turn a careful listener would not take as
    evidence about this organisation today, unless its person lifted that screen (``request.screen_lifted``: a
    reason of ``documents.LIFTABLE``).  Candidates come from the conversation alone (the turn and the question it
    answers, the last assistant turn of ``request.recent``) and the factors' states: the ones the embedded reader
    reads, a hint with their current values for the model.  The extractor's output (its readings, and those it
    could not choose between) is checked against them, or against the whole catalog for the model."""
    previous_question = next((t.text for t in reversed(request.recent) if t.role == "assistant"), "")
    by_model = sees_whole_catalog(extractor)
    lifted = request.screen_lifted
    refused = screen_turn(request.text, judged_by_model=by_model)
    if refused is not None and lifted and refused.kind in LIFTABLE:
        refused = None  # the person said it was about them
    if refused is not None:
        candidates: list[CandidateFactor] = []
        result = ExtractionResult(raw_updates=[], extractor=extractor.name, rejected=[refused.reason])
    else:
        candidates = select_candidates(catalog, graph, request.text, previous_question, factors, lifted=lifted)
        result = extractor.extract(request.model_copy(update={"candidates": candidates}))  # the one model call
    allowed = None if by_model or extractor.name == "offline" else {c.factor_id for c in candidates}
    checked = check_output(result.raw_updates, catalog, allowed)
    torn, dropped = check_torn(result.torn, catalog, checked.accepted, allowed)
    checked.rejected += dropped
    set_aside = refused
    said = model_set_aside(result.set_aside_as, lifted)
    if said is not None:  # the reader said the turn is no evidence: none of its readings is stored
        checked.rejected += [f"{said.reason}: {update.factor_id} not stored" for update in checked.accepted]
        checked.accepted, torn, set_aside = [], [], said
    if set_aside is None and by_model and not checked.accepted and not torn and not lifted:
        set_aside = screen_turn(request.text)  # why the rules would have set it aside (never kept from the model)
    return TurnReading(refused, candidates, result, checked, set_aside, torn)


def model_set_aside(kind: str | None, lifted: bool) -> ScreenedTurn | None:
    """The turn set aside as its reader said (``ExtractionResult.set_aside_as``, a ``ScreenKind`` value), or None:
    the reader took it as evidence, named no kind this version knows, or its person lifted that reason
    (``lifted``: "It was about us", for the reasons of ``LIFTABLE``).  Pure."""
    try:
        screen = ScreenKind(kind) if kind else None
    except ValueError:
        return None
    if screen is None or (lifted and screen in LIFTABLE):
        return None
    return ScreenedTurn(kind=screen, reason=f"no update: {why_set_aside(screen)} (as the reader read it)")


class TurnProcessor:
    def __init__(
        self,
        store: FactorJournalStore,
        extractor: Extractor,
        *,
        context_turns: int = CONTEXT_TURNS,
        config: Settings | None = None,
        clock: Callable[[], datetime] | None = None,
        enforce_rate_limits: bool = False,
    ) -> None:
        """``enforce_rate_limits``: count each new turn against the person's limits (the deployed trigger
        does, where clients write turns; in-process tools such as the eval and reprocess do not)."""
        self.enforce_rate_limits = enforce_rate_limits
        self.store = store
        self.extractor = extractor
        self.context_turns = context_turns
        self.config = config or settings()
        self.clock = clock or (lambda: datetime.now(UTC))

    def process(
        self, user_id: str, session_id: str, turn_id: str, data: dict | None = None, *, force: bool = False
    ) -> TurnOutcome:
        """Analyse one turn at most once.  ``data`` (the event's copy of the turn) is not trusted for
        the turn's state: the stored turn is read when claiming.  ``force``: a person asked to reprocess
        (turns that need attention, were rate limited or wait for their next attempt are taken too)."""
        ref = TurnRef(user_id, session_id, turn_id)
        now = self.clock()
        claim = self.store.ledger.claim(
            ref, lease=self.config.claim_lease, now=now, force=force, max_attempts=self.config.max_turn_attempts
        )
        if claim.missing:
            return TurnOutcome("missing")
        if not claim.won:
            return _not_claimed(claim)
        assert claim.outcome is not None
        try:
            turn = parse_turn(turn_id, claim.data)
        except InvalidTurnError as error:  # the document does not read as a turn: set aside, never analysed
            return self._settle(ref, claim, TurnStatus.invalid, f"invalid turn: {error}", "invalid_input", damaged=True)
        if turn.role == "assistant":
            return self._settle(ref, claim, TurnStatus.context, None, None)
        lift = ScreenLift.of(claim.data)  # a screen its person lifted ("It was about us"): read without it
        try:
            summary = self.store.summary(user_id)
            if summary is None:  # before counting: nothing is written about a person who does not exist
                raise UnknownUserError(user_id)
            # a turn read again at its person's word (its screen lifted) was counted once already
            if self.enforce_rate_limits and claim.outcome.attempts == 1 and not force and lift is None:
                counted = self.store.ledger.count(ref, turn.created_at, now)
                if counted is None:
                    return TurnOutcome("missing")  # deleted meanwhile (its person erased)
                minute, day = counted
                if minute > self.config.turns_per_minute or day > self.config.turns_per_day:
                    limit = (
                        f"{self.config.turns_per_minute} a minute"
                        if minute > self.config.turns_per_minute
                        else f"{self.config.turns_per_day} a day"
                    )
                    return self._settle(
                        ref, claim, TurnStatus.rate_limited, f"over the limit of {limit}", "rate_limited"
                    )
            outcome = self._analyse(ref, turn, summary, lift)
        except (UnknownUserError, InvalidTurnError) as error:
            return self._settle(ref, claim, TurnStatus.invalid, str(error), "invalid_input")
        except ExtractionError as error:
            return self._failed(ref, claim, f"extraction failed: {error}", "extraction")
        except CommitBusyError as error:
            return self._failed(ref, claim, str(error), "contention")
        except FactorJournalError as error:
            return self._settle(ref, claim, TurnStatus.invalid, str(error), "invalid_input")
        except Exception as error:  # outages, corrupt documents: recorded, retried, replayable
            log.exception("turn %s/%s/%s: unexpected error", user_id, session_id, turn_id)
            return self._failed(ref, claim, f"internal error: {type(error).__name__}: {error}"[:500], "internal")
        self._unlist_if_it_needed_attention(ref, claim)  # a commit unlists the turn too; this covers a duplicate
        return outcome

    def _unlist_if_it_needed_attention(self, ref: TurnRef, claim: Claim) -> None:
        """A turn that needed attention (claimed again by a person's reprocess) and has now settled otherwise."""
        if (ExtractionOutcome.of(claim.data) or claim.outcome).status == TurnStatus.needs_attention:  # type: ignore[union-attr]
            self.store.ledger.set_attention(ref, False)

    def park(self, user_id: str, session_id: str, turn_id: str, reason: str) -> None:
        """A delivery too old to act on: leave the turn to the recovery sweeper (marked due now when it
        has no status yet), so nothing is lost and nothing is analysed from a stale event."""
        ref = TurnRef(user_id, session_id, turn_id)
        if ExtractionOutcome.of(self.store.ledger.data(ref)) is None:
            now = self.clock()
            self.store.ledger.record_failure(
                ref,
                None,
                ExtractionOutcome(
                    status=TurnStatus.failed,
                    error=reason,
                    error_kind="parked",
                    next_attempt_at=now,
                    retry_at=now,
                    failed_at=now,
                ),
            )

    def _analyse(self, ref: TurnRef, turn: Turn, summary: AssessmentSummary, lift: ScreenLift | None) -> TurnOutcome:
        user_id, session_id = ref.user_id, ref.session_id
        session = self.store.session_data(user_id, session_id)
        if session is None:
            raise InvalidTurnError(f"unknown session {session_id!r}: start a conversation before writing turns")
        recent = self.store.recent_turns(user_id, session_id, before=turn.created_at, limit=self.context_turns)
        catalog, graph = self.store.catalog, self.store.graph
        request = ExtractionRequest(
            user_id=user_id,
            session_id=session_id,
            turn_id=turn.turn_id,
            text=turn.text,
            recent=[ExchangeTurn(role=t.role, text=t.text, created_at=t.created_at) for t in recent],
            screen_lifted=lift is not None,
        )
        reading = read_turn(self.extractor, catalog, graph, request, summary.factors)
        candidates, result, checked = reading.candidates, reading.result, reading.checked
        rejected = [*result.rejected, *checked.rejected]
        for reason in rejected:
            log.warning("turn %s/%s/%s: dropped extractor output: %s", user_id, session_id, turn.turn_id, reason)
        excerpt = format_excerpt([*recent, turn])
        updates = [
            InferredUpdate(
                factor_id=proposal.factor_id,
                value=proposal.value,
                confidence=proposal.confidence,
                rationale=proposal.rationale,
                conversation_excerpt=excerpt,
                inferred_from=proposal.inferred_from,
                session_id=session_id,
                turn_id=turn.turn_id,
                observed_at=turn.created_at,
            )
            for proposal in checked.accepted
        ]
        context = TurnContext(
            session_id=session_id,
            turn_id=turn.turn_id,
            observed_at=turn.created_at,
            answer=turn.text,  # its vector is written with the outcome, whatever the turn was understood to say
            details=AnalysisDetails(
                extractor=result.extractor,
                model=result.model,
                prompt_tokens=result.prompt_tokens,
                response_tokens=result.response_tokens,
                candidates=[c.factor_id for c in candidates],
                rejected=rejected[:60],
                readings=[heard(catalog, turn.text, proposal) for proposal in checked.accepted],
                screened=reading.set_aside,
                ranking=[fid for fid in result.ranking if catalog.has_factor(fid)][:8],
                torn=[TornReading(options=[heard(catalog, turn.text, o) for o in options]) for options in reading.torn],
                lifted=lift.kind if lift is not None else None,
            ),
        )
        change = self.store.record_inferences(
            user_id, updates, turn=context, idempotency_key=f"{session_id}/{turn.turn_id}", weigh=True
        )
        if change.missing:
            return TurnOutcome("missing")  # deleted after its claim (its person erased): nothing was applied
        if change.duplicate:
            previous = change.previous_outcome
            return TurnOutcome("duplicate", entry_ids=list(previous.entry_ids if previous else []))
        status = TurnStatus.processed if change.entries else TurnStatus.no_update
        own = [e.entry_id for e in change.entries if e.turn_id == turn.turn_id]
        return TurnOutcome(str(status), own, rejected)

    def _settle(
        self,
        ref: TurnRef,
        claim: Claim,
        status: TurnStatus,
        error: str | None,
        kind: str | None,
        *,
        damaged: bool = False,
    ) -> TurnOutcome:
        """A final status that involves no factor change; ``damaged``: the turn document itself does not read (it
        is set aside with its outcome, ``error`` saying why)."""
        if error:
            log.warning("turn %s/%s/%s %s: %s", ref.user_id, ref.session_id, ref.turn_id, status, error)
        assert claim.outcome is not None
        now = self.clock()
        outcome = ExtractionOutcome(
            status=status,
            attempts=claim.outcome.attempts,
            error=error,
            error_kind=kind,
            extractor=self.extractor.name if status != TurnStatus.context else None,
            processed_at=now,
        )
        self.store.ledger.settle(ref, outcome, error if damaged else None)
        self._unlist_if_it_needed_attention(ref, claim)
        return TurnOutcome(str(status), error=error)

    def _failed(self, ref: TurnRef, claim: Claim, error: str, kind: str) -> TurnOutcome:
        """A transient failure: retried at the next attempt time, or needs attention after the last."""
        assert claim.outcome is not None
        attempts = claim.outcome.attempts
        now = self.clock()
        exhausted = attempts >= self.config.max_turn_attempts
        next_attempt = None if exhausted else now + self.config.retry_delay(attempts)
        outcome = ExtractionOutcome(
            status=TurnStatus.needs_attention if exhausted else TurnStatus.failed,
            attempts=attempts,
            error=error,
            error_kind=kind,
            extractor=self.extractor.name,
            next_attempt_at=next_attempt,
            retry_at=next_attempt,
            failed_at=now,
        )
        log.error(
            "turn %s/%s/%s %s after attempt %d: %s",
            ref.user_id,
            ref.session_id,
            ref.turn_id,
            outcome.status,
            attempts,
            error,
        )
        self.store.ledger.record_failure(ref, claim.outcome.claim_id, outcome)  # lists it when exhausted
        return TurnOutcome(str(outcome.status), error=error)


def heard(catalog: Catalog, answer: str, proposal: ProposedUpdate) -> HeardReading:
    """A screened reading as the say-back keeps it: its quote always the answer's own words (``quote_for``)."""
    return HeardReading(
        factor_id=proposal.factor_id,
        value=proposal.value,
        confidence=proposal.confidence,
        quote=quote_for(answer, proposal.quote, catalog.factor(proposal.factor_id)),
    )


def _not_claimed(claim: Claim) -> TurnOutcome:
    outcome = claim.outcome
    assert outcome is not None
    if outcome.status in DONE:
        return TurnOutcome("duplicate", entry_ids=list(outcome.entry_ids))
    if outcome.status == TurnStatus.processing:
        return TurnOutcome("busy")
    if outcome.status == TurnStatus.failed:
        return TurnOutcome("waiting", error=outcome.error)
    return TurnOutcome(str(outcome.status), error=outcome.error)


UNCLAIMED_AFTER = timedelta(seconds=Settings.model_fields["unclaimed_after_seconds"].default)
"""The product's default (``FJ_UNCLAIMED_AFTER_SECONDS``): a turn unclaimed this long after it was written lost its
delivery."""


def recover_due_turns(processor: TurnProcessor, *, limit: int = 200) -> dict[str, int]:
    """The recovery sweep: every turn whose retry time has come (failed and due again, or claimed by an
    instance that died), and every turn no delivery claimed within the processor's ``unclaimed_after``
    (``UNCLAIMED_AFTER`` by default) of its writing, however long ago (an outage, a lost delivery, sweeps that
    failed for hours), is processed, at most ``limit`` of each kind a sweep, oldest first (the rest at the next
    sweeps).  Reads only such turns.  Returns how many ended in each status."""
    now = processor.clock()
    ledger = processor.store.ledger
    # Never-claimed turns first: a due turn that stops its instance must not keep them from being found (due
    # turns come back at every sweep until they settle).
    refs = ledger.unclaimed(now - processor.config.unclaimed_after, limit=limit)
    refs += ledger.due(now, limit=limit)
    counts: dict[str, int] = {}
    for ref in dict.fromkeys(refs):
        status = processor.process(ref.user_id, ref.session_id, ref.turn_id).status
        counts[status] = counts.get(status, 0) + 1
    return counts
