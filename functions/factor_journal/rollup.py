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
from collections.abc import Sequence
from datetime import datetime

from pydantic import Field

from factor_journal.models import AssessmentSummary, CategoryProgress, DocumentModel, Overall, UserProfile

ROLLUP_SHARDS = 64
ROW_BLOCKED_CAPABILITIES = 6


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
    blocked: list[BlockedRow] = Field(default_factory=list)
    updated_at: datetime | None = None


def mean_confidence(rows: Sequence[PersonRow]) -> float | None:
    """The average confidence of the people who have assessed something (``None`` when nobody has).

    Someone who has not started has no confidence to average: counted as 0% they would read as doubt about
    what the others said."""
    started = [row.avg_confidence for row in rows if row.assessed > 0]
    return round(sum(started) / len(started), 4) if started else None


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
            for b in summary.capabilities.cannot_evaluate_yet[:ROW_BLOCKED_CAPABILITIES]
        ],
        updated_at=summary.updated_at,
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
