"""Cloud Functions entry points: wiring only; the work lives in the factor_journal package."""

from typing import Any

from factor_journal import nightly, runtime
from firebase_functions import firestore_fn, options, scheduler_fn, tasks_fn

options.set_global_options(region="europe-west1", memory=options.MemoryOption.MB_512, timeout_sec=120)


@firestore_fn.on_document_created(document="users/{uid}/conversations/{session_id}/turns/{turn_id}")
def on_turn_created(event: firestore_fn.Event[firestore_fn.DocumentSnapshot | None]) -> None:
    """A conversation turn was written: analyse it into factor updates (exactly once)."""
    snapshot = event.data
    runtime.turn_processor().process(
        event.params["uid"],
        event.params["session_id"],
        event.params["turn_id"],
        snapshot.to_dict() if snapshot is not None else None,
    )


@scheduler_fn.on_schedule(schedule="every day 07:00", timezone=scheduler_fn.Timezone("Europe/Berlin"))
def nightly_rollups_and_reminders(event: scheduler_fn.ScheduledEvent) -> None:
    """Start the nightly run: enqueue its first tasks (the task queue functions below do the work)."""
    runtime.daily_jobs()


# Task queue functions: a Cloud Tasks queue per function, named after it (hence no underscores).
# Retries: a failed task is retried with exponential backoff; every task is idempotent per day.
NIGHTLY_RETRY = options.RetryConfig(max_attempts=5, min_backoff_seconds=10, max_backoff_seconds=300, max_doublings=4)


@tasks_fn.on_task_dispatched(
    region=nightly.REGION, timeout_sec=540, retry_config=NIGHTLY_RETRY,
    rate_limits=options.RateLimits(max_concurrent_dispatches=4, max_dispatches_per_second=10),
)  # fmt: skip
def nightlyOrganisations(request: tasks_fn.CallableRequest[Any]) -> dict[str, Any]:  # noqa: N802
    """A page of organisations: enqueues the next page, then records each one's daily figures."""
    return runtime.nightly_task(request.data)


@tasks_fn.on_task_dispatched(
    region=nightly.REGION, timeout_sec=540, retry_config=NIGHTLY_RETRY,
    rate_limits=options.RateLimits(max_concurrent_dispatches=8, max_dispatches_per_second=20),
)  # fmt: skip
def nightlyReminders(request: tasks_fn.CallableRequest[Any]) -> dict[str, Any]:  # noqa: N802
    """A page of people who went quiet: enqueues the next page, then queues their reminder emails."""
    return runtime.nightly_task(request.data)
