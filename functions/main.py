"""Cloud Functions entry points: wiring only; the work lives in the factor_journal package."""

from factor_journal import runtime
from factor_journal.reminders import UnsubscribeLinks, one_click_response
from firebase_functions import firestore_fn, https_fn, options, scheduler_fn

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
    """Record each organisation's daily figures and queue reminder emails for people who went quiet."""
    runtime.daily_jobs()


@https_fn.on_request()
def unsubscribe(request: https_fn.Request) -> https_fn.Response:
    """One-click unsubscribe from a reminder's List-Unsubscribe header (RFC 8058 POST, or GET); no sign-in."""
    status, body = one_click_response(runtime.store(), UnsubscribeLinks(), request.method, request.args.get("u"))
    return https_fn.Response(body, status=status, mimetype="text/html")
