"""The nightly job end to end through the emulators: enqueued with firebase-admin, dispatched by the
Cloud Tasks emulator to the task queue functions running in the Functions emulator, on the default
database.  People are seeded in 1915 (a year of their own), so the scans select exactly them."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from firebase_admin import functions
from google.cloud import firestore

from bench.nightly_bench import mail_per_person, seed_population
from factor_journal import runtime
from factor_journal.catalog import Catalog
from factor_journal.nightly import CloudTasksSink, NightlySettings, NightlyTask, callable_body, progress, start_run
from factor_journal.reminders import mail_id_for
from factor_journal.repositories.nightly_runs import NightlyRuns
from waiting import wait_for

pytestmark = pytest.mark.functions

NOW = datetime(1915, 6, 1, 3, 0, tzinfo=UTC)
SETTINGS = NightlySettings(page_size=15, org_page_size=2)


@pytest.fixture(scope="module")
def population(trigger_client: firestore.Client, catalog: Catalog) -> dict:
    prefix = f"e2e{uuid.uuid4().hex[:6]}"
    seeded = seed_population(trigger_client, catalog, people=150, organisations=5, now=NOW, prefix=prefix)
    return {**seeded, "prefix": prefix}


def test_the_nightly_run_fans_out_through_cloud_tasks_and_reminds_each_due_person_once(trigger_client, population):
    sink = CloudTasksSink(runtime.admin_app())
    run_id, runs = f"e2e-{uuid.uuid4().hex[:8]}", NightlyRuns(trigger_client)
    first = start_run(runs, sink, NOW, run_id, SETTINGS)
    assert len(first) == 3  # the scheduler's whole job: a page of organisations, a page of each scan
    assert start_run(runs, sink, NOW, run_id, SETTINGS) == []  # the queue refuses the same tasks
    state = wait_for(lambda: (s := progress(runs, run_id)).complete and s, 240.0, "the nightly tasks", 0.5)
    assert state.tasks > 10  # 150 people in pages of 15, 5 organisations in pages of 2
    mail = mail_per_person(trigger_client, population["prefix"])
    assert set(mail) == population["due"] and set(mail.values()) == {1}
    day = NOW.strftime("%Y-%m-%d")
    for org in population["organisations"]:
        figures = trigger_client.document(f"organisations/{org}/daily/{day}").get()
        assert figures.exists and figures.get("people") == 30

    # Started again the same day (another run id, so the queue accepts every task): nothing new is written.
    again = f"e2e-{uuid.uuid4().hex[:8]}"
    start_run(runs, sink, NOW, again, SETTINGS)
    state = wait_for(lambda: (s := progress(runs, again)).complete and s, 240.0, "the nightly tasks", 0.5)
    assert state.reminders_sent == 0 and state.people_seen == len(population["scans"]["quiet"]) + len(
        population["scans"]["silent"]
    )
    assert mail_per_person(trigger_client, population["prefix"]) == mail


def test_a_task_delivered_twice_runs_twice_and_writes_once(trigger_client, population):
    later = NOW + timedelta(days=8)  # the window since the first test's reminders has passed
    run_id = f"dup-{uuid.uuid4().hex[:8]}"
    task = NightlyTask(
        kind="reminders", run_id=run_id, now=later, settings=NightlySettings(page_size=40), scan="silent"
    )
    queue = functions.task_queue(f"locations/europe-west1/functions/{task.queue}", app=runtime.admin_app())
    for _ in range(2):  # no task id: two distinct deliveries of the same work, possibly at once
        queue.enqueue(callable_body(task))
    marker = trigger_client.document(f"nightly_runs/{run_id}/tasks/{task.key}")
    wait_for(lambda: marker.get().exists and marker.get().get("executions") >= 2, 240.0, "both deliveries", 0.5)
    silent_due = population["scans"]["silent"] & population["due"]
    mail = mail_per_person(trigger_client, population["prefix"])
    assert silent_due and all(mail[user] == 2 for user in silent_due)  # one per window: the first test's, this one
    for user in silent_due:
        assert trigger_client.document(f"mail/{mail_id_for(user, later)}").get().exists
    others = population["due"] - silent_due
    assert all(mail[user] == 1 for user in others)
