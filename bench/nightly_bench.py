"""Issue 12 figures: the nightly job for 20,000 people in 50 organisations.

* Seeding: people, their summaries, roll-up rows and organisations written with a
  bulk writer (not through the trigger).  A fixed mix per ten people: six are due a
  reminder (quiet for 8-40 days, never or long ago reminded, or never active since
  registering a month ago), four are not (active lately, reminded three days ago,
  opted out, no email); every organisation has a (quiet) manager, never reminded.
* Today's single loop (measured first, on the same seed in a named database): one
  instance, every organisation's figures in a loop, then the two "who is quiet"
  queries with their 500 cap -- the same 500 people every night.
* The fan-out, on the emulator's default database where the deployed functions
  run: ``runtime.daily_jobs`` (what the scheduled function calls) enqueues the
  run's first tasks; the Cloud Tasks emulator dispatches them to the task queue
  functions in the Functions emulator; done when every chain of pages and every
  organisation's day is recorded.  Then started again (a second run the same day):
  it must write nothing.  Duplicates are counted from the mail documents.

The default database is emptied before and after, and every id carries a run prefix.
"""

from __future__ import annotations

import os
import time
import uuid
from collections import Counter, defaultdict
from datetime import UTC, datetime, timedelta
from typing import Any

from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter

from bench.common import CheckedBulkWriter, fresh_database
from factor_journal import runtime
from factor_journal.catalog import Catalog, load_catalog
from factor_journal.graph import graph_for
from factor_journal.links import LinkSigner
from factor_journal.models import UserProfile
from factor_journal.nightly import NightlySettings, progress, start_run
from factor_journal.organisation import OrganisationDirectory
from factor_journal.reminders import MAIL_COLLECTION, ReminderPolicy, remind
from factor_journal.repositories.links import LinkRecords
from factor_journal.repositories.nightly_runs import NightlyRuns
from factor_journal.repositories.paths import SUMMARY_FIELD
from factor_journal.rollup import PersonRow, aged, row_stamp
from factor_journal.store import FactorJournalStore
from factor_journal.summary import build_summary

PEOPLE = 20_000
ORGANISATIONS = 50
LEGACY_LIMIT = 500
DUE_SLOTS = {0, 1, 2, 3, 4, 5}  # of every ten people (see seed_population)


def seed_population(
    client: firestore.Client,
    catalog: Catalog,
    *,
    people: int,
    organisations: int,
    now: datetime,
    prefix: str,
) -> dict[str, Any]:
    """Write ``people`` members (and a manager per organisation) in bulk; returns the ids, organisations
    and who is due a reminder at ``now`` under the default policy (7 days quiet, 7-day window)."""
    summary = {SUMMARY_FIELD: build_summary(catalog, graph_for(catalog), {}, None, now).to_document()}
    tiers = [tier.id for tier in catalog.decision_tiers]
    orgs = [f"{prefix}-org{index:03d}" for index in range(organisations)]
    due: set[str] = set()
    members: list[str] = []
    org_of: dict[str, str] = {}
    scans: dict[str, set[str]] = {"quiet": set(), "silent": set()}  # who each reminder scan reads at ``now``
    rows: dict[str, list[PersonRow]] = defaultdict(list)
    writer = CheckedBulkWriter(client)  # raises at close unless every document was written
    for org in orgs:
        manager = f"{org}-manager"
        profile = UserProfile(
            user_id=manager,
            display_name="Manager",
            email=f"{manager}@example.com",
            org_id=org,
            role="manager",
            created_at=now - timedelta(days=60),
            last_active=now - timedelta(days=30),
        )
        writer.set(client.document(f"users/{manager}"), profile.to_document())
        writer.set(client.document(f"users/{manager}/metadata/assessment"), summary)
        organisation = {"name": org, "managers": [manager], "rows_stamp": row_stamp(catalog)}
        writer.set(client.document(f"organisations/{org}"), organisation)
        scans["quiet"].add(manager)
    for index in range(people):
        user, org, slot = f"{prefix}-p{index:05d}", orgs[index % organisations], index % 10
        quiet = now - timedelta(days=8 + index % 33, minutes=index % 1440)
        fields: dict[str, Any] = {"last_active": quiet, "last_reminded_at": None, "email": f"{user}@example.com"}
        if slot == 4:
            fields["last_reminded_at"] = now - timedelta(days=10)
        elif slot == 5:
            fields["last_active"] = None
        elif slot == 6:
            fields["last_active"] = now - timedelta(days=1 + index % 6)
        elif slot == 7:
            fields["last_reminded_at"] = now - timedelta(days=3)
        elif slot == 8:
            fields["reminders_opt_out"] = True
        elif slot == 9:
            fields["email"] = ""
        profile = UserProfile(
            user_id=user,
            display_name=f"Person {index}",
            org_id=org,
            created_at=now - timedelta(days=30, seconds=index),
            **fields,
        )
        writer.set(client.document(f"users/{user}"), profile.to_document())
        writer.set(client.document(f"users/{user}/metadata/assessment"), summary)
        row = PersonRow(
            user_id=user,
            display_name=profile.display_name,
            email=profile.email,
            completeness=(index % 7) / 10,
            avg_confidence=0.5,
            assessed=index % 7,
            total=44,
            decision_tier=tiers[index % len(tiers)],
            last_active=profile.last_active,
        )
        rows[org].append(aged(row, catalog, now))
        members.append(user)
        org_of[user] = org
        if profile.last_active is None:
            scans["silent"].add(user)
        elif profile.last_active < now - timedelta(days=7):
            scans["quiet"].add(user)
        if slot in DUE_SLOTS:
            due.add(user)
    writer.close()  # the profiles first: a row is written for a member (read back below)
    records = FactorJournalStore(client, catalog).organisations
    for org, members_rows in rows.items():
        records.put_rows(org, members_rows)  # with their figures, read back
    return {"organisations": orgs, "members": members, "due": due, "org_of": org_of, "scans": scans}


def mail_per_person(client: firestore.Client, prefix: str) -> Counter[str]:
    """How many reminder mails each person of the run prefix has (ids only, in pages)."""
    counts: Counter[str] = Counter()
    query = client.collection(MAIL_COLLECTION).where(filter=FieldFilter("kind", "==", "resume_reminder"))
    for snapshot in query.select(["user_id"]).stream():
        user = snapshot.get("user_id")
        if user.startswith(prefix):
            counts[user] += 1
    return counts


def legacy_single_loop(store: FactorJournalStore, signer: LinkSigner, now: datetime) -> dict[str, Any]:
    """Today's job as it was before issue 12, in one instance: every organisation's day in a loop, then
    the two capped queries (at most 500 quiet and 500 never-active people, the same ones every night)."""
    started = time.perf_counter()
    directory = OrganisationDirectory(store)
    days = [directory.record_day(org_id, now) for org_id in directory.organisation_ids()]
    cutoff = now - timedelta(days=7)
    users = store.client.collection("users")
    quiet = users.where(filter=FieldFilter("last_active", "<", cutoff)).limit(LEGACY_LIMIT)
    silent = (
        users.where(filter=FieldFilter("last_active", "==", None))
        .where(filter=FieldFilter("created_at", "<", cutoff))
        .limit(LEGACY_LIMIT)
    )
    found = {s.id: UserProfile.model_validate(s.to_dict()) for q in (quiet, silent) for s in q.stream()}
    mail = remind(store, signer, "https://app.example", list(found.values()), now, ReminderPolicy())
    return {
        "seconds": round(time.perf_counter() - started, 1),
        "organisations": len(days),
        "people_seen": len(found),
        "reminders_written": len(mail),
    }


def wait_for_run(client: firestore.Client, run_id: str, timeout: float) -> tuple[float, Any]:
    started = time.perf_counter()
    deadline = started + timeout
    while True:
        state = progress(NightlyRuns(client), run_id)
        if state.complete or time.perf_counter() > deadline:
            return time.perf_counter() - started, state
        time.sleep(1.0)


def run() -> dict[str, Any]:
    people = int(os.environ.get("FJ_BENCH_NIGHTLY_PEOPLE", PEOPLE))
    catalog = load_catalog()
    now = datetime.now(UTC)
    prefix = f"nb{uuid.uuid4().hex[:6]}"

    # 1. Today's single loop, on the same seed in a named database (it runs in-process).
    legacy_client = fresh_database("fj-bench-nightly")
    seeded_at = time.perf_counter()
    population = seed_population(
        legacy_client, catalog, people=people, organisations=ORGANISATIONS, now=now, prefix=prefix
    )
    seed_seconds = round(time.perf_counter() - seeded_at, 1)
    print(
        f"  nightly: seeded {people} people in {ORGANISATIONS} organisations in {seed_seconds} s "
        f"({len(population['due'])} due a reminder)",
        flush=True,
    )
    legacy_store = FactorJournalStore(legacy_client, catalog)
    legacy = legacy_single_loop(legacy_store, LinkSigner(LinkRecords(legacy_client), secret="bench"), now)
    legacy_mail = mail_per_person(legacy_client, prefix)
    legacy["duplicates"] = sum(count - 1 for count in legacy_mail.values())
    legacy["due_never_reminded"] = len(population["due"] - set(legacy_mail))
    print(
        f"  nightly: single loop (today): {legacy['seconds']} s, {legacy['reminders_written']} reminders, "
        f"{legacy['due_never_reminded']} due people never reached",
        flush=True,
    )
    fresh_database("fj-bench-nightly")

    # 2. The fan-out through the emulators, on the default database.
    client = fresh_database("(default)")
    os.environ.pop("FJ_FIRESTORE_DATABASE", None)
    runtime.store.cache_clear()
    seed_population(client, catalog, people=people, organisations=ORGANISATIONS, now=now, prefix=prefix)
    settings = NightlySettings.from_env()
    figures: dict[str, Any] = {
        "people": people,
        "organisations": ORGANISATIONS,
        "due": len(population["due"]),
        "seed_seconds": seed_seconds,
        "page_size": settings.page_size,
        "single_loop_today": legacy,
    }
    runs = []
    for attempt in ("first", "again the same day"):
        run_id = f"{prefix}-{len(runs)}"
        started = time.perf_counter()
        enqueued = start_run(NightlyRuns(client), runtime.task_sink(), now, run_id, settings)
        enqueue_ms = round((time.perf_counter() - started) * 1000, 1)
        waited, state = wait_for_run(client, run_id, timeout=3600)
        runs.append(
            {
                "run": attempt,
                "enqueued_by_scheduler": len(enqueued),
                "enqueue_ms": enqueue_ms,
                "wall_seconds": round(waited + enqueue_ms / 1000, 1),
                **state.model_dump(exclude={"run_id"}),
            }
        )
        print(
            f"  nightly: fan-out ({attempt}): {runs[-1]['wall_seconds']} s, {state.tasks} tasks, "
            f"{state.reminders_sent} reminders, complete={state.complete}",
            flush=True,
        )
    mail = mail_per_person(client, prefix)
    days = sum(
        1 for org in population["organisations"] for _ in client.collection(f"organisations/{org}/daily").stream()
    )
    figures["fan_out"] = runs
    figures["reminders_written"] = sum(mail.values())
    figures["duplicates"] = sum(count - 1 for count in mail.values())
    figures["due_never_reminded"] = len(population["due"] - set(mail))
    figures["reminded_but_not_due"] = len(set(mail) - population["due"])
    figures["organisation_days_written"] = days
    print(
        f"  nightly: {figures['reminders_written']} reminders for {figures['due']} due, duplicates "
        f"{figures['duplicates']}, never reached {figures['due_never_reminded']}, org days {days}",
        flush=True,
    )
    fresh_database("(default)")
    return figures
