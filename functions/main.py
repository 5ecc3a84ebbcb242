"""Cloud Functions entry points: wiring only; the work lives in the factor_journal package."""

from factor_journal import runtime
from firebase_functions import firestore_fn, options, params, scheduler_fn

options.set_global_options(region="europe-west1", memory=options.MemoryOption.MB_512, timeout_sec=120)

# Signs resume and manager links. In production a Secret Manager secret (`firebase functions:secrets:set
# FJ_LINK_SECRET`), exposed to the functions that declare it as the environment variable FJ_LINK_SECRET;
# under the emulators it comes from functions/.secret.local (see .secret.local.example).
LINK_SECRET = params.SecretParam("FJ_LINK_SECRET")


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


@scheduler_fn.on_schedule(
    schedule="every day 07:00", timezone=scheduler_fn.Timezone("Europe/Berlin"), secrets=[LINK_SECRET]
)
def nightly_rollups_and_reminders(event: scheduler_fn.ScheduledEvent) -> None:
    """Record each organisation's daily figures and queue reminder emails for people who went quiet."""
    runtime.daily_jobs()
