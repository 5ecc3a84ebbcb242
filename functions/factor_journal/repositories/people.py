"""People and their conversations: profiles, sessions, turns, turn claims and outcomes, rate counters.

Promises:

* ``register`` creates or updates a profile without resetting what the server
  keeps, gives a new user an empty summary, and keeps the person's roll-up row
  in their organisation only: moving organisation removes the old row in the
  same transaction.
* A turn is analysed by one claimer at a time: ``claim_turn`` is a transaction
  on the turn document alone (a duplicate delivery that finds the turn done or
  claimed under a live lease makes no write at all), and a claim whose lease
  ran out may be taken over.
* Every turn ends in a recorded ``TurnStatus``; failures carry when to retry.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from google.api_core import exceptions as api_exceptions
from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter

from factor_journal.catalog import Catalog
from factor_journal.conversation import InvalidTurnError, Turn, parse_turn
from factor_journal.documents import (
    SCREEN_LIFTED,
    ExtractionOutcome,
    ScreenLift,
    SessionDocument,
    TurnStatus,
    awaiting_analysis,
    claim_abandoned,
    claim_refused_by,
    failure_recorded,
    latest_session_id,
    lift_refused,
)
from factor_journal.errors import (
    AnswerNotFoundError,
    FactorJournalError,
    NotLiftableError,
    UnknownOrganisationError,
    UnknownUserError,
)
from factor_journal.figures import delta
from factor_journal.graph import FactorGraph
from factor_journal.models import SERVER_MANAGED_PROFILE_FIELDS, UserProfile
from factor_journal.repositories.changes import roster_changed, write_row
from factor_journal.repositories.client import Repository, jittered_sleep, run_transaction
from factor_journal.repositories.journal import JournalReads
from factor_journal.repositories.locks import CommitBusyError
from factor_journal.repositories.paths import AWAITING_ANALYSIS, SUMMARY_FIELD, TURNS, Paths
from factor_journal.repositories.rows import move_figures, put_row, read_row, row_from, update_row
from factor_journal.repositories.set_aside import write_set_aside
from factor_journal.rollup import PersonRow
from factor_journal.setaside import DocumentKind, SetAside, set_aside
from factor_journal.summary import build_summary

log = logging.getLogger(__name__)

CLAIM_ATTEMPTS = 40


@dataclass(frozen=True)
class Claim:
    """What a delivery found when it tried to claim a turn."""

    won: bool  # True: this delivery now holds the turn and must analyse it
    outcome: ExtractionOutcome | None  # the stored outcome (after the claim when won)
    missing: bool = False
    data: dict[str, Any] | None = None  # the turn document as read


@dataclass(frozen=True)
class TurnRef:
    user_id: str
    session_id: str
    turn_id: str

    @property
    def key(self) -> str:
        return f"{self.session_id}/{self.turn_id}"


class People(Repository):
    catalog: Catalog
    graph: FactorGraph

    # Profiles ----------------------------------------------------------------------------

    def register(self, profile: UserProfile) -> None:
        """Create the person, or change their profile.  A profile that was read (it has ``created_at``) is a
        change of someone who exists: written back after they were erased, it raises UnknownUserError and
        brings nobody back."""
        now = datetime.now(UTC)
        changing = profile.created_at is not None
        profile = profile.model_copy(update={"created_at": profile.created_at or now})
        paths = self.paths

        @firestore.transactional
        def run(transaction: firestore.Transaction) -> None:
            user_snapshot, summary_snapshot = (
                paths.user(profile.user_id).get(transaction=transaction),
                paths.summary(profile.user_id).get(transaction=transaction),
            )
            if changing and not user_snapshot.exists:
                raise UnknownUserError(profile.user_id)
            known = (user_snapshot.to_dict() or {}) if user_snapshot.exists else {}
            old_org = known.get("org_id")
            moved_from = old_org if old_org and old_org != profile.org_id else None
            old_org_exists = (
                moved_from is not None and paths.organisation(moved_from).get(transaction=transaction).exists
            )
            joined = profile.org_id if profile.org_id and profile.org_id != old_org else None
            new_org_exists = joined is not None and paths.organisation(joined).get(transaction=transaction).exists
            found: list[SetAside] = []  # a damaged summary or row (and what it held): set aside below
            left_row = read_row(paths, moved_from, profile.user_id, transaction, found) if moved_from else None
            row = read_row(paths, profile.org_id, profile.user_id, transaction, found) if profile.org_id else None
            summary, rewrite = JournalReads(self.client, self.catalog, self.graph).summary_from(
                profile.user_id, summary_snapshot.to_dict(), now, transaction, found
            )  # reads come before writes: a damaged summary is rebuilt here
            if summary is None:
                summary, rewrite = build_summary(self.catalog, self.graph, {}, None, now), True
            document = profile.to_document()
            if user_snapshot.exists:  # never reset what the pipeline and the reminder job keep
                document = {k: v for k, v in document.items() if k not in SERVER_MANAGED_PROFILE_FIELDS}
            transaction.set(paths.user(profile.user_id), document, merge=True)
            if rewrite:
                transaction.set(paths.summary(profile.user_id), {SUMMARY_FIELD: summary.to_document()})
            if moved_from:  # the old organisation loses the person's row and manager entry at once
                leave_organisation(transaction, paths, moved_from, profile.user_id, old_org_exists, left_row)
            merged = UserProfile.model_validate({**known, **document})
            write_row(transaction, paths, self.catalog, merged, summary, known.get("last_active"), row, now)
            if joined and new_org_exists:
                roster_changed(transaction, paths, joined)
            write_set_aside(transaction, paths, profile.user_id, found, profile_exists=True)

        run_transaction(self.client, run, timeout=self.contention_timeout)

    def set_manager(self, user_id: str, org_id: str, manager: bool) -> None:
        """Put the person on ``org_id``'s managers list (``manager``) or take them off it, with their profile's
        ``role`` following, in one transaction that writes only ``role`` of the profile: a move, an opt-out or a
        rename made meanwhile is never undone.  Raises UnknownOrganisationError when ``org_id`` does not exist
        (either way: a mistyped id never creates a nameless organisation), and UnknownUserError, or
        FactorJournalError for someone not (or no longer) in ``org_id``, when asked to make a manager; nothing is
        written then.  The organisation is read in the transaction, so one deleted meanwhile is not recreated."""
        paths = self.paths

        @firestore.transactional
        def run(transaction: firestore.Transaction) -> None:
            snapshot, organisation = (
                paths.user(user_id).get(transaction=transaction),
                paths.organisation(org_id).get(transaction=transaction),
            )
            if not organisation.exists:
                raise UnknownOrganisationError(org_id)
            known = (snapshot.to_dict() or {}) if snapshot.exists else None
            member = known is not None and known.get("org_id") == org_id
            row = read_row(paths, org_id, user_id, transaction) if member else None
            if manager and known is None:
                raise UnknownUserError(user_id)
            if manager and not member:
                raise FactorJournalError(f"{user_id!r} belongs to {known.get('org_id')!r}, not {org_id!r}")  # type: ignore[union-attr]
            change = firestore.ArrayUnion([user_id]) if manager else firestore.ArrayRemove([user_id])
            transaction.update(paths.organisation(org_id), {"managers": change})
            role = "manager" if manager else "member"
            if member and known.get("role") != role and (manager or known.get("role") == "manager"):  # type: ignore[union-attr]
                transaction.update(paths.user(user_id), {"role": role})
            if row is not None and row.listed == manager:  # a manager's own row is neither listed nor counted
                update_row(transaction, paths, org_id, row, listed=not manager)

        run_transaction(self.client, run, timeout=self.contention_timeout)

    def get(self, user_id: str) -> UserProfile | None:
        snapshot = self.paths.user(user_id).get()
        return UserProfile.model_validate(snapshot.to_dict()) if snapshot.exists else None

    # Sessions and turns ------------------------------------------------------------------

    def start_session(self, user_id: str, session_id: str | None = None, *, started_at: datetime | None = None) -> str:
        if self.get(user_id) is None:
            raise UnknownUserError(user_id)
        ref = self.paths.session(user_id, session_id) if session_id else self.paths.sessions(user_id).document()
        ref.set({"session_id": ref.id, "started_at": started_at or datetime.now(UTC)}, merge=True)
        return ref.id

    def add_turn(
        self,
        user_id: str,
        session_id: str,
        role: str,
        text: str,
        *,
        created_at: datetime | None = None,
        turn_id: str | None = None,
        about: str | None = None,
    ) -> str:
        """Write a turn as a client would (a person's turn awaits its analysis until a delivery claims it: the
        recovery sweep finds it by that mark however old it is); an assistant's question records the factor it
        asks ``about``, so the interview does not ask about it again in the session; its id."""
        collection = self.paths.turns(user_id, session_id)
        ref = collection.document(turn_id) if turn_id else collection.document()
        turn: dict[str, Any] = {"role": role, "text": text, "created_at": created_at or firestore.SERVER_TIMESTAMP}
        if role == "user":
            turn[AWAITING_ANALYSIS] = True
        elif about:
            turn["about"] = about
        ref.set(turn)
        return ref.id

    def turn_data(self, user_id: str, session_id: str, turn_id: str) -> dict[str, Any] | None:
        snapshot = self.paths.turn(user_id, session_id, turn_id).get()
        return snapshot.to_dict() if snapshot.exists else None

    def session_data(self, user_id: str, session_id: str) -> dict[str, Any] | None:
        snapshot = self.paths.session(user_id, session_id).get()
        return snapshot.to_dict() if snapshot.exists else None

    def recent_turns(self, user_id: str, session_id: str, *, before: datetime, limit: int) -> list[Turn]:
        """Up to ``limit`` valid turns of the session created before ``before``, oldest first."""
        query = (
            self.paths.turns(user_id, session_id)
            .where(filter=FieldFilter("created_at", "<", before))
            .order_by("created_at", direction=firestore.Query.DESCENDING)
            .limit(limit)
        )
        turns = []
        for snapshot in reversed(list(query.stream())):
            try:
                turns.append(parse_turn(snapshot.id, snapshot.to_dict()))
            except InvalidTurnError:
                continue  # an invalid turn is recorded on its own; it is no context
        return turns

    def session_turns(self, user_id: str, session_id: str) -> list[tuple[str, dict[str, Any]]]:
        snapshots = self.paths.turns(user_id, session_id).order_by("created_at").stream()
        return [(snapshot.id, snapshot.to_dict() or {}) for snapshot in snapshots]

    def session_ids(self, user_id: str) -> list[str]:
        return [snapshot.id for snapshot in self.paths.sessions(user_id).stream()]

    def sessions(self, user_id: str) -> list[SessionDocument]:
        """The person's sessions (one query); a damaged session document counts by what still reads of it."""
        sessions = []
        for snapshot in self.paths.sessions(user_id).stream():
            session, damage = SessionDocument.salvaged(snapshot.id, snapshot.to_dict())
            if damage:
                log.warning("session %s of user %s is damaged (%s)", snapshot.id, user_id, ", ".join(damage))
            sessions.append(session)
        return sessions

    def latest_session(self, user_id: str) -> str | None:
        """The session the person was last active in (its newest analysed turn, else when it started), or None
        when they have none. A damaged session document counts by what still reads of it."""
        return latest_session_id(self.sessions(user_id))

    def answer_times(self, user_id: str, session_id: str, limit: int) -> list[datetime]:
        """When the person answered in the session, newest first, among its ``limit`` newest turns (one query on
        ``created_at``; the assistant's turns and a turn without a time are skipped)."""
        query = (
            self.paths.turns(user_id, session_id)
            .order_by("created_at", direction=firestore.Query.DESCENDING)
            .limit(limit)
        )
        times = []
        for snapshot in query.stream():
            turn = snapshot.to_dict() or {}
            if turn.get("role") != "assistant" and isinstance(turn.get("created_at"), datetime):
                times.append(turn["created_at"])
        return times

    def analysis_status(self, user_id: str, session_id: str, turn_id: str) -> str | None:
        """The turn's stored analysis status as written (one read), None while it has none; never raises on a
        damaged outcome."""
        status = ((self.turn_data(user_id, session_id, turn_id) or {}).get("extraction") or {}).get("status")
        return None if status is None else str(status)

    def wait_for_analysis(self, user_id: str, session_id: str, turn_id: str, timeout: float) -> str | None:
        """The turn's analysis status once the pipeline has finished with it (done, failed, …), or as it stands
        after ``timeout`` seconds (None: not claimed yet)."""
        deadline = time.monotonic() + timeout
        while True:
            status = self.analysis_status(user_id, session_id, turn_id)
            if not awaiting_analysis(status) or time.monotonic() >= deadline:
                return status
            time.sleep(0.2)

    # Claims and outcomes -----------------------------------------------------------------

    def claim_turn(
        self,
        ref: TurnRef,
        *,
        lease: timedelta,
        now: datetime | None = None,
        force: bool = False,
        max_attempts: int | None = None,
    ) -> Claim:
        """Claim the turn for analysis, unless it is settled, claimed under a live lease, or failed and not
        yet due again.  ``force`` (a person asking to reprocess) also claims turns that need attention,
        were rate limited or are waiting for their next attempt.  A turn whose holder died (its lease ran
        out) after ``max_attempts`` attempts is not claimed again: analysing it stops every instance that
        tries (a timeout, a crash), so it needs attention (listed, as any exhausted turn) instead.

        A read, then a write conditional on the turn being unchanged since (no transaction, so racing
        deliveries never wait on each other's locks): exactly one racer wins; the others re-read and
        find the turn claimed.  A duplicate of a done or claimed turn costs one read and no write."""
        turn_ref = self.paths.turn(ref.user_id, ref.session_id, ref.turn_id)
        moment = now or datetime.now(UTC)
        for attempt in range(1, CLAIM_ATTEMPTS + 1):
            snapshot = turn_ref.get()
            if not snapshot.exists:
                return Claim(won=False, outcome=None, missing=True)
            data = snapshot.to_dict() or {}
            previous, damage = ExtractionOutcome.read(data)
            if damage is not None and not force:
                assert previous is not None
                log.warning("turn %s of user %s: %s; it needs attention", ref.key, ref.user_id, damage)
                written = self.record_failure(ref, None, previous.model_copy(update={"failed_at": moment}))
                return Claim(won=False, outcome=written or previous, data=data)
            blocking = claim_refused_by(previous, moment, force)
            if blocking is not None:
                return Claim(won=False, outcome=blocking, data=data)
            if claim_abandoned(previous, max_attempts, force):
                assert previous is not None
                given_up = ExtractionOutcome(
                    status=TurnStatus.needs_attention,
                    attempts=previous.attempts,
                    error_kind="abandoned",
                    error=f"the analysis never finished: {previous.attempts} attempts each stopped their instance "
                    "(a timeout or a crash)",
                    failed_at=moment,
                )
                written = self.record_failure(ref, previous.claim_id, given_up)
                return Claim(won=False, outcome=written or given_up, data=data)
            outcome = ExtractionOutcome(
                status=TurnStatus.processing,
                attempts=(previous.attempts if previous else 0) + 1,
                claim_id=uuid.uuid4().hex,
                claimed_at=moment,
                lease_until=moment + lease,
                retry_at=moment + lease,  # the sweep takes the turn over if this claimer dies
                error=previous.error if previous else None,
                error_kind=previous.error_kind if previous else None,
            )
            try:
                turn_ref.update(
                    {"extraction": outcome.to_document(), AWAITING_ANALYSIS: firestore.DELETE_FIELD},
                    option=self.client.write_option(last_update_time=snapshot.update_time),
                )
            except (api_exceptions.FailedPrecondition, api_exceptions.Aborted):
                jittered_sleep(attempt)  # another delivery changed the turn first: look again
                continue
            return Claim(won=True, outcome=outcome, data=data)
        raise CommitBusyError(f"turn {ref.key!r} kept changing while it was being claimed")

    def lift_screen(self, ref: TurnRef, now: datetime | None = None) -> ScreenLift:
        """The person says an answer the screen set aside was about their organisation after all: in one transaction,
        record the lift on the turn (``screen_lifted``: the screen, when), clear its analysis so it is unanalysed
        again (``awaiting_analysis``: the recovery sweep finds it if no delivery does), and create its lift request
        (``lifts/{turn_id}``), whose trigger reads it again without that screen.  ``AnswerNotFoundError`` when the
        turn is gone, ``NotLiftableError`` when it may not be lifted (``lift_refused``); nothing is written then."""
        turn_ref = self.paths.turn(ref.user_id, ref.session_id, ref.turn_id)
        moment = now or datetime.now(UTC)

        @firestore.transactional
        def run(transaction: firestore.Transaction) -> ScreenLift:
            snapshot = turn_ref.get(transaction=transaction)
            if not snapshot.exists:
                raise AnswerNotFoundError(ref.turn_id)
            data = snapshot.to_dict() or {}
            why = lift_refused(data)
            if why is not None:
                raise NotLiftableError(ref.turn_id, why)
            screened = ExtractionOutcome.of(data).screened  # type: ignore[union-attr]  # lift_refused checked it
            assert screened is not None
            lift = ScreenLift(kind=screened.kind, reason=screened.reason, lifted_at=moment)
            transaction.update(
                turn_ref,
                {SCREEN_LIFTED: lift.to_document(), "extraction": firestore.DELETE_FIELD, AWAITING_ANALYSIS: True},
            )
            transaction.set(self.paths.lift(ref.user_id, ref.session_id, ref.turn_id), {"lifted_at": moment})
            return lift

        return run_transaction(self.client, run, timeout=self.contention_timeout)

    def settle_turn(self, ref: TurnRef, outcome: ExtractionOutcome, damage: str | None = None) -> None:
        """Record a turn's final outcome that involves no factor change (invalid, rate limited, context); a turn
        deleted meanwhile (its person erased) is not written back.  ``damage``: the turn document itself does not
        read as a turn (``conversation.parse_turn``); it is set aside in the same transaction (marked, its record
        kept with the person, their profile listing it)."""
        turn_ref = self.paths.turn(ref.user_id, ref.session_id, ref.turn_id)
        if damage is None:
            try:
                turn_ref.update({"extraction": outcome.to_document()})
            except api_exceptions.NotFound:
                log.info("turn %s of user %s is gone: its outcome is not recorded", ref.key, ref.user_id)
            return

        @firestore.transactional
        def run(transaction: firestore.Transaction) -> None:
            turn, user = (
                turn_ref.get(transaction=transaction),
                self.paths.user(ref.user_id).get(transaction=transaction),
            )
            if not turn.exists:
                log.info("turn %s of user %s is gone: its outcome is not recorded", ref.key, ref.user_id)
                return
            stored = {key: value for key, value in (turn.to_dict() or {}).items() if key != "extraction"}
            found = set_aside(
                ref.user_id, DocumentKind.turn, turn_ref.path, stored, damage, outcome.processed_at or datetime.now(UTC)
            )
            transaction.update(turn_ref, {"extraction": outcome.to_document()})
            write_set_aside(transaction, self.paths, ref.user_id, [found], profile_exists=user.exists)

        run_transaction(self.client, run, timeout=self.contention_timeout)

    def record_failure(
        self, ref: TurnRef, claim_id: str | None, outcome: ExtractionOutcome
    ) -> ExtractionOutcome | None:
        """Record a failed attempt, unless the turn was completed (or re-claimed) meanwhile; an outcome that
        needs attention lists the turn among the person's turns needing attention (profile and roll-up row)
        in the same transaction, so a turn is listed exactly while its stored status says so.

        Returns the outcome written, or None when nothing was written."""
        turn_ref = self.paths.turn(ref.user_id, ref.session_id, ref.turn_id)
        listing = outcome.status == TurnStatus.needs_attention

        @firestore.transactional
        def run(transaction: firestore.Transaction) -> ExtractionOutcome | None:
            snapshot = turn_ref.get(transaction=transaction)
            user = self.paths.user(ref.user_id).get(transaction=transaction) if listing else None
            org_id = (user.to_dict() or {}).get("org_id") if user is not None and user.exists else None
            row = self.paths.person_row(org_id, ref.user_id).get(transaction=transaction) if org_id else None
            if not snapshot.exists:
                return None
            written = failure_recorded(ExtractionOutcome.of(snapshot.to_dict()), claim_id, outcome)
            if written is None:
                return None
            transaction.set(
                turn_ref, {"extraction": written.to_document(), AWAITING_ANALYSIS: firestore.DELETE_FIELD}, merge=True
            )
            if user is not None and user.exists:
                _write_attention(transaction, self.paths, ref, user.to_dict() or {}, True, row=row)
            return written

        return run_transaction(self.client, run, timeout=self.contention_timeout)

    def due_turns(self, now: datetime, limit: int = 200) -> list[TurnRef]:
        """Turns whose retry time has come (failed ones due again, claims whose lease ran out), oldest first."""
        query = (
            self.client.collection_group(TURNS)
            .where(filter=FieldFilter("extraction.retry_at", "<=", now))
            .order_by("extraction.retry_at")
            .limit(limit)
        )
        return [ref for snapshot in query.stream() if (ref := _turn_ref(snapshot.reference.path)) is not None]

    def unclaimed_turns(self, until: datetime, limit: int = 200) -> list[TurnRef]:
        """Person's turns created before ``until`` that no delivery ever claimed (a lost or crashed first
        delivery, an outage), however old, oldest first, at most ``limit``: they carry the mark
        ``awaiting_analysis`` from their creation (the security rules require it of clients) until their first
        claim or recorded failure removes it, so the query reads only such turns.  A marked turn whose analysis
        record no longer reads is among them (claiming it lists it as needing attention)."""
        query = (
            self.client.collection_group(TURNS)
            .where(filter=FieldFilter(AWAITING_ANALYSIS, "==", True))
            .where(filter=FieldFilter("created_at", "<", until))
            .order_by("created_at")
            .limit(limit)
        )
        return [ref for snapshot in query.stream() if (ref := _turn_ref(snapshot.reference.path)) is not None]

    # Attention and rate ------------------------------------------------------------------

    def set_attention(self, ref: TurnRef, needs_attention: bool) -> None:
        """List (or unlist) the turn among the person's turns needing attention, on the profile and
        on their roll-up row (where their managers see it, the figures moved with it): one batch, conditional on
        the profile and the row being unchanged since they were read (retried otherwise), so concurrent changes
        never lose an entry."""
        for attempt in range(1, CLAIM_ATTEMPTS + 1):
            snapshot = self.paths.user(ref.user_id).get()
            if not snapshot.exists:
                return
            profile = snapshot.to_dict() or {}
            org_id = profile.get("org_id")
            row = self.paths.person_row(org_id, ref.user_id).get() if isinstance(org_id, str) and org_id else None
            batch = self.client.batch()
            precondition = self.client.write_option(last_update_time=snapshot.update_time)
            if not _write_attention(batch, self.paths, ref, profile, needs_attention, precondition, row):
                return
            try:
                batch.commit()
                return
            except (api_exceptions.FailedPrecondition, api_exceptions.Aborted):
                jittered_sleep(attempt)
        raise CommitBusyError(f"user {ref.user_id!r} kept changing while listing a turn needing attention")

    def count_turn(self, ref: TurnRef, written_at: datetime, now: datetime) -> tuple[int, int] | None:
        """Count the turn for its person's rate limit in the minute and day it was written (``written_at``, so a
        backlog the recovery sweep analyses late is counted as it was written, not all in the minute it is
        analysed); returns (that minute's, that day's) count up to and including it, or None when the turn is
        gone (its person erased meanwhile: nothing is written about them).  Each turn gets its own place in the
        count, so of a burst exactly the turns within the limit see counts within it (a turn is never refused
        for turns counted after it), and concurrent turns never wait on each other: one commit, conditional on
        the turn still existing, of two server-side increments whose results are this turn's counts."""
        written_at = written_at.astimezone(UTC)
        rate = self.paths.rate(ref.user_id, written_at.strftime("%Y-%m-%d"))
        minute = written_at.strftime("%H%M")
        batch = self.client.batch()
        batch.update(self.paths.turn(ref.user_id, ref.session_id, ref.turn_id), {"extraction.counted_at": now})
        counts = {"day": firestore.Increment(1), "minutes": {minute: firestore.Increment(1)}}
        batch.set(rate, {**counts, "expires_at": now + timedelta(days=2)}, merge=True)  # one write, two counts
        try:
            _, (day, this_minute) = (result.transform_results for result in batch.commit())
        except api_exceptions.NotFound:
            return None
        return int(this_minute.integer_value), int(day.integer_value)

    def turns_of(self, user_id: str) -> Iterator[tuple[TurnRef, dict[str, Any]]]:
        """Every turn of every session of the user, oldest first within a session."""
        for session_id in self.session_ids(user_id):
            for turn_id, data in self.session_turns(user_id, session_id):
                yield TurnRef(user_id, session_id, turn_id), data


def _turn_ref(path: str) -> TurnRef | None:
    """The turn a collection-group result stands for (``users/{uid}/conversations/{sid}/turns/{tid}``)."""
    parts = path.split("/")
    if len(parts) != 6 or parts[0] != "users":
        return None
    return TurnRef(user_id=parts[1], session_id=parts[3], turn_id=parts[5])


def _write_attention(
    writer: firestore.Transaction | firestore.WriteBatch,
    paths: Paths,
    ref: TurnRef,
    profile: dict[str, Any],
    needs_attention: bool,
    option: Any = None,
    row: firestore.DocumentSnapshot | None = None,
) -> bool:
    """List (or unlist) the turn among the person's turns needing attention, on the profile (``option``: its
    write precondition) and on their roll-up row (``row``: as read; written only when it exists, conditional
    on it being unchanged since), with the figures; False when the list already says so (nothing written)."""
    listed = set(profile.get("attention_turns") or [])
    updated = listed | {ref.key} if needs_attention else listed - {ref.key}
    if updated == listed:
        return False
    writer.update(paths.user(ref.user_id), {"attention_turns": sorted(updated)}, option=option)
    org_id = profile.get("org_id")
    stored = row_from(row, str(org_id)) if row is not None and org_id else None
    if stored is not None and row is not None:
        new = stored.model_copy(update={"needs_attention": len(updated)})
        # in a batch: the row unchanged since it was read, or the batch fails and is tried again
        unchanged = paths.client.write_option(last_update_time=row.update_time) if option is not None else None
        writer.update(row.reference, {"needs_attention": new.needs_attention}, option=unchanged)
        move_figures(writer, paths, str(org_id), ref.user_id, delta(stored, new))
    return True


def leave_organisation(
    transaction: firestore.Transaction,
    paths: Paths,
    org_id: str,
    user_id: str,
    organisation_exists: bool,
    row: PersonRow | None = None,
) -> None:
    """Take a person out of ``org_id`` inside the caller's transaction: their roll-up row (``row``: as read in
    it) is deleted with its share of the figures and, when the organisation document exists, they leave its
    ``managers`` list and its roster changes."""
    put_row(transaction, paths, org_id, user_id, row, None)
    if organisation_exists:
        transaction.update(paths.organisation(org_id), {"managers": firestore.ArrayRemove([user_id])})
        roster_changed(transaction, paths, org_id)
