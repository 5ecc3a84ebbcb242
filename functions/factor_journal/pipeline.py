"""From a written conversation turn to factor updates, journal entries and a fresh summary.

``TurnProcessor.process`` is what the Firestore trigger calls.  It promises:

* at most one extractor (LLM) call per analysed user turn; assistant turns are
  context only;
* exactly one set of journal entries per turn however often, and in whatever
  order, the turn is delivered (the outcome is written to the turn inside the
  same transaction as the changes, and a done turn is skipped);
* every analysed turn ends with ``extraction.status`` processed | no_update |
  failed on the turn document, with the entry ids, extractor, model, token
  counts, rejected output and, when failed, the error;
* untrusted extractor output is screened (``factor_journal.screening``): bad
  updates are dropped with a reason, the rest of the turn still applies.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from factor_journal.candidates import select_candidates
from factor_journal.conversation import InvalidTurnError, Turn, format_excerpt, parse_turn
from factor_journal.errors import FactorJournalError, UnknownUserError
from factor_journal.evidence import synthesise
from factor_journal.extraction.base import ExchangeTurn, ExtractionError, ExtractionRequest, Extractor
from factor_journal.models import FactorState, InferredUpdate
from factor_journal.screening import screen
from factor_journal.store import FactorJournalStore, TurnReceipt

log = logging.getLogger(__name__)

CONTEXT_TURNS = 4  # preceding turns read as context: with the analysed turn, 2-3 exchanges


@dataclass
class TurnOutcome:
    status: str  # processed | no_update | failed | duplicate | context | missing
    entry_ids: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    error: str | None = None


class TurnProcessor:
    def __init__(self, store: FactorJournalStore, extractor: Extractor, *, context_turns: int = CONTEXT_TURNS) -> None:
        self.store = store
        self.extractor = extractor
        self.context_turns = context_turns

    def process(
        self, user_id: str, session_id: str, turn_id: str, data: dict[str, Any] | None = None
    ) -> TurnOutcome:
        """Analyse one turn (``data`` is the turn document when the caller already has it)."""
        if data is None:
            data = self.store.turn_data(user_id, session_id, turn_id)
            if data is None:
                return TurnOutcome("missing")
        previous = data.get("extraction")
        if isinstance(previous, dict) and previous.get("status") in ("processed", "no_update"):
            return TurnOutcome("duplicate", entry_ids=list(previous.get("entry_ids", [])))
        try:
            turn = parse_turn(turn_id, data)
        except InvalidTurnError as error:
            return self._fail(user_id, session_id, turn_id, f"invalid turn: {error}", kind="invalid_input")
        if turn.role == "assistant":
            return TurnOutcome("context")
        try:
            return self._analyse(user_id, session_id, turn)
        except UnknownUserError as error:
            return self._fail(user_id, session_id, turn_id, str(error), kind="unknown_user")
        except ExtractionError as error:
            return self._fail(user_id, session_id, turn_id, f"extraction failed: {error}", kind="extraction")
        except FactorJournalError as error:
            return self._fail(user_id, session_id, turn_id, str(error), kind="invalid_input")
        except Exception as error:  # anything else (corrupt documents, outages): recorded, replayable
            log.exception("turn %s/%s/%s: unexpected error", user_id, session_id, turn_id)
            return self._fail(user_id, session_id, turn_id, f"internal error: {type(error).__name__}: {error}"[:500], kind="internal")

    def _analyse(self, user_id: str, session_id: str, turn: Turn) -> TurnOutcome:
        summary = self.store.summary(user_id)
        if summary is None:
            raise UnknownUserError(user_id)
        session = self.store.session_data(user_id, session_id)
        if session is None:
            raise InvalidTurnError(f"unknown session {session_id!r}: start a conversation before writing turns")
        recent = self.store.recent_turns(user_id, session_id, before=turn.created_at, limit=self.context_turns)
        previous_question = next((t.text for t in reversed(recent) if t.role == "assistant"), "")
        catalog, graph = self.store.catalog, self.store.graph
        candidates = select_candidates(
            catalog, graph, turn.text, previous_question, summary.factors, session.get("last_topic_factor_id")
        )
        request = ExtractionRequest(
            user_id=user_id,
            session_id=session_id,
            turn_id=turn.turn_id,
            text=turn.text,
            recent=[ExchangeTurn(role=t.role, text=t.text, created_at=t.created_at) for t in recent],
            candidates=candidates,
        )
        result = self.extractor.extract(request)  # the one LLM call for this turn
        allowed = {c.factor_id for c in candidates} if self.extractor.name != "offline" else None
        screened = screen(result.raw_updates, catalog, summary.factors, allowed, turn.created_at)
        rejected = [*result.rejected, *screened.rejected]
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
            for proposal in screened.accepted
        ]
        receipt = TurnReceipt(
            session_id=session_id,
            turn_id=turn.turn_id,
            observed_at=turn.created_at,
            details={
                "extractor": result.extractor,
                "model": result.model,
                "prompt_tokens": result.prompt_tokens,
                "response_tokens": result.response_tokens,
                "candidates": [c.factor_id for c in candidates],
                "rejected": rejected[:60],
                "guarded": screened.guarded[:20],
                "error": None,
            },
        )

        def synthesise_on_scale(state: FactorState, update: InferredUpdate) -> InferredUpdate:
            scale = catalog.factor(update.factor_id).scale
            return synthesise(state, update, scale.max - scale.min)

        change = self.store.record_inferences(
            user_id,
            updates,
            receipt=receipt,
            idempotency_key=f"{session_id}/{turn.turn_id}",
            synthesize=synthesise_on_scale,
        )
        if change.duplicate:
            return TurnOutcome("duplicate", entry_ids=list((change.previous_outcome or {}).get("entry_ids", [])))
        return TurnOutcome("processed" if change.entries else "no_update", change.entry_ids, rejected)

    def _fail(self, user_id: str, session_id: str, turn_id: str, error: str, *, kind: str) -> TurnOutcome:
        log.error("turn %s/%s/%s failed (%s): %s", user_id, session_id, turn_id, kind, error)
        self.store.record_turn_failure(
            user_id, session_id, turn_id,
            {"error": error, "error_kind": kind, "extractor": self.extractor.name},
        )  # fmt: skip
        return TurnOutcome("failed", error=error)
