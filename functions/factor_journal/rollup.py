"""Organisation roll-ups: one compact row per person, sharded so that neither reads nor writes pile up.

Why sharded rows written in the user's own transaction:

* **Reads stay constant.** The team page reads the organisation document and its
  ``ROLLUP_SHARDS`` shard documents, whatever the number of people (each shard
  holds the rows of the people hashed to it).
* **Writes stay under Firestore's sustained ~1 write/s per document.** A person's
  change rewrites only their own row, in their shard; with 64 shards, an
  organisation whose people together produce 20 analysed turns per second
  (200 people each answering within ten seconds) puts ~0.3 writes/s on a
  shard.  The benchmark measures the peak per document.
* **Exactly once, never stale.** The row is written in the same transaction as
  the summary it mirrors (a blind write of one map field: no extra read, no
  contention between people).

Organisation history (the progress chart) comes from ``organisations/{org}/daily/{date}``
documents written by the daily scheduled roll-up, not from every change.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime

from pydantic import BaseModel, Field

from factor_journal import freshness
from factor_journal.catalog import Catalog
from factor_journal.models import AssessmentSummary, CategoryProgress, DocumentModel, Overall, UserProfile
from factor_journal.summary import decision_tier

log = logging.getLogger(__name__)

ROLLUP_SHARDS = 64


def shard_of(user_id: str, shards: int = ROLLUP_SHARDS) -> str:
    """The shard document id a person's row lives in (stable across processes)."""
    return f"shard-{int(hashlib.sha1(user_id.encode()).hexdigest(), 16) % shards:02d}"


class BlockedRow(DocumentModel):
    archetype_id: str
    blockers: list[str]


class PersonRow(DocumentModel):
    """What the team pages need about one person, kept beside everyone else's in a shard."""

    user_id: str
    display_name: str = ""
    email: str = ""
    completeness: float = 0.0
    avg_confidence: float = 0.0
    assessed: int = 0
    total: int = 0
    decision_tier: str = "exploratory"
    unconfirmed: int = 0
    conflicts: int = 0
    needs_attention: int = 0  # turns whose analysis failed for good and wait for a person
    last_active: datetime | None = None
    categories: dict[str, float] = Field(default_factory=dict)  # category -> completeness
    can_evaluate: list[str] = Field(default_factory=list)
    # every capability the person cannot evaluate yet, each with all its blocking factors (bounded by the
    # catalog's archetypes): the blockers page counts, per capability and factor, everyone it holds back
    blocked: list[BlockedRow] = Field(default_factory=list)
    updated_at: datetime | None = None
    # every assessed answer's stored confidence and when it was last said, aged on read with the catalog's
    # half-lives (no nightly rewrite), as compact text (``encode_said``): a team page's first view reads 2,000
    # people's answers, and one string per person decodes several times faster than a map of timestamps
    said: str = ""


def mean_confidence(rows: Sequence[PersonRow]) -> float | None:
    """The average confidence of the people who have assessed something (``None`` when nobody has).

    Someone who has not started has no confidence to average: counted as 0% they would read as doubt about
    what the others said."""
    started = [row.avg_confidence for row in rows if row.assessed > 0]
    return round(sum(started) / len(started), 4) if started else None


def mean_completeness(rows: Sequence[PersonRow]) -> float:
    """How much of the catalog the people have mapped on average (everyone counts, 0 for nobody)."""
    return round(sum(row.completeness for row in rows) / len(rows), 4) if rows else 0.0


def person_row(profile: UserProfile, summary: AssessmentSummary, last_active: datetime | None) -> PersonRow:
    overall = summary.overall
    return PersonRow(
        user_id=profile.user_id,
        display_name=profile.display_name,
        email=profile.email,
        completeness=overall.completeness,
        avg_confidence=overall.avg_confidence,
        assessed=overall.total_factors_assessed,
        total=overall.total_factors,
        decision_tier=overall.decision_tier,
        unconfirmed=len(summary.unconfirmed_inferences),
        conflicts=len(summary.conflicts),
        needs_attention=len(profile.attention_turns),
        last_active=last_active,
        categories={cid: c.completeness for cid, c in summary.categories.items()},
        can_evaluate=list(summary.capabilities.can_evaluate),
        blocked=[
            BlockedRow(archetype_id=b.archetype_id, blockers=[x.factor_id for x in b.blockers])
            for b in summary.capabilities.cannot_evaluate_yet
        ],
        updated_at=summary.updated_at,
        said=encode_said(
            (fid, state.current_confidence, freshness.said_at(state))
            for fid, state in sorted(
                summary.factors.items()
            )  # by factor: a summary's map order is not kept by Firestore
            if state.is_assessed  # composites too (cheap); they are aged with their components, so skipped on read
        ),
    )


class RowFreshness(BaseModel):
    """A person's row as it counts at a moment: answers due for a re-check, their share, the aged average
    confidence and the tier it supports (completeness does not age)."""

    due: int
    share: float  # of the assessed answers
    avg_confidence: float
    decision_tier: str


def encode_said(answers: Iterable[tuple[str, float, datetime | None]]) -> str:
    """``fid confidence unix-seconds`` per answer, ``;``-separated (``-``: time unknown): a row's answers' ages."""
    return ";".join(
        f"{fid} {confidence:.4f} {int(at.timestamp()) if at is not None else '-'}" for fid, confidence, at in answers
    )


def _marks(text: str) -> Iterator[tuple[str, float, int | None]]:
    for part in text.split(";") if text else ():
        try:
            fid, confidence, seconds = part.split(" ")
            yield fid, float(confidence), None if seconds == "-" else int(seconds)
        except ValueError:
            log.warning("a roll-up row's answer age %r no longer reads: skipped", part[:80])


def decode_said(text: str) -> Iterator[tuple[str, float, datetime | None]]:
    """The answers ``encode_said`` wrote; a part that no longer reads is skipped with a warning."""
    for fid, confidence, seconds in _marks(text):
        yield fid, confidence, None if seconds is None else datetime.fromtimestamp(seconds, UTC)


def row_freshness(row: PersonRow, catalog: Catalog, now: datetime) -> RowFreshness:
    """Freshness of a roll-up row at ``now``, from the row alone (pure; a row written before rows carried
    ``said`` counts as it was stored).  Ages and counts what is due with the functions the person's own pages
    and reminders use (``freshness.kept_after``, ``freshness.half_lives_until_due``), on seconds: a team page
    ages every answer of 2,000 people on each rerun."""
    threshold = catalog.freshness.recheck_below
    ageing = catalog.ageing_days()
    now_s = now.timestamp()
    due = 0
    confidences: list[float] = []
    for fid, confidence, seconds in _marks(row.said):
        if fid not in ageing:  # a composite (it ages with its components) or a factor no longer in the catalog
            continue
        days = ageing[fid]
        if seconds is None or days is None:
            confidences.append(confidence)
            continue
        age = (now_s - seconds) / 86400.0
        confidences.append(round(confidence * freshness.kept_after(age, days), 4))
        due += age >= days * freshness.half_lives_until_due(confidence, threshold)
    if not confidences:
        return RowFreshness(due=0, share=0.0, avg_confidence=row.avg_confidence, decision_tier=row.decision_tier)
    average = round(sum(confidences) / len(confidences), 4)
    return RowFreshness(
        due=due,
        share=round(due / len(confidences), 4),
        avg_confidence=average,
        decision_tier=decision_tier(catalog, row.completeness, average).id,
    )


class SnapshotFactor(DocumentModel):
    value: float | None
    confidence: float
    status: str


class Snapshot(DocumentModel):
    """``users/{uid}/snapshots/{YYYY-MM-DD}``: the day's last summary, in brief (overwritten within the day)."""

    date: str
    taken_at: datetime | None
    overall: Overall
    categories: dict[str, CategoryProgress]
    can_evaluate: list[str]
    factors: dict[str, SnapshotFactor]


def snapshot_document(summary: AssessmentSummary, day: str) -> Snapshot:
    """The daily snapshot of a summary."""
    return Snapshot(
        date=day,
        taken_at=summary.updated_at,
        overall=summary.overall,
        categories=summary.categories,
        can_evaluate=list(summary.capabilities.can_evaluate),
        factors={
            fid: SnapshotFactor(value=s.current_value, confidence=s.current_confidence, status=str(s.inference_status))
            for fid, s in summary.factors.items()
            if s.is_assessed
        },
    )
