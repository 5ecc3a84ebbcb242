"""scripts/scheduler.py, the emulators' stand-in for Cloud Scheduler: when each job fires, what a call
carries, and the deployed scheduled functions run by it in the Functions emulator (the recovery sweep
healing a failed turn, the nightly run for the day it was scheduled for)."""

from __future__ import annotations

import importlib.util
import json
import sys
import threading
import uuid
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from bench.nightly_bench import mail_per_person, seed_population
from factor_journal.nightly import default_run_id, progress
from factor_journal.repositories.nightly_runs import NightlyRuns
from factor_journal.store import FactorJournalStore
from waiting import wait_for

SPEC = importlib.util.spec_from_file_location(
    "scheduler", Path(__file__).resolve().parents[1] / "scripts" / "scheduler.py"
)
scheduler = importlib.util.module_from_spec(SPEC)  # type: ignore[arg-type]
sys.modules["scheduler"] = scheduler
SPEC.loader.exec_module(scheduler)  # type: ignore[union-attr]

Job, SchedulerError = scheduler.Job, scheduler.SchedulerError
SWEEP = Job("recover_turns", "europe-west1", "*/5 * * * *", None)
NIGHTLY = Job("nightly_rollups_and_reminders", "europe-west1", "0 7 * * *", "Europe/Berlin")


def test_jobs_fire_at_their_cron_times_in_their_time_zone():
    assert SWEEP.next_after(datetime(2026, 11, 26, 10, 3, 20, tzinfo=UTC)) == datetime(2026, 11, 26, 10, 5, tzinfo=UTC)
    assert SWEEP.next_after(datetime(2026, 11, 26, 10, 5, tzinfo=UTC)) == datetime(2026, 11, 26, 10, 10, tzinfo=UTC)
    # 07:00 in Berlin: 06:00 UTC in winter, 05:00 UTC in summer
    assert NIGHTLY.next_after(datetime(2026, 11, 26, 6, 30, tzinfo=UTC)) == datetime(2026, 11, 27, 6, 0, tzinfo=UTC)
    assert NIGHTLY.next_after(datetime(2026, 7, 1, 4, 0, tzinfo=UTC)) == datetime(2026, 7, 1, 5, 0, tzinfo=UTC)


def test_a_schedule_that_is_not_unix_cron_is_refused_by_name():
    with pytest.raises(SchedulerError, match="recover_turns: schedule 'every 5 minutes' is not unix-cron"):
        Job("recover_turns", "europe-west1", "every 5 minutes", None).next_after(datetime.now(UTC))


class Recorder(BaseHTTPRequestHandler):
    """A function endpoint that records Cloud Scheduler's calls; ``fail`` names jobs that answer 500; with
    ``generation`` set, the functions were reloaded that often and the emulator's 404 lists the valid keys; the
    generations in ``off`` are still on record but switched off (the emulator answers 204, running nothing)."""

    calls: list[tuple[str, dict[str, str]]] = []
    fail: set[str] = set()
    generation = 0
    off: set[int] = set()

    def do_POST(self) -> None:  # noqa: N802
        self.calls.append((self.path, {name.lower(): value for name, value in self.headers.items()}))
        if any(self.path.endswith(f"-{generation}") for generation in self.off):
            self.send_response(204)
            self.end_headers()
            return
        if not self.path.endswith(f"-{self.generation}"):
            self.send_response(404)
            self.end_headers()
            keys = sorted({*self.off, self.generation})
            valid = ", ".join([*(f"europe-west1-recover_turns-{g}" for g in keys), "europe-west1-unsubscribe"])
            self.wfile.write(f"Function does not exist, valid functions are: {valid}".encode())
            return
        failing = any(name in self.path for name in self.fail)
        self.send_response(500 if failing else 200)
        self.end_headers()
        self.wfile.write(b"boom" if failing else b"ok")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def endpoint():
    Recorder.calls, Recorder.fail, Recorder.generation, Recorder.off = [], set(), 0, set()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_run_calls_each_job_in_time_order_with_cloud_schedulers_headers_and_goes_on_after_a_failure(endpoint):
    clock = [datetime(2026, 11, 26, 5, 58, tzinfo=UTC).timestamp()]
    Recorder.fail = {"recover_turns"}  # a failing call is logged; the job fires again at its next time

    scheduler.run(
        endpoint,
        "demo-p",
        [NIGHTLY, SWEEP],
        clock=lambda: clock[0],
        sleep=lambda seconds: clock.__setitem__(0, clock[0] + seconds),
        rounds=4,
    )

    paths = [path for path, _ in Recorder.calls]
    assert paths == [
        "/demo-p/europe-west1/nightly_rollups_and_reminders-0",  # 06:00 UTC is 07:00 in Berlin (same time: by name)
        "/demo-p/europe-west1/recover_turns-0",  # 06:00 UTC
        "/demo-p/europe-west1/recover_turns-0",  # 06:05
        "/demo-p/europe-west1/recover_turns-0",  # 06:10
    ]
    headers = Recorder.calls[0][1]
    assert headers["x-cloudscheduler-jobname"] == "firebase-schedule-nightly_rollups_and_reminders-europe-west1"
    assert headers["x-cloudscheduler-scheduletime"] == "2026-11-26T06:00:00Z"
    assert [h["x-cloudscheduler-scheduletime"] for _, h in Recorder.calls[1:]] == [
        "2026-11-26T06:00:00Z",
        "2026-11-26T06:05:00Z",
        "2026-11-26T06:10:00Z",
    ]
    with pytest.raises(SchedulerError, match="recover_turns answered 500: boom"):
        scheduler.fire(endpoint, "demo-p", SWEEP, datetime.now(UTC))


# Through the emulators: the deployed scheduled functions, called as Cloud Scheduler would --------------


@pytest.fixture
def functions_origin() -> str:
    return scheduler.functions_origin()


@pytest.mark.functions
def test_the_functions_emulator_loads_the_scheduled_functions_with_their_schedules(functions_origin):
    jobs = {job.name: job for job in scheduler.discover(functions_origin)}
    assert jobs["recover_turns"] == SWEEP
    assert jobs["nightly_rollups_and_reminders"] == NIGHTLY


@pytest.mark.functions
def test_the_scheduled_sweep_heals_a_failed_turn_without_a_person(trigger_client, catalog, make_user, functions_origin):
    store = FactorJournalStore(trigger_client, catalog)
    user = make_user(store)
    session = store.start_session(user)
    due = datetime.now(UTC) + timedelta(seconds=20)  # the trigger's delivery comes well before (a cold start: ~6 s)
    failed = {  # as an attempt that hit a model outage left it: failed, due again in 20 seconds
        "status": "failed",
        "attempts": 1,
        "error": "model unavailable",
        "error_kind": "transient",
        "next_attempt_at": due,
        "retry_at": due,
    }
    turn = store.turns(user, session).document()
    turn.set(
        {
            "role": "user",
            "text": "Our data is all over the place, 5 different systems",
            "created_at": datetime.now(UTC),
            "extraction": failed,
        }
    )
    wait_for(lambda: datetime.now(UTC) > due + timedelta(seconds=1), 30, "the retry time", 0.5)
    assert turn.get().get("extraction.status") == "failed"  # the trigger left it for its retry time

    scheduler.fire(functions_origin, "demo-factor-journal", SWEEP, datetime.now(UTC))  # returns once it ran

    outcome = turn.get().get("extraction")
    assert outcome["status"] == "processed" and outcome["attempts"] == 2, outcome
    assert store.summary(user).factors["data_infrastructure"].is_assessed


@pytest.mark.functions
def test_the_scheduled_nightly_run_works_for_the_day_it_was_scheduled_for(trigger_client, catalog, functions_origin):
    scheduled_for = datetime(1917, 3, 1, 6, 0, tzinfo=UTC)  # a year of its own: no other test's run reaches them
    prefix = f"sch{uuid.uuid4().hex[:6]}"
    population = seed_population(trigger_client, catalog, people=30, organisations=2, now=scheduled_for, prefix=prefix)

    scheduler.fire(functions_origin, "demo-factor-journal", NIGHTLY, scheduled_for)

    run_id, runs = default_run_id(scheduled_for), NightlyRuns(trigger_client)
    state = wait_for(lambda: (s := progress(runs, run_id)).complete and s, 240.0, "the nightly run", 0.5)
    assert state.reminders_sent >= len(population["due"]) > 0  # earlier years' people are quiet in 1917 too
    mail = mail_per_person(trigger_client, prefix)  # no other run: the emulator's readiness probe starts none
    assert set(mail) == population["due"] and set(mail.values()) == {1}
    for org in population["organisations"]:
        figures = trigger_client.document(f"organisations/{org}/daily/{scheduled_for:%Y-%m-%d}").get()
        assert figures.exists and figures.get("people") == 15, json.dumps(figures.to_dict(), default=str)


def test_a_reloaded_function_is_called_under_its_new_trigger_key(endpoint):
    Recorder.generation = 3  # the Functions emulator reloaded the functions three times
    assert scheduler.fire(endpoint, "demo-p", SWEEP, datetime.now(UTC)) == "ok"
    assert [path for path, _ in Recorder.calls] == [
        "/demo-p/europe-west1/recover_turns-0",
        "/demo-p/europe-west1/recover_turns-3",
    ]
    with pytest.raises(SchedulerError, match="nightly_rollups_and_reminders answered 404"):
        scheduler.fire(endpoint, "demo-p", NIGHTLY, datetime.now(UTC))  # not among the valid keys


def test_a_function_switched_off_and_on_again_is_called_under_its_newest_key(endpoint):
    """The emulator's hub switched the functions off and on (tests/test_self_healing.py): the old key is still on
    record, off, and answers 204 with nothing run; the newest generation is called instead, and while every
    generation is off the call fails (it ran nothing)."""
    Recorder.generation, Recorder.off = 1, {0}
    assert scheduler.fire(endpoint, "demo-p", SWEEP, datetime.now(UTC)) == "ok"
    assert [path for path, _ in Recorder.calls][-1] == "/demo-p/europe-west1/recover_turns-1"
    Recorder.off = {0, 1}
    with pytest.raises(SchedulerError, match="recover_turns is switched off in the Functions emulator: nothing ran"):
        scheduler.fire(endpoint, "demo-p", SWEEP, datetime.now(UTC))


def test_a_test_fires_only_the_jobs_it_names_and_on_a_schedule_of_seconds():
    [fast] = scheduler.chosen([NIGHTLY, SWEEP], ["recover_turns"], ["recover_turns=* * * * * */5"])
    assert (fast.name, fast.schedule) == ("recover_turns", "* * * * * */5")
    assert fast.next_after(datetime(2026, 11, 26, 10, 3, 21, tzinfo=UTC)) == datetime(
        2026, 11, 26, 10, 3, 25, tzinfo=UTC
    )
    assert scheduler.chosen([NIGHTLY, SWEEP], None, []) == [NIGHTLY, SWEEP]
    with pytest.raises(SchedulerError, match="no scheduled function 'recover'"):
        scheduler.chosen([SWEEP], ["recover"], [])
    with pytest.raises(SchedulerError, match="is not unix-cron"):
        scheduler.chosen([SWEEP], None, ["recover_turns=every 5 seconds"])
