"""Wiring for entry points: the store, the configured extractor, the turn processor.

Configuration: every FJ_* knob is a field of ``factor_journal.settings.Settings`` (read once; the
configuration table in docs/configuration.md lists them); the Gemini extractor's own FJ_GEMINI_* variables are read by
``extraction.gemini.GeminiSettings``; the link secret by ``links.link_secret`` (Secret Manager in
production).  Set by the platform: GCLOUD_PROJECT, FIRESTORE_EMULATOR_HOST and CLOUD_TASKS_EMULATOR_HOST
under the emulators.

The store (``FactorJournalStore.connect``) is the process's one way to Firestore: under the emulators
its client connects to FIRESTORE_EMULATOR_HOST; in production it uses the function's service account.
(``firebase_admin.firestore.client()`` would ask for credentials the emulator
does not have.)
"""

from __future__ import annotations

import os
import threading
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any

from factor_journal.extraction.base import Extractor
from factor_journal.pipeline import TurnProcessor, recover_due_turns
from factor_journal.questions import IntentRouter, Writer
from factor_journal.settings import settings
from factor_journal.store import FactorJournalStore

DEFAULT_PROJECT = "demo-factor-journal"
ADMIN_APP = "factor-journal"
_ADMIN_LOCK = threading.Lock()


class ConfigurationError(RuntimeError):
    """The environment asks for something that cannot be built."""


def project_id() -> str:
    return os.environ.get("GCLOUD_PROJECT") or os.environ.get("GOOGLE_CLOUD_PROJECT") or DEFAULT_PROJECT


def make_extractor(kind: str | None = None) -> Extractor:
    """The extractor named by ``kind`` or FJ_EXTRACTOR: ``semantic`` (default, embedded model), ``rules``
    (alias ``offline``: the keyword rules) or ``gemini`` (Vertex AI)."""
    kind = (kind or settings().extractor).strip().lower()
    if kind == "semantic":
        from factor_journal.extraction.semantic import SemanticExtractor

        return SemanticExtractor()
    if kind in ("rules", "offline"):
        from factor_journal.extraction.offline import OfflineExtractor

        return OfflineExtractor()
    if kind == "gemini":
        from factor_journal.extraction.gemini import GeminiExtractor, GeminiSettings

        return GeminiExtractor(GeminiSettings.from_env())
    raise ConfigurationError(f"FJ_EXTRACTOR must be 'semantic', 'rules' (or 'offline') or 'gemini', got {kind!r}")


@lru_cache(maxsize=1)
def store() -> FactorJournalStore:
    """The process's store, over its one Firestore client (cached; ``reset()`` forgets it with the settings)."""
    return FactorJournalStore.connect(project_id(), settings().firestore_database)


@lru_cache(maxsize=1)
def turn_processor() -> TurnProcessor:
    return TurnProcessor(store(), make_extractor(), enforce_rate_limits=True)


def on_turn_written(user_id: str, session_id: str, turn_id: str, event_time: datetime | None) -> str:
    """The trigger's work: analyse the turn, unless the (re)delivery is too old to act on, in which case
    the turn is left to the recovery sweeper.  Returns the delivery's outcome status."""
    processor = turn_processor()
    if event_time is not None:
        age = datetime.now(UTC) - event_time
        if age > timedelta(hours=settings().max_event_age_hours):
            processor.park(user_id, session_id, turn_id, f"delivery {age} old: left to the recovery sweep")
            return "parked"
    return processor.process(user_id, session_id, turn_id).status


def recover_turns() -> dict[str, int]:
    """The recovery sweep (scheduled every few minutes): retry every turn whose retry time has come."""
    return recover_due_turns(turn_processor())


def reset() -> None:
    """Forget the cached store (and its client), processor and the settings (tests that change the environment)."""
    for cached in (store, turn_processor, settings):
        cached.cache_clear()


def app_url() -> str:
    return settings().app_url


def admin_app() -> Any:
    """The firebase-admin app (task queues); under the emulators it needs no credentials."""
    import firebase_admin

    with _ADMIN_LOCK:
        try:
            return firebase_admin.get_app(ADMIN_APP)
        except ValueError:
            return firebase_admin.initialize_app(options={"projectId": project_id()}, name=ADMIN_APP)


def task_sink() -> Any:
    from factor_journal.nightly import CloudTasksSink

    return CloudTasksSink(admin_app())


def daily_jobs(now: datetime | None = None, run_id: str | None = None, sink: Any = None) -> dict[str, object]:
    """The nightly scheduled function's work: start the run, i.e. enqueue its first tasks (nothing else).

    The organisation figures and the reminders are done by the task queue functions
    (``nightly_task``); see ``factor_journal.nightly``.  Starting the same day twice enqueues nothing new.
    """
    from factor_journal.nightly import default_run_id, start_run

    now = now or datetime.now(UTC)
    run_id = run_id or default_run_id(now)
    enqueued = start_run(store().nightly_runs, sink or task_sink(), now, run_id)
    return {"run_id": run_id, "enqueued": [task.key for task in enqueued]}


def nightly_worker(sink: Any = None) -> Any:
    from factor_journal.links import LinkSigner
    from factor_journal.nightly import NightlyWorker

    return NightlyWorker(store(), LinkSigner(store().links), app_url(), sink or task_sink())


def nightly_task(data: dict[str, Any]) -> dict[str, Any]:
    """A task queue function's work: one nightly task (a page of organisations or of reminders, or a day)."""
    return nightly_worker().run(data)


def daily_jobs_inline(now: datetime | None = None, run_id: str | None = None) -> dict[str, object]:
    """The whole nightly run in this process, through the same tasks (no task queue needed)."""
    from factor_journal.nightly import InlineQueue, progress

    queue = InlineQueue()
    started = daily_jobs(now, run_id, sink=queue)
    tasks = queue.drain(nightly_worker(queue))
    return {**started, "tasks": tasks, "progress": progress(store().nightly_runs, str(started["run_id"])).model_dump()}


def make_writer() -> Writer | None:
    """Gemini for answers and question phrasing when FJ_EXTRACTOR=gemini; None means the offline composer."""
    if settings().extractor.strip().lower() != "gemini":
        return None
    from factor_journal.extraction.gemini import GeminiExtractor, GeminiSettings, GeminiWriter

    return GeminiWriter(GeminiExtractor(GeminiSettings.from_env()))


def make_router() -> IntentRouter | None:
    """Gemini as the intent router of "Ask why" when FJ_EXTRACTOR=gemini (what a question is about, read against the
    catalog and the person's journal index); None means the embedded rules and search (docs/ask.md)."""
    if settings().extractor.strip().lower() != "gemini":
        return None
    from factor_journal.extraction.gemini import GeminiExtractor, GeminiIntentReader, GeminiSettings

    return GeminiIntentReader(GeminiExtractor(GeminiSettings.from_env()), store().catalog)
