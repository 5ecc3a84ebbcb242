"""One person's factors driven through the pure core the way the factor-change repository drives a change —
what to read (``touched_states``, ``journals_to_read``, ``timelines_to_read``), then ``plan_change`` — with the
change sets kept in plain dictionaries instead of written to Firestore.  The pure tests of a change's rules use
it; that the repository reads and writes exactly this is tested once on the emulator (test_store.py)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from factor_journal import transitions
from factor_journal.catalog import Catalog
from factor_journal.folding import Reading
from factor_journal.graph import graph_for
from factor_journal.models import AssessmentSummary, FactorState, InferredUpdate, JournalEntry, Source
from factor_journal.planner import (
    ChangeInputs,
    ChangeSet,
    Step,
    entry_id_for,
    journals_to_read,
    plan_change,
    said_in_change,
    timelines_to_read,
    touched_factors,
    touched_states,
)

T0 = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)


class Person:
    """A person's factor documents, journals and summary as the change sets of the planner leave them."""

    def __init__(self, catalog: Catalog, user_id: str = "u") -> None:
        self.catalog, self.graph, self.user_id = catalog, graph_for(catalog), user_id
        self.documents: dict[str, dict[str, Any]] = {}  # factor id -> its stored document
        self.journals: dict[str, dict[str, JournalEntry]] = {}
        self.summary: AssessmentSummary | None = None
        self.clock = T0
        self.journal_reads: list[str] = []  # whose journals the last change read
        self.last: ChangeSet | None = None  # the last change set

    def tick(self) -> datetime:
        self.clock += timedelta(minutes=1)
        return self.clock

    def factor(self, factor_id: str) -> FactorState:
        return FactorState.model_validate(self.documents[factor_id])

    def journal(self, factor_id: str) -> list[JournalEntry]:
        """Newest observation first, as the history pages show it."""
        entries = self.journals.get(factor_id, {}).values()
        return sorted(entries, key=lambda e: (e.observed_at, e.entry_id), reverse=True)

    def change(
        self,
        readings: Sequence[Reading] = (),
        *,
        step: Step | None = None,
        decided: Sequence[str] = (),
        now: datetime | None = None,
    ) -> ChangeSet:
        """Plan one change from what it would read, and keep what it writes."""
        now = now or self.tick()
        readings = list(readings)
        ids = list(dict.fromkeys([*(r.update.factor_id for r in readings), *decided]))
        touched = touched_factors(self.graph, ids)
        known = self.summary.factors if self.summary else {}
        states, damaged = touched_states(self.catalog, touched, {f: self.documents.get(f) for f in touched}, known)
        journals = {
            fid: list(self.journals.get(fid, {}).values()) for fid in journals_to_read(states, readings, damaged)
        }
        said = said_in_change(readings, list(decided) if step is not None else [], now)
        timelines = {
            fid: list(self.journals.get(fid, {}).values())
            for fid in timelines_to_read(self.catalog, self.graph, states, journals, said)
        }
        self.journal_reads = sorted({*journals, *timelines})
        inputs = ChangeInputs(
            user_id=self.user_id,
            summary=self.summary,
            states=states,
            journals=journals,
            last_active=None,
            now=now,
            timelines=timelines,
        )
        plan = plan_change(self.catalog, self.graph, inputs, readings=readings, step=step)
        for entry in [*plan.entries, *plan.rewritten]:
            self.journals.setdefault(entry.factor_id, {})[entry.entry_id] = entry
        for factor_id, entry_id in plan.removed:
            del self.journals[factor_id][entry_id]
        for fid, state in plan.states.items():
            self.documents[fid] = state.to_document()
        self.summary = plan.summary
        self.last = plan
        return plan

    def say(
        self, factor_id: str, value: float, confidence: float = 0.7, *, weigh: bool = False, **extra: Any
    ) -> JournalEntry:
        """An inferred reading recorded as the store records one (observed now unless said); ``weigh``: weighed
        with the factor's earlier evidence, as the pipeline's extractor readings are."""
        observed_at = extra.pop("observed_at", None) or self.tick()
        update = InferredUpdate(
            factor_id=factor_id,
            value=value,
            confidence=confidence,
            rationale=extra.pop("rationale", f"said something about {factor_id}"),
            conversation_excerpt=extra.pop("conversation_excerpt", "User: our data is all over the place"),
            session_id=extra.pop("session_id", "s1"),
            observed_at=observed_at,
            **extra,
        )
        plan = self.change(
            [Reading(update, entry_id_for(None, factor_id), weigh=weigh)], now=max(observed_at, self.clock)
        )
        return plan.entries[0]

    def decide(self, factor_id: str, step: Any) -> JournalEntry:
        """A person's decision on one factor: ``step(state, entry_id, now)`` is its transition."""
        entry_id = entry_id_for(None, factor_id)
        plan = self.change(step=lambda states, now: [step(states[factor_id], entry_id, now)], decided=[factor_id])
        return plan.entries[0]

    def confirm(self, factor_id: str) -> JournalEntry:
        return self.decide(factor_id, lambda s, eid, now: transitions.confirm(s, self.user_id, eid, now, None))

    def correct(self, factor_id: str, value: float, rationale: str) -> JournalEntry:
        return self.decide(
            factor_id, lambda s, eid, now: transitions.correct(s, self.user_id, eid, now, value, rationale, None)
        )

    def retract(self, factor_id: str, rationale: str) -> JournalEntry:
        return self.decide(
            factor_id, lambda s, eid, now: transitions.retract(s, self.user_id, eid, now, rationale, Source.user)
        )

    def resolve_conflict(self, factor_id: str, *, accept: bool, rationale: str) -> JournalEntry:
        return self.decide(
            factor_id,
            lambda s, eid, now: transitions.resolve_conflict(s, self.user_id, eid, now, accept, rationale),
        )
