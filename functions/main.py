"""Cloud Functions entry points: wiring only; the work lives in the factor_journal package."""

from firebase_functions import firestore_fn, options, params, scheduler_fn

from factor_journal import runtime

options.set_global_options(region="europe-west1", memory=options.MemoryOption.MB_512, timeout_sec=120)

# Signs resume and manager links. In production a Secret Manager secret (`firebase functions:secrets:set
# FJ_LINK_SECRET`), exposed to the functions that declare it as the environment variable FJ_LINK_SECRET;
# under the emulators it comes from functions/.secret.local (see .secret.local.example).
LINK_SECRET = params.SecretParam("FJ_LINK_SECRET")


@firestore_fn.on_document_created(document="users/{uid}/conversations/{session_id}/turns/{turn_id}")
def on_turn_created(event: firestore_fn.Event[firestore_fn.DocumentSnapshot | None]) -> None:
    """A conversation turn was written: analyse it into factor updates (exactly once).

    Failures are retried by the recovery sweep below (firebase-functions' Firestore triggers have no
    event retry); a delivery too old to act on is parked for it."""
    runtime.on_turn_written(event.params["uid"], event.params["session_id"], event.params["turn_id"], event.time)


@scheduler_fn.on_schedule(schedule="every 5 minutes")
def recover_turns(event: scheduler_fn.ScheduledEvent) -> None:
    """Retry the turns whose retry time has come (failed ones due again, claims whose holder died) and
    analyse turns no delivery ever claimed."""
    runtime.recover_turns()


@scheduler_fn.on_schedule(
    schedule="every day 07:00", timezone=scheduler_fn.Timezone("Europe/Berlin"), secrets=[LINK_SECRET]
)
def nightly_rollups_and_reminders(event: scheduler_fn.ScheduledEvent) -> None:
    """Record each organisation's daily figures and queue reminder emails for people who went quiet."""
    runtime.daily_jobs()
