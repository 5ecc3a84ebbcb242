"""Fresh or stale: what was said long ago counts for less, as pure functions of a state and a clock.

An answer's **effective confidence** is its stored confidence times ``decay``: one half per half-life
(the catalog's, per factor or category; "never" does not age) of the time since it was last said or
confirmed (``said_at``).  Nothing here writes: the stored value and the journal never change because
time passed, and every page computes freshness on read from the timestamps the summary already holds,
so the overview stays one document read and no nightly job rewrites summaries.

* A composite ages with its components: its effective confidence is its reading over its components'
  effective states (``aged_states``), never a clock of its own.
* An answer is **due for a re-check** (``due_at``) once time alone has taken its confidence under the
  catalog's ``recheck_below``: when the decay crosses it, or, for an answer that was never that sure,
  once it is a half-life old; never sooner than a quarter of a half-life after it was said
  (``MIN_HALF_LIVES_BEFORE_DUE``).  Composites are never due themselves (their components are).
* A decision never flips silently: ``assess`` says when decay takes (or, within ``TIER_WARNING``, will
  take) the person below the decision tier their answers reach, and which confirmations keep it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime, timedelta

from pydantic import BaseModel

from factor_journal import transitions
from factor_journal.catalog import Catalog, HalfLife
from factor_journal.graph import FactorGraph
from factor_journal.models import AssessmentSummary, FactorState
from factor_journal.summary import build_summary, decision_tier

MIN_HALF_LIVES_BEFORE_DUE = 0.25
"""No answer is due sooner than a quarter of its half-life after it was said: one just sure enough (0.502 crosses
0.5 in two days) is not asked again days after it was given, which would also bring it back sooner than an answer
less sure than it (due after a whole half-life)."""

TIER_WARNING = timedelta(days=30)  # how far ahead the overview warns that the tier will lapse


def confirmed_confidence(state: FactorState, now: datetime) -> float:
    """The confidence the answer would have were the person to confirm it at ``now`` (``transitions.confirm``)."""
    return transitions.confirm(state, "-", "-", now, None).state.current_confidence


def said_at(state: FactorState) -> datetime | None:
    """When the current value was last said or stood by: its observation (a confirmation, correction or
    resolution observes it anew), or a newer reading folded in that left it standing (a corroboration of
    a value the person backs).  A reading held as an open conflict disagrees: it refreshes nothing."""
    said = state.observed_at
    newer = state.folded_through
    if newer is not None and state.open_conflict is None and (said is None or newer > said):
        return newer
    return said


def last_said(catalog: Catalog, states: Mapping[str, FactorState], factor_id: str) -> datetime | None:
    """When the factor's answer was last said: ``said_at`` of its state, but for a composite (computed whenever
    its parts change, never said itself) when the latest of its assessed parts was; None when never."""
    factor = catalog.factor(factor_id)
    if factor.is_composite:
        parts = [fid for fid in factor.composite or {} if fid in states and states[fid].is_assessed]
        return max((at for fid in parts if (at := last_said(catalog, states, fid)) is not None), default=None)
    state = states.get(factor_id)
    return said_at(state) if state is not None else None


def kept_after(days: float, half_life_days: float) -> float:
    """The share of its confidence an answer keeps ``days`` after it was said: 0.5 ** (days / half-life); 1 for
    an age not yet begun.  On plain numbers, so that the team roll-up (``rollup.row_freshness``, every answer of
    every person on each rerun) ages by this very rule."""
    return 0.5 ** (max(0.0, days) / half_life_days)


def half_lives_until_due(confidence: float, threshold: float) -> float:
    """How many half-lives after it was said an answer of ``confidence`` is due for a re-check (see the module):
    when its decay crosses ``threshold``, one half-life for an answer never that sure, never sooner than
    ``MIN_HALF_LIVES_BEFORE_DUE``.  The one rule: a person's pages and reminders (``due_time``) and the team
    roll-up (``rollup.row_freshness``) both count what is due with it."""
    half_lives = math.log2(confidence / threshold) if confidence >= threshold else 1.0
    return max(half_lives, MIN_HALF_LIVES_BEFORE_DUE)


def decay(age: timedelta, half_life: HalfLife) -> float:
    """The share of its confidence an answer keeps after ``age``: 0.5 ** (age / half-life); 1 for "never"
    and for an age not yet begun (an as-of date before it was said)."""
    if half_life.days is None:
        return 1.0
    return kept_after(age.total_seconds() / 86400.0, half_life.days)


def aged(confidence: float, said: datetime | None, half_life: HalfLife, now: datetime) -> float:
    """A confidence said at ``said`` as it counts at ``now`` (kept to 4 places); as stored when ``said`` is unknown."""
    return confidence if said is None else round(confidence * decay(now - said, half_life), 4)


def due_time(confidence: float, said: datetime | None, half_life: HalfLife, threshold: float) -> datetime | None:
    """When an answer of ``confidence`` said at ``said`` is due for a re-check (see the module); None: never."""
    if said is None or half_life.days is None:
        return None
    return said + timedelta(days=half_life.days * half_lives_until_due(confidence, threshold))


def _aged(state: FactorState, now: datetime, catalog: Catalog) -> float:
    if not state.is_assessed:
        return 0.0
    return aged(state.current_confidence, said_at(state), catalog.half_life(state.factor_id), now)


def effective_confidence(
    state: FactorState, now: datetime, catalog: Catalog, states: Mapping[str, FactorState] | None = None
) -> float:
    """Stored confidence × decay(age of the newest evidence or confirmation at ``now``); 0 when unassessed.

    A composite ages with its components: pass the person's ``states`` (its components are read there)."""
    factor = catalog.factor(state.factor_id)
    if not factor.is_composite:
        return _aged(state, now, catalog)
    if states is None:
        raise ValueError(f"{state.factor_id!r} is a composite: it ages with its components, pass their states")
    parts = {fid: states[fid] for fid in factor.composite or {} if fid in states}
    reading = transitions.composite_reading(catalog, factor, aged_states(parts, now, catalog))
    return reading[1] if reading else 0.0


def _known(states: Mapping[str, FactorState], catalog: Catalog) -> dict[str, FactorState]:
    return {fid: state for fid, state in states.items() if catalog.has_factor(fid)}


def aged_states(states: Mapping[str, FactorState], now: datetime, catalog: Catalog) -> dict[str, FactorState]:
    """Every state with its effective confidence at ``now`` in ``current_confidence`` (values, statuses and
    timestamps unchanged); composites recomputed from their aged components.  A factor the catalog no longer
    knows is left out (it has no half-life)."""
    states = _known(states, catalog)
    aged = {
        fid: state.model_copy(update={"current_confidence": _aged(state, now, catalog)})
        for fid, state in states.items()
        if not catalog.factor(fid).is_composite
    }
    for fid, state in states.items():
        composite = catalog.factor(fid)
        if composite.is_composite:
            reading = transitions.composite_reading(catalog, composite, aged)
            aged[fid] = state.model_copy(update={"current_confidence": reading[1]}) if reading else state
    return aged


def due_at(state: FactorState, catalog: Catalog) -> datetime | None:
    """When the answer is due for a re-check (see the module): None when it never will be (never ages,
    unassessed, a composite, or no time it was said)."""
    if catalog.factor(state.factor_id).is_composite or not state.is_assessed:
        return None
    half_life = catalog.half_life(state.factor_id)
    return due_time(state.current_confidence, said_at(state), half_life, catalog.freshness.recheck_below)


def is_due(state: FactorState, now: datetime, catalog: Catalog) -> bool:
    """True when the answer is due for a re-check at ``now``."""
    due = due_at(state, catalog)
    return due is not None and due <= now


def unlocks_resting_on(catalog: Catalog, factor_id: str) -> int:
    """How many capability archetypes list the factor among their prerequisites (its impact)."""
    return sum(1 for archetype in catalog.archetypes if any(p.factor == factor_id for p in archetype.prerequisites))


class FactorFreshness(BaseModel):
    """One answer's freshness at a moment: what it was stored at, what it counts for now, and why."""

    factor_id: str
    stored_confidence: float
    confidence: float  # effective
    said_at: datetime | None
    half_life: str  # the catalog's words ("6 months", "never"); "with its components" for a composite
    due_at: datetime | None
    due: bool
    unlocks: int  # archetypes resting on it

    @property
    def kept(self) -> float:
        """The share of its stored confidence it keeps (1 when nothing was stored)."""
        return self.confidence / self.stored_confidence if self.stored_confidence else 1.0


class TierNote(BaseModel):
    """Decay alone takes (``lapsed``) or will take by ``lapses_at`` the person below the tier their answers reach."""

    reached: str  # the tier the stored answers reach
    reached_name: str
    now: str  # the tier the aged answers support at the moment assessed
    now_name: str
    lapsed: bool
    lapses_at: datetime | None
    confirm: list[str]  # answers whose confirmation keeps (or gets back) the reached tier, most decayed first
    message: str


class FreshAssessment(BaseModel):
    """A summary as it counts at ``at``: ``summary`` with every confidence aged (and everything derived from
    confidence recomputed: categories, tier, capabilities), the ``stored`` one it was computed from, each
    answer's freshness, the answers due for a re-check (most unlocks resting on them first, then oldest)
    and the tier note."""

    at: datetime
    summary: AssessmentSummary
    stored: AssessmentSummary
    factors: dict[str, FactorFreshness]
    to_recheck: list[FactorFreshness]
    tier_note: TierNote | None = None

    @property
    def stale(self) -> dict[str, datetime | None]:
        """The answers due for a re-check and when each was last said (``next_best_questions(stale=…)``)."""
        return {item.factor_id: item.said_at for item in self.to_recheck}


def _avg_aged(
    catalog: Catalog, states: Mapping[str, FactorState], at: datetime, fresh: Mapping[str, datetime]
) -> float:
    """The average confidence of the assessed (non-composite) answers at ``at``; those in ``fresh`` as if
    confirmed at the given time (``confirmed_confidence``)."""
    values = []
    for fid, state in states.items():
        if not state.is_assessed or catalog.factor(fid).is_composite:
            continue
        half_life = catalog.half_life(fid)
        if fid in fresh:
            values.append(aged(confirmed_confidence(state, fresh[fid]), fresh[fid], half_life, at))
        else:
            values.append(aged(state.current_confidence, said_at(state), half_life, at))
    return round(sum(values) / len(values), 4) if values else 0.0


def _rank(catalog: Catalog, tier_id: str) -> int:
    return [tier.id for tier in catalog.decision_tiers].index(tier_id)


def tier_note(
    catalog: Catalog, stored: AssessmentSummary, now: datetime, warning: timedelta = TIER_WARNING
) -> TierNote | None:
    """The rule (docs/freshness.md): the tier counted is the one the aged answers support; when that is below
    the tier the answers reach as stored (or will be within ``warning``), the note says so, names the answers
    to confirm, and confirming them (a confirmation observes the answer anew) keeps the tier."""
    states = _known(stored.factors, catalog)
    completeness = stored.overall.completeness
    reached = catalog.decision_tiers[_rank(catalog, stored.overall.decision_tier)]

    def tier_at(at: datetime, fresh: Mapping[str, datetime] | None = None):
        return decision_tier(catalog, completeness, _avg_aged(catalog, states, at, fresh or {}))

    current = tier_at(now)
    lapsed = _rank(catalog, current.id) < _rank(catalog, reached.id)
    lapses_at = None
    target = now
    if not lapsed:
        horizon = now + warning
        if _rank(catalog, tier_at(horizon).id) >= _rank(catalog, reached.id):
            return None
        low, high = now, horizon  # the tier holds at low and has lapsed at high: bisect to the hour
        while high - low > timedelta(hours=1):
            middle = low + (high - low) / 2
            if _rank(catalog, tier_at(middle).id) < _rank(catalog, reached.id):
                high = middle
            else:
                low = middle
        lapses_at = target = high
    answers = {
        fid: (state, catalog.half_life(fid))
        for fid, state in states.items()
        if state.is_assessed and not catalog.factor(fid).is_composite
    }
    then = {fid: aged(state.current_confidence, said_at(state), hl, target) for fid, (state, hl) in answers.items()}
    renewed = {fid: aged(confirmed_confidence(state, now), now, hl, target) for fid, (state, hl) in answers.items()}
    losses = sorted(((answers[fid][0].current_confidence - then[fid], fid) for fid in answers), reverse=True)
    confirm: list[str] = []
    total = sum(then.values())
    for loss, fid in losses:  # most decayed first, until the tier holds (one pass: the sum moves by each gain)
        if loss <= 0:
            break
        confirm.append(fid)
        total += renewed[fid] - then[fid]
        average = round(total / len(answers), 4)
        if _rank(catalog, decision_tier(catalog, completeness, average).id) >= _rank(catalog, reached.id):
            break
    dropped_to = tier_at(target)
    count = f"{len(confirm)} answer{'s' if len(confirm) != 1 else ''}"
    if lapsed:
        message = (
            f"Your answers reach {reached.name}, but some were said long ago: as they stand today they support "
            f"{current.name}. Confirm the {count} below to get {reached.name} back."
        )
    else:
        message = (
            f"Your tier, {reached.name}, rests on answers said long ago: from {lapses_at:%d %b %Y} their age "
            f"takes it down to {dropped_to.name}. Confirm the {count} below to keep it."
        )
    return TierNote(
        reached=reached.id,
        reached_name=reached.name,
        now=current.id,
        now_name=current.name,
        lapsed=lapsed,
        lapses_at=lapses_at,
        confirm=confirm,
        message=message,
    )


def assess(catalog: Catalog, graph: FactorGraph, summary: AssessmentSummary, now: datetime) -> FreshAssessment:
    """The summary as it counts at ``now`` (see ``FreshAssessment``): pure, no reads; for an as-of view pass
    the as-of summary and the as-of moment, so ages are measured to that date."""
    states = _known(summary.factors, catalog)
    aged = aged_states(states, now, catalog)
    effective = build_summary(catalog, graph, aged, summary.last_conversation, summary.updated_at)
    factors: dict[str, FactorFreshness] = {}
    for fid, state in states.items():
        if not state.is_assessed:
            continue
        composite = catalog.factor(fid).is_composite
        due = due_at(state, catalog)
        factors[fid] = FactorFreshness(
            factor_id=fid,
            stored_confidence=state.current_confidence,
            confidence=aged[fid].current_confidence,
            said_at=last_said(catalog, states, fid),
            half_life="with its components" if composite else catalog.half_life(fid).text,
            due_at=due,
            due=due is not None and due <= now,
            unlocks=unlocks_resting_on(catalog, fid),
        )
    to_recheck = sorted(
        (item for item in factors.values() if item.due),
        key=lambda item: (-item.unlocks, item.said_at or now, item.factor_id),
    )
    return FreshAssessment(
        at=now,
        summary=effective,
        stored=summary,
        factors=factors,
        to_recheck=to_recheck,
        tier_note=tier_note(catalog, summary, now),
    )


def decay_curve(
    state: FactorState, catalog: Catalog, until: datetime, points: int = 24
) -> list[tuple[datetime, float]]:
    """The answer's effective confidence from when it was said until ``until`` (``points`` + 1 samples), for
    the history chart; empty when it was not said, is a composite or never ages."""
    at = said_at(state)
    factor = catalog.factor(state.factor_id)
    if at is None or not state.is_assessed or factor.is_composite or catalog.half_life(factor.id).never or until <= at:
        return []
    step = (until - at) / points
    return [(at + step * i, _aged(state, at + step * i, catalog)) for i in range(points + 1)]
