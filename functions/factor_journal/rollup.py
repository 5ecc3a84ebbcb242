"""Organisation roll-ups: one row document per person, which the team pages query a page at a time.

Why one document per person (``organisations/{org}/people/{uid}``):

* **Any organisation size.** A row is a few KB whatever the number of people; nothing holds everyone's
  rows (a shard of rows would pass Firestore's 1 MiB per document near 25,000-40,000 people).
* **Writes stay per person.** A person's change rewrites their own row, in the transaction of the summary it
  mirrors; the organisation's figures move with it through sharded counters (``factor_journal.figures``).
* **Pages read what they show.** Filters and orders are Firestore queries over fields the row carries for
  them (``tier``, ``quiet``, ``due_any``, ``name_key``, ...), served by the indexes in ``firestore.indexes.json``.

What time does to a row: a row carries what its person's answers count *as of* ``aged_at`` (the tier their
aged confidence supports, the answers due for a re-check, whether they went quiet) and when that next changes
(``next_change``).  A person's change writes it as of the change; the nightly job re-ages the rows whose
``next_change`` has come (``aged``), so nothing ages every answer on every view.

``validated_row`` is the one check of a stored row (the team pages, the nightly check and a set-aside of
damaged documents all read rows through it).

Organisation history (the progress chart) comes from ``organisations/{org}/daily/{date}`` documents written by
the nightly job, and each person's day from ``users/{uid}/snapshots/{date}`` (``snapshot_document``).
"""

from __future__ import annotations

import hashlib
import logging
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import BaseModel, Field, model_validator

from factor_journal import freshness
from factor_journal.catalog import Catalog
from factor_journal.models import AssessmentSummary, CategoryProgress, DocumentModel, Overall, UserProfile
from factor_journal.summary import decision_tier

log = logging.getLogger(__name__)

ROW_FORMAT = 2  # bump when what a row holds changes: every row is rebuilt by the nightly job (``row_stamp``)
FIGURE_SHARDS = 16  # the organisation's counters are split over this many documents (``factor_journal.figures``)
QUIET_AFTER = timedelta(days=7)
STALE_BANDS = (0.25, 0.5)  # a person with answers due: band 1 below a quarter of their answers, 2, then 3 from half
BAND_FIELDS = ("due_any", "due_quarter", "due_half")  # a row's flags: its band is at least 1, 2, 3
CONFIDENCE_EPOCH = datetime(2025, 1, 1, tzinfo=UTC)  # the origin of the confidence terms (``confidence_terms``)
NEVER_AGES = "-"  # the confidence term of answers that do not age (or whose time is unknown)


def shard_of(user_id: str, shards: int = FIGURE_SHARDS) -> str:
    """The figures shard a person's counts go to (stable across processes)."""
    return f"shard-{int(hashlib.sha1(user_id.encode()).hexdigest(), 16) % shards:02d}"


def row_stamp(catalog: Catalog) -> str:
    """What a row was built with: the row format, the catalog's version and its freshness version.  A row of
    another stamp is out of date (a catalog or freshness change deployed since): the nightly job rebuilds it."""
    return f"{ROW_FORMAT}/{catalog.version}/{catalog.freshness.version}"


def band_of(due: int, share: float) -> int:
    """The re-check band of a person: 0 nothing due, then 1, 2, 3 by the share of their answers due
    (``STALE_BANDS``); a team filter 'a quarter or more' is the bands from 2."""
    return 0 if due <= 0 else 1 + sum(share >= cut for cut in STALE_BANDS)


def cell_of(tier: str, quiet: bool, band: int) -> str:
    """The cell a person counts in: the team page's filters (tier, gone quiet, re-check band) select cells."""
    return f"{tier}:{int(quiet)}:{band}"


def parse_cell(cell: str) -> tuple[str, bool, int]:
    """(tier, quiet, band) of a cell key written by ``cell_of``."""
    tier, quiet, band = cell.rsplit(":", 2)
    return tier, quiet == "1", int(band)


class BlockedRow(DocumentModel):
    archetype_id: str
    blockers: list[str]


class RowFreshness(BaseModel):
    """A person's row as it counts at a moment: answers due for a re-check, their share, the aged average
    confidence and the tier it supports (completeness does not age)."""

    due: int
    share: float  # of the assessed answers
    avg_confidence: float
    decision_tier: str


class PersonRow(DocumentModel):
    """``organisations/{org}/people/{uid}``: what the team pages need about one person.

    The first fields mirror the person's profile and summary; the aged ones say how the answers count at
    ``aged_at`` (``aged`` sets them and the query keys); ``validated_row`` reads a stored one."""

    user_id: str = Field(min_length=1)
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
    # every assessed answer's stored confidence and when it was last said, as compact text (``encode_said``):
    # re-aged by the nightly job from the row alone
    said: str = ""
    listed: bool = True  # a manager's own row is kept but neither listed on nor counted by the team pages
    # as the answers count at ``aged_at`` (``aged``)
    aged_at: datetime | None = None
    tier: str = ""  # the decision tier the aged answers support ("" before the row was aged)
    due: int = 0
    due_share: float = 0.0
    aged_confidence: float = 0.0
    quiet: bool = False
    band: int = 0
    due_any: bool = False  # band >= 1 (``BAND_FIELDS``: the team filters are equalities on these)
    due_quarter: bool = False  # band >= 2
    due_half: bool = False  # band >= 3
    next_change: datetime | None = None  # when any of the aged fields next changes with time alone (None: never)
    # the aged average confidence's terms, whatever the time (``confidence_terms``): the figures' sums
    confidence_terms: dict[str, float] = Field(default_factory=dict)
    # query keys (``aged``)
    cell: str = ""
    name_key: str = ""  # the name (the id for none), casefolded: the Name order and the name search
    shard: str = ""
    stamp: str = ""

    @model_validator(mode="after")
    def _keys_agree(self) -> PersonRow:
        if self.cell and self.cell != cell_of(self.tier, self.quiet, self.band):
            raise ValueError(f"cell {self.cell!r} disagrees with the row's tier, quiet and band")
        if self.cell and [self.due_any, self.due_quarter, self.due_half] != [self.band > k for k in range(3)]:
            raise ValueError(f"the re-check flags disagree with band {self.band}")
        return self

    @property
    def fresh(self) -> RowFreshness:
        """The row's freshness as of ``aged_at`` (as stored for a row never aged)."""
        return RowFreshness(
            due=self.due,
            share=self.due_share,
            avg_confidence=self.aged_confidence if self.tier else self.avg_confidence,
            decision_tier=self.tier or self.decision_tier,
        )


def validated_row(document: Mapping[str, Any] | None) -> PersonRow:
    """The stored row document as a ``PersonRow``: pydantic's ``ValidationError`` when it no longer reads (a
    field of the wrong type, keys that disagree with its figures).  The one check of a stored row."""
    return PersonRow.model_validate(document or {})


def mean_confidence(rows: Sequence[PersonRow]) -> float | None:
    """The average confidence of the people who have assessed something (``None`` when nobody has).

    Someone who has not started has no confidence to average: counted as 0% they would read as doubt about
    what the others said."""
    started = [row.avg_confidence for row in rows if row.assessed > 0]
    return round(sum(started) / len(started), 4) if started else None


def mean_completeness(rows: Sequence[PersonRow]) -> float:
    """How much of the catalog the people have mapped on average (everyone counts, 0 for nobody)."""
    return round(sum(row.completeness for row in rows) / len(rows), 4) if rows else 0.0


def person_row(
    profile: UserProfile,
    summary: AssessmentSummary,
    last_active: datetime | None,
    catalog: Catalog,
    at: datetime,
) -> PersonRow:
    """The person's row, aged to ``at`` (a change's moment)."""
    overall = summary.overall
    row = PersonRow(
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
        listed=profile.role != "manager",
    )
    return aged(row, catalog, at)


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


def _ageing(row: PersonRow, catalog: Catalog) -> list[tuple[float, int | None, float | None]]:
    """(confidence, said at in seconds, half-life in days) of each of the row's answers that counts for its
    freshness: a composite (it ages with its components) or a factor no longer in the catalog is left out."""
    ageing = catalog.ageing_days()
    return [(confidence, seconds, ageing[fid]) for fid, confidence, seconds in _marks(row.said) if fid in ageing]


def _fresh_at(
    answers: Sequence[tuple[float, int | None, float | None]], row: PersonRow, catalog: Catalog, now_s: float
) -> RowFreshness:
    threshold = catalog.freshness.recheck_below
    due = 0
    confidences: list[float] = []
    for confidence, seconds, days in answers:
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


def row_freshness(row: PersonRow, catalog: Catalog, now: datetime) -> RowFreshness:
    """Freshness of a roll-up row at ``now``, from the row alone (pure; a row without ``said`` counts as it was
    stored).  Ages and counts what is due with the functions the person's own pages and reminders use
    (``freshness.kept_after``, ``freshness.half_lives_until_due``)."""
    return _fresh_at(_ageing(row, catalog), row, catalog, now.timestamp())


def confidence_terms(row: PersonRow, catalog: Catalog) -> dict[str, float]:
    """The row's aged average confidence as terms that do not depend on the time: for each half-life ``h``
    (days), the sum over its answers of ``confidence * 2 ** ((said - CONFIDENCE_EPOCH) / h) / n`` (``n``: the
    answers that count), and ``NEVER_AGES`` for those that do not age.  At any moment ``t`` the average is
    ``sum(term_h * 2 ** -((t - CONFIDENCE_EPOCH) / h)) + term_never``: summed over people, the organisation's
    average confidence at any moment from a few counters (``figures.OrgFigures.avg_confidence``).  A person
    who assessed nothing has none; one whose row has no answer times counts with the stored average."""
    if row.assessed <= 0:
        return {}
    answers = _ageing(row, catalog)
    if not answers:
        return {NEVER_AGES: row.avg_confidence}
    epoch = CONFIDENCE_EPOCH.timestamp()
    terms: dict[str, float] = {}
    for confidence, seconds, days in answers:
        if seconds is None or days is None:
            key, weight = NEVER_AGES, 1.0
        else:
            key, weight = repr(float(days)), 2.0 ** ((seconds - epoch) / 86400.0 / days)
        terms[key] = terms.get(key, 0.0) + confidence * weight / len(answers)
    return terms


def aged_confidence_at(terms: Mapping[str, float], at: datetime) -> float:
    """The sum of ``confidence_terms`` (of one person or many) evaluated at ``at``."""
    days_since = (at.timestamp() - CONFIDENCE_EPOCH.timestamp()) / 86400.0
    return sum(
        value if key == NEVER_AGES else value * 2.0 ** (-days_since / float(key)) for key, value in terms.items()
    )


def _quiet(row: PersonRow, at: datetime) -> bool:
    return row.completeness < 1.0 and (row.last_active is None or at - row.last_active > QUIET_AFTER)


def next_change(row: PersonRow, catalog: Catalog, at: datetime) -> datetime | None:
    """When, after ``at``, time alone next changes the row's aged fields: an answer falls due (the whole second at
    or after it), the person goes quiet (the first microsecond they are), or decay takes them below their tier (found
    by bisection, within the minute after).  Never before the change, at most a minute after it: by this moment the
    row has changed.  None when nothing more changes with time."""
    moments: list[datetime] = []
    now_s = at.timestamp()
    if row.completeness < 1.0 and row.last_active is not None and row.last_active + QUIET_AFTER >= at:
        # quiet is ``at - last_active > QUIET_AFTER``: true from the next microsecond, kept exact as a datetime
        moments.append(row.last_active + QUIET_AFTER + timedelta(microseconds=1))
    answers = _ageing(row, catalog)
    threshold = catalog.freshness.recheck_below
    for confidence, seconds, days in answers:
        if seconds is not None and days is not None:
            due_s = seconds + days * 86400.0 * freshness.half_lives_until_due(confidence, threshold)
            if due_s > now_s:
                moments.append(datetime.fromtimestamp(math.ceil(due_s), UTC))
    tier = _fresh_at(answers, row, catalog, now_s).decision_tier
    if answers and tier != catalog.decision_tiers[0].id:
        low, high = now_s, now_s + 100 * 365.25 * 86400
        if _fresh_at(answers, row, catalog, high).decision_tier != tier:
            while high - low > 60:
                middle = (low + high) / 2
                if _fresh_at(answers, row, catalog, middle).decision_tier == tier:
                    low = middle
                else:
                    high = middle
            moments.append(datetime.fromtimestamp(math.ceil(high), UTC))
    return min(moments) if moments else None


def search_key(text: str) -> str:
    """A manager's search as it is matched against the start of ``name_key`` ('' for none)."""
    return " ".join(text.casefold().split())


def aged(row: PersonRow, catalog: Catalog, at: datetime) -> PersonRow:
    """The row as its answers count at ``at``, with its query keys and the stamp of ``catalog`` (pure)."""
    fresh = row_freshness(row, catalog, at)
    quiet = _quiet(row, at)
    band = band_of(fresh.due, fresh.share)
    return row.model_copy(
        update={
            "aged_at": at,
            "tier": fresh.decision_tier,
            "due": fresh.due,
            "due_share": fresh.share,
            "aged_confidence": fresh.avg_confidence,
            "quiet": quiet,
            "band": band,
            "next_change": next_change(row, catalog, at),
            "confidence_terms": confidence_terms(row, catalog),
            "due_any": band >= 1,
            "due_quarter": band >= 2,
            "due_half": band >= 3,
            "cell": cell_of(fresh.decision_tier, quiet, band),
            "name_key": " ".join((row.display_name or row.user_id).casefold().split()),
            "shard": shard_of(row.user_id),
            "stamp": row_stamp(catalog),
        }
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
