"""The nightly job's paging and tasks on the emulator, in-process, in a database of their own
(``fj-nightly``, emptied first: the organisation pages list every organisation there is).

Each test seeds its people in a distant past of its own, years decreasing down the file,
so a scan's cut-off selects that test's people and no later test's.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter
from pydantic import ValidationError

from bench.nightly_bench import seed_population
from factor_journal.catalog import Catalog
from factor_journal.links import LinkSigner
from factor_journal.models import UserProfile
from factor_journal.nightly import (
    InlineQueue,
    NightlySettings,
    NightlyTask,
    NightlyWorker,
    progress,
    start_run,
)
from factor_journal.organisation import OrganisationDirectory
from factor_journal.reminders import (
    MAIL_COLLECTION,
    Cursor,
    ReminderPolicy,
    due_page,
    mail_id_for,
    send_due_reminders,
)
from factor_journal.repositories.links import LinkRecords
from factor_journal.store import FactorJournalStore

DATABASE = "fj-nightly"


@pytest.fixture(scope="module")
def nightly_client(firestore_client: firestore.Client) -> firestore.Client:
    host, project = firestore_client._emulator_host, firestore_client.project
    httpx.delete(f"http://{host}/emulator/v1/projects/{project}/databases/{DATABASE}/documents").raise_for_status()
    return firestore.Client(project=project, database=DATABASE)


@pytest.fixture
def store(nightly_client: firestore.Client, catalog: Catalog) -> FactorJournalStore:
    return FactorJournalStore(nightly_client, catalog)


@pytest.fixture
def signer(nightly_client) -> LinkSigner:
    return LinkSigner(LinkRecords(nightly_client), secret="test-secret")


def seed(store, year: int, people: int, organisations: int = 2) -> tuple[datetime, dict]:
    """``people`` members quiet since ``year`` (six in ten due at the returned ``now``)."""
    now = datetime(year, 6, 1, tzinfo=UTC)
    prefix = f"n{uuid.uuid4().hex[:8]}"
    population = seed_population(
        store.client, store.catalog, people=people, organisations=organisations, now=now, prefix=prefix
    )
    return now, population


def mail_counts(store, users: set[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    query = store.client.collection(MAIL_COLLECTION).where(filter=FieldFilter("kind", "==", "resume_reminder"))
    for snapshot in query.select(["user_id"]).stream():
        user = snapshot.get("user_id")
        if user in users:
            counts[user] = counts.get(user, 0) + 1
    return counts


def test_cursor_paging_reads_everyone_once_across_many_pages(store):
    now, population = seed(store, 1914, people=47)
    cutoff = now - timedelta(days=7)
    for scan, page_size in (("quiet", 4), ("silent", 2)):
        seen: list[str] = []
        cursor, pages = None, 0
        while True:
            page = due_page(store, scan, cutoff, cursor, page_size)
            pages += 1
            assert len(page.people) <= page_size
            seen.extend(p.user_id for p in page.people)
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
        assert len(seen) == len(set(seen))  # nobody twice
        assert set(seen) == population["scans"][scan]  # everyone of the scan, nobody else
        assert pages > 2  # beyond one page


def test_a_page_cursor_survives_a_round_trip_through_json_and_tied_timestamps(store):
    now = datetime(1913, 6, 1, tzinfo=UTC)
    tied = now - timedelta(days=30)
    users = [f"tie-{uuid.uuid4().hex[:8]}" for _ in range(5)]
    for user in users:
        store.client.document(f"users/{user}").set(UserProfile(user_id=user, last_active=tied).to_document())
    seen, cursor = [], None
    while True:
        page = due_page(store, "quiet", now - timedelta(days=7), cursor, 2)
        seen += [p.user_id for p in page.people if p.user_id in users]
        if page.next_cursor is None:
            break
        cursor = Cursor.model_validate_json(page.next_cursor.model_dump_json())
    assert sorted(seen) == sorted(users) and len(seen) == 5


def test_everyone_due_is_reminded_in_one_night_whatever_the_page_size(store, signer):
    now, population = seed(store, 1912, people=40)
    sent = send_due_reminders(store, signer, "https://app.example", now, ReminderPolicy(page_size=3))
    counts = mail_counts(store, set(population["members"]) | {f"{o}-manager" for o in population["organisations"]})
    assert set(counts) == population["due"] and set(counts.values()) == {1}
    assert len(sent) == len(population["due"])
    again = send_due_reminders(
        store, signer, "https://app.example", now + timedelta(hours=3), ReminderPolicy(page_size=3)
    )
    assert again == [] and mail_counts(store, population["due"]) == counts  # one per window
    mail = store.client.document(f"{MAIL_COLLECTION}/{mail_id_for(sorted(population['due'])[0], now)}").get()
    assert mail.exists and mail.get("to") == [f"{sorted(population['due'])[0]}@example.com"]


def test_the_nightly_tasks_cover_every_organisation_and_person_and_are_idempotent(store, signer):
    now, population = seed(store, 1911, people=60, organisations=7)
    queue = InlineQueue()
    worker = NightlyWorker(store, signer, "https://app.example", queue)
    settings = NightlySettings(page_size=7, org_page_size=3)
    run_id = f"t-{uuid.uuid4().hex[:8]}"
    first = start_run(store.nightly_runs, queue, now, run_id, settings)
    assert [t.kind for t in first] == ["organisations", "reminders", "reminders"]
    assert start_run(store.nightly_runs, queue, now, run_id, settings) == []  # the same run again: nothing new
    assert not progress(store.nightly_runs, run_id).complete
    tasks = queue.drain(worker)
    state = progress(store.nightly_runs, run_id)
    assert state.complete and state.tasks == tasks and state.executions == tasks
    members = set(population["members"]) | {f"{o}-manager" for o in population["organisations"]}
    assert set(mail_counts(store, members)) == population["due"]
    directory = OrganisationDirectory(store)
    day = now.strftime("%Y-%m-%d")
    for org in population["organisations"]:
        [figures] = [d for d in directory.history(org) if d.date == day]
        assert figures.people == sum(1 for member_org in population["org_of"].values() if member_org == org)

    # The same tasks again (a retried or duplicated delivery): they run, and write nothing twice.
    replay = [
        NightlyTask(kind="reminders", run_id=run_id, now=now, settings=settings, scan="quiet"),
        NightlyTask(kind="organisations", run_id=run_id, now=now, settings=settings),
    ]
    for task in replay:
        worker.run(task.model_dump(mode="json"))
    assert mail_counts(store, members) == dict.fromkeys(population["due"], 1)
    assert all(len([d for d in directory.history(org) if d.date == day]) == 1 for org in population["organisations"])
    again = progress(store.nightly_runs, run_id)
    assert again.executions == tasks + 2 and again.tasks == tasks


def test_an_organisation_that_no_longer_reads_is_skipped_with_its_reason_and_the_others_are_recorded(
    store, signer, caplog
):
    """A nameless organisation document (as a managers-list change on a mistyped id once created) sorts among
    the others on one page: their figures are recorded, every time the page runs, and the skip is recorded in the
    run's progress with the field that failed."""
    now, population = seed(store, 1910, people=12, organisations=3)
    organisations = sorted(population["organisations"])
    damaged = f"{organisations[0]}-typo"  # sorts right after the first: mid-page
    store.org_ref(damaged).set({"managers": []})
    try:
        queue = InlineQueue()
        worker = NightlyWorker(store, signer, "https://app.example", queue)
        run_id = f"t-{uuid.uuid4().hex[:8]}"
        settings = NightlySettings(page_size=50, org_page_size=100)  # every organisation on one page
        start_run(store.nightly_runs, queue, now, run_id, settings)
        queue.drain(worker)
        worker.run(NightlyTask(kind="organisations", run_id=run_id, now=now, settings=settings))  # a retry
        state = progress(store.nightly_runs, run_id)
        assert state.complete and state.skipped_organisations == {damaged: "name: missing"}
        directory = OrganisationDirectory(store)
        day = now.strftime("%Y-%m-%d")
        for org in organisations:
            [figures] = [d for d in directory.history(org) if d.date == day]
            assert figures.people == sum(1 for member_org in population["org_of"].values() if member_org == org)
        assert not list(store.org_ref(damaged).collection("daily").stream())
        assert f"organisation {damaged} is damaged (name: missing)" in caplog.text
    finally:
        store.org_ref(damaged).delete()  # the organisation pages of the tests below list every organisation


def test_a_malformed_task_is_refused_before_any_work():
    """``NightlyWorker.run`` validates its payload as a ``NightlyTask`` before it reads or writes anything: the
    refusal is the model's (pure)."""
    now = datetime.now(UTC).isoformat()
    for bad in (
        {"kind": "reminders", "run_id": "r1", "now": now},  # no scan
        {"kind": "everything", "run_id": "r1", "now": now},
        {"kind": "reminders", "run_id": "../x", "now": now, "scan": "quiet"},
        {"kind": "reminders", "run_id": "r1", "now": "2026-01-01T00:00:00", "scan": "quiet"},  # naive
        {"kind": "reminders", "run_id": "r1", "now": now, "scan": "quiet", "settings": {"page_size": 0}},
    ):
        with pytest.raises(ValidationError):
            NightlyTask.model_validate(bad)
    assert NightlyTask.model_validate({"kind": "reminders", "run_id": "r1", "now": now, "scan": "quiet"}).key == (
        "reminders-quiet-000000"
    )
    with pytest.raises(ValueError):
        ReminderPolicy(page_size=0)


def test_the_cli_runs_a_whole_night_inline_and_a_second_run_writes_nothing(store, monkeypatch, capsys):
    from factor_journal import cli, runtime

    _, population = seed(store, datetime.now(UTC).year, people=20)  # due now: six in ten
    monkeypatch.setenv("FJ_FIRESTORE_DATABASE", DATABASE)
    runtime.reset()  # the settings too: the database comes from them
    try:
        organisations = len(list(store.client.collection("organisations").select([]).stream()))
        assert cli.main(["daily", "--inline"]) == 0
        first = capsys.readouterr().out
        assert f"{organisations} organisations recorded" in first
        assert set(mail_counts(store, set(population["members"]))) >= population["due"]
        assert cli.main(["daily", "--inline"]) == 0
        assert "0 reminders queued" in capsys.readouterr().out
    finally:
        runtime.reset()  # the settings too: the database comes from them
