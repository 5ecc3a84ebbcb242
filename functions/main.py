"""Cloud Functions entry points: wiring only; the work lives in the factor_journal package."""

from typing import Any

from firebase_functions import firestore_fn, https_fn, options, params, scheduler_fn, tasks_fn

from factor_journal import nightly, runtime
from factor_journal.reminders import UnsubscribeLinks, one_click_response

options.set_global_options(region="europe-west1", memory=options.MemoryOption.MB_512, timeout_sec=120)

# Signs and checks resume, manager and unsubscribe links. In production a Secret Manager secret (`firebase
# functions:secrets:set FJ_LINK_SECRET`), exposed only to the functions that declare it (as the environment
# variable FJ_LINK_SECRET): every function that signs or checks a link declares it, and no other does.
# Under the emulators it comes from functions/.secret.local (see .secret.local.example).
LINK_SECRET = params.SecretParam("FJ_LINK_SECRET")


@firestore_fn.on_document_created(document="users/{uid}/conversations/{session_id}/turns/{turn_id}")
def on_turn_created(event: firestore_fn.Event[firestore_fn.DocumentSnapshot | None]) -> None:
    """A conversation turn was written: analyse it into factor updates (exactly once).

    Failures are retried by the recovery sweep below (firebase-functions' Firestore triggers have no
    event retry); a delivery too old to act on is parked for it."""
    runtime.on_turn_written(event.params["uid"], event.params["session_id"], event.params["turn_id"], event.time)


@firestore_fn.on_document_created(document="users/{uid}/conversations/{session_id}/lifts/{turn_id}")
def on_screen_lifted(event: firestore_fn.Event[firestore_fn.DocumentSnapshot | None]) -> None:
    """A person said an answer the screen set aside was about them after all (``store.ledger.lift_screen``, which
    made the turn unanalysed again): analyse it, without that screen, exactly as a new turn (the sweep retries)."""
    runtime.on_turn_written(event.params["uid"], event.params["session_id"], event.params["turn_id"], event.time)


def from_cloud_scheduler(event: scheduler_fn.ScheduledEvent) -> bool:
    """Cloud Scheduler names its job on every call; the Functions emulator's readiness probe (a bare GET to a
    starting worker, which scheduler_fn runs like any call) does not, and must not start a run."""
    return bool(event.job_name)


# Schedules are unix-cron; under the emulators scripts/scheduler.py calls them (the suite has no Cloud Scheduler).
@scheduler_fn.on_schedule(schedule="*/5 * * * *")
def recover_turns(event: scheduler_fn.ScheduledEvent) -> None:
    """Retry the turns whose retry time has come (failed ones due again, claims whose holder died) and
    analyse turns no delivery ever claimed."""
    if from_cloud_scheduler(event):
        runtime.recover_turns()


@scheduler_fn.on_schedule(schedule="0 7 * * *", timezone=scheduler_fn.Timezone("Europe/Berlin"))
def nightly_rollups_and_reminders(event: scheduler_fn.ScheduledEvent) -> None:
    """Start the nightly run for the day it was scheduled for: enqueue its first tasks (the task queue
    functions below do the work)."""
    if from_cloud_scheduler(event):
        runtime.daily_jobs(now=event.schedule_time)


@https_fn.on_request(secrets=[LINK_SECRET])
def unsubscribe(request: https_fn.Request) -> https_fn.Response:
    """One-click unsubscribe from a reminder's List-Unsubscribe header: an RFC 8058 POST opts out; a GET only
    shows a confirmation whose button POSTs (scanners and previewers GET every link); no sign-in."""
    status, body = one_click_response(runtime.store(), UnsubscribeLinks(), request.method, request.args.get("u"))
    return https_fn.Response(body, status=status, mimetype="text/html")


# Task queue functions: a Cloud Tasks queue per function, named after it (hence no underscores).
# Retries: a failed task is retried with exponential backoff; every task is idempotent per day.
NIGHTLY_RETRY = options.RetryConfig(max_attempts=5, min_backoff_seconds=10, max_backoff_seconds=300, max_doublings=4)


@tasks_fn.on_task_dispatched(
    region=nightly.REGION,
    timeout_sec=540,
    retry_config=NIGHTLY_RETRY,
    secrets=[LINK_SECRET],
    rate_limits=options.RateLimits(max_concurrent_dispatches=4, max_dispatches_per_second=10),
)
def nightlyOrganisations(request: tasks_fn.CallableRequest[Any]) -> dict[str, Any]:  # noqa: N802
    """A page of organisations: enqueues the next page, then records each one's daily figures."""
    return runtime.nightly_task(request.data)


@tasks_fn.on_task_dispatched(
    region=nightly.REGION,
    timeout_sec=540,
    retry_config=NIGHTLY_RETRY,
    secrets=[LINK_SECRET],
    rate_limits=options.RateLimits(max_concurrent_dispatches=8, max_dispatches_per_second=20),
)
def nightlyReminders(request: tasks_fn.CallableRequest[Any]) -> dict[str, Any]:  # noqa: N802
    """A page of people who went quiet: enqueues the next page, then queues their reminder emails."""
    return runtime.nightly_task(request.data)
