"""Domain models: what is stored per user, what a change proposes, what the summary holds.

These are the boundary types: Firestore documents are parsed into them on the
way in and dumped from them on the way out (``to_document``), so the rest of
the code works with typed values, never raw dictionaries.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

QuestionType = Literal["why_blocker", "why_value", "what_changed", "what_if", "status", "what_said", "standing"]
"""The kinds of question "Ask why" answers (``questions.intent``): read by the embedded rules, or by Gemini as intent
router (its response schema, ``extraction.prompts.IntentOutput``)."""


class DocumentModel(BaseModel):
    model_config = ConfigDict(use_enum_values=True, extra="ignore")

    def to_document(self) -> dict[str, Any]:
        """The Firestore document for this value (datetimes stay timestamps)."""
        return self.model_dump(mode="python")


class InferenceStatus(StrEnum):
    unassessed = "unassessed"  # no value (never assessed, or retracted)
    unconfirmed = "unconfirmed"  # inferred by the assistant, not yet checked by the user
    confirmed = "confirmed"  # inferred, then confirmed by the user
    user_provided = "user_provided"  # stated or corrected by the user


USER_BACKED = frozenset({InferenceStatus.confirmed, InferenceStatus.user_provided})

STATUS_WORDS: dict[str, str] = {  # who stands behind an answer, in the words every page and Ask use
    InferenceStatus.unassessed: "not assessed",
    InferenceStatus.unconfirmed: "unconfirmed",
    InferenceStatus.confirmed: "confirmed",
    InferenceStatus.user_provided: "yours",
}


def status_words(status: object) -> str:
    """An inference status in words ("yours" for a value the person gave); an unknown status with its
    underscores as spaces."""
    return STATUS_WORDS.get(str(status), str(status).replace("_", " "))


class Source(StrEnum):
    llm = "llm"
    user = "user"
    system = "system"


class EntryKind(StrEnum):
    inferred = "inferred"  # an extractor's reading of the conversation
    confirmed = "confirmed"  # the user confirmed the current value
    corrected = "corrected"  # the user provided a value
    retracted = "retracted"  # the value was withdrawn; the factor is unassessed again
    restored = "restored"  # the user brought a withdrawn reading back ("That's right" after "doesn't apply")
    conflict = "conflict"  # an inference disagreeing with a user-backed value, held for the user
    conflict_resolved = "conflict_resolved"  # the user accepted or rejected a held inference
    derived = "derived"  # a composite recomputed from its components


class UserProfile(DocumentModel):
    """``users/{uid}``: who the user is and which organisation they belong to."""

    user_id: str = Field(min_length=1, max_length=128, pattern=r"^[^/]+$")
    display_name: str = ""
    email: str = ""
    org_id: str | None = None
    role: str = "member"  # member | manager
    created_at: datetime | None = None
    reminders_opt_out: bool = False
    last_active: datetime | None = None  # last analysed turn (written by the pipeline)
    last_reminded_at: datetime | None = None  # written by the reminder job
    attention_turns: list[str] = Field(default_factory=list)  # "session/turn" whose analysis needs a person
    set_aside: list[str] = Field(default_factory=list)  # paths of the person's damaged documents set aside (setaside)


SERVER_MANAGED_PROFILE_FIELDS = frozenset({"last_active", "last_reminded_at", "attention_turns", "set_aside"})


class Conflict(DocumentModel):
    """An inference held back because it disagrees with what the user confirmed or said."""

    entry_id: str
    proposed_value: float
    proposed_confidence: float
    rationale: str
    observed_at: datetime
    session_id: str | None = None


class FactorState(DocumentModel):
    """``users/{uid}/factors/{factor_id}``: the factor's current state.

    The same state is mirrored in the summary's ``factors`` map, written in the
    same transaction, so the summary can be recomputed without reading factors.
    """

    factor_id: str
    category: str
    current_value: float | None = None
    current_confidence: float = 0.0
    inference_status: InferenceStatus = InferenceStatus.unassessed
    observed_at: datetime | None = None  # when the current value was said
    last_updated: datetime | None = None  # when this state last changed
    inferred_from: list[str] = Field(default_factory=list)
    evidence_count: int = 0
    last_entry_id: str | None = None
    needs_recheck: bool = False
    recheck_reason: str | None = None
    open_conflict: Conflict | None = None
    # The newest observation folded into this state, as (observed_at, entry id): an observation that
    # sorts before it arrived late, and the factor is re-folded from its journal (see folding.py).
    folded_through: datetime | None = None
    folded_through_id: str | None = None

    @property
    def is_assessed(self) -> bool:
        return self.current_value is not None


class JournalEntry(DocumentModel):
    """``users/{uid}/factors/{factor_id}/journal/{entry_id}``: one change, with its evidence.

    ``applied`` says whether the entry changed the current state when recorded;
    ``effective`` whether it belongs to the factor's value timeline (as-of
    queries): a late-arriving older observation is effective but not applied, a
    held conflict is neither.  ``*_after`` is the factor's state the entry stands
    for on that timeline.
    """

    entry_id: str
    user_id: str
    factor_id: str
    kind: EntryKind
    source: Source
    previous_value: float | None
    new_value: float | None
    change_rationale: str
    conversation_excerpt: str = ""
    confidence: float
    inferred_from: list[str] = Field(default_factory=list)
    session_id: str | None = None
    turn_id: str | None = None
    observed_at: datetime
    recorded_at: datetime
    applied: bool
    effective: bool
    value_after: float | None
    confidence_after: float
    status_after: InferenceStatus
    # An extractor's own reading, before the move bound and evidence synthesis (llm entries): what
    # re-folding the factor's evidence in observation order starts from.
    reading_value: float | None = None
    reading_confidence: float | None = None
    reading_rationale: str | None = None
    weighed: bool | None = None  # the reading was bounded and weighed with earlier evidence when folded


class InferredUpdate(DocumentModel):
    """A proposed factor value read from the conversation (by an extractor or a person)."""

    factor_id: str
    value: float
    confidence: float
    rationale: str
    conversation_excerpt: str = ""
    inferred_from: list[str] = Field(default_factory=list)
    session_id: str | None = None
    turn_id: str | None = None
    observed_at: datetime | None = None  # defaults to the time of recording


class SaidIn(BaseModel):
    """Where a person's decision was given: the conversation session and answer, and the words of the answer it
    is about (the provenance of their journal entry).  All empty for a decision made on a page of its own."""

    session_id: str | None = None
    turn_id: str | None = None
    words: str = Field(default="", max_length=1200)


# The assessment summary --------------------------------------------------------------------


class CategoryProgress(DocumentModel):
    name: str
    completeness: float
    avg_confidence: float
    factor_count: int
    total_factors: int
    last_updated: datetime | None = None


class NextTier(DocumentModel):
    """The next decision tier and exactly what it still needs."""

    tier: str
    name: str
    budget: str
    min_completeness: float
    min_avg_confidence: float
    factors_needed: int  # more factors to assess to reach the completeness threshold
    confidence_gap: float  # how far the average confidence is below the threshold


class Overall(DocumentModel):
    total_factors_assessed: int
    total_factors: int
    completeness: float
    avg_confidence: float
    decision_tier: str
    decision_tier_name: str
    decision_budget: str
    next_tier: NextTier | None = None


class Blocker(DocumentModel):
    """A prerequisite an archetype misses: the factor's state against the threshold."""

    factor_id: str
    factor_name: str
    value: float | None
    confidence: float
    min_value: float
    min_confidence: float
    missing: list[str]  # "unassessed", "value", "confidence"


class BlockedCapability(DocumentModel):
    archetype_id: str
    name: str
    closeness: float  # 0..1, how near the prerequisites are to being met
    met: int
    total: int
    blockers: list[Blocker]


class Capabilities(DocumentModel):
    can_evaluate: list[str] = Field(default_factory=list)
    cannot_evaluate_yet: list[BlockedCapability] = Field(default_factory=list)


class LastConversation(DocumentModel):
    topic: str
    factor_id: str
    session_id: str | None = None
    timestamp: datetime
    excerpt: str


class UnconfirmedInference(DocumentModel):
    factor_id: str
    factor_name: str
    value: float
    confidence: float
    evidence_count: int
    latest_mention: datetime | None = None


class OpenConflict(DocumentModel):
    factor_id: str
    factor_name: str
    current_value: float | None
    proposed_value: float
    proposed_confidence: float
    rationale: str
    entry_id: str
    observed_at: datetime


class RecheckItem(DocumentModel):
    factor_id: str
    factor_name: str
    reason: str


class AssessmentSummary(DocumentModel):
    """``users/{uid}/metadata/assessment`` → ``assessment_summary``: everything a page needs."""

    catalog_version: str
    categories: dict[str, CategoryProgress]
    overall: Overall
    capabilities: Capabilities
    last_conversation: LastConversation | None = None
    unconfirmed_inferences: list[UnconfirmedInference] = Field(default_factory=list)
    conflicts: list[OpenConflict] = Field(default_factory=list)
    needs_recheck: list[RecheckItem] = Field(default_factory=list)
    factors: dict[str, FactorState] = Field(default_factory=dict)
    updated_at: datetime | None = None


class HistoryPage(DocumentModel):
    entries: list[JournalEntry]
    next_cursor: str | None = None


class FactorReference(DocumentModel):
    factor_id: str
    factor_name: str
    value: float | None
    confidence: float


class ArchetypeNeed(DocumentModel):
    archetype_id: str
    name: str
    min_value: float
    min_confidence: float
    met: bool


class FactorExplanation(DocumentModel):
    """A factor's current state, the journal that led there, and its place in the graph."""

    state: FactorState
    factor_name: str
    reasoning_chain: list[JournalEntry]
    inferred_from: list[FactorReference]
    depends_on: list[FactorReference]
    dependents: list[FactorReference]
    needed_by: list[ArchetypeNeed]
