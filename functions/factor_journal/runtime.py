"""Wiring for entry points: the Firestore client, the configured extractor, the turn processor.

Configuration (environment):
  FJ_EXTRACTOR      offline (default) | gemini
  FJ_GEMINI_*       see factor_journal.extraction.gemini.GeminiSettings
  GCLOUD_PROJECT    the Firebase project (set by the emulators and by Cloud Functions)
  FJ_FIRESTORE_DATABASE  the Firestore database id, "(default)" unless set
  FJ_APP_URL        the dashboard's address, for links in emails (default http://localhost:8501)
  FJ_LINK_SECRET    the secret resume links are signed with (required outside the emulators)
  FJ_REMINDER_INACTIVE_DAYS / FJ_REMINDER_WINDOW_DAYS   reminder policy (default 7 / 7)

Under the emulators ``google.cloud.firestore.Client`` connects to
FIRESTORE_EMULATOR_HOST; in production it uses the function's service account.
(``firebase_admin.firestore.client()`` would ask for credentials the emulator
does not have.)
"""

from __future__ import annotations

import os
from datetime import datetime, timedelta
from functools import lru_cache

from google.cloud import firestore

from factor_journal.extraction.base import Extractor
from factor_journal.pipeline import TurnProcessor
from factor_journal.store import FactorJournalStore

DEFAULT_PROJECT = "demo-factor-journal"


class ConfigurationError(RuntimeError):
    """The environment asks for something that cannot be built."""


def project_id() -> str:
    return os.environ.get("GCLOUD_PROJECT") or os.environ.get("GOOGLE_CLOUD_PROJECT") or DEFAULT_PROJECT


@lru_cache(maxsize=1)
def firestore_client() -> firestore.Client:
    return firestore.Client(project=project_id(), database=os.environ.get("FJ_FIRESTORE_DATABASE") or "(default)")


def make_extractor(kind: str | None = None) -> Extractor:
    """The extractor named by ``kind`` or FJ_EXTRACTOR: ``semantic`` (default, embedded model), ``rules``
    (alias ``offline``: the keyword rules) or ``gemini`` (Vertex AI)."""
    kind = (kind or os.environ.get("FJ_EXTRACTOR") or "semantic").strip().lower()
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
    return FactorJournalStore(firestore_client())


@lru_cache(maxsize=1)
def turn_processor() -> TurnProcessor:
    return TurnProcessor(store(), make_extractor())


def app_url() -> str:
    return os.environ.get("FJ_APP_URL", "http://localhost:8501")


def daily_jobs(now: datetime | None = None) -> dict[str, object]:
    """The nightly work: each organisation's daily figures, then the due reminder emails."""
    from factor_journal.links import LinkSigner
    from factor_journal.organisation import OrganisationDirectory
    from factor_journal.reminders import ReminderPolicy, send_due_reminders

    directory = OrganisationDirectory(store())
    days = [directory.record_day(org_id, now).model_dump() for org_id in directory.organisation_ids()]
    policy = ReminderPolicy(
        inactive_after=timedelta(days=float(os.environ.get("FJ_REMINDER_INACTIVE_DAYS", "7"))),
        window=timedelta(days=float(os.environ.get("FJ_REMINDER_WINDOW_DAYS", "7"))),
    )
    mail = send_due_reminders(store(), LinkSigner(firestore_client()), app_url(), now, policy)
    return {"organisations": days, "reminders": mail}


def make_writer() -> object | None:
    """Gemini for answers and question phrasing when FJ_EXTRACTOR=gemini; None means the offline composer."""
    if (os.environ.get("FJ_EXTRACTOR") or "offline").strip().lower() != "gemini":
        return None
    from factor_journal.extraction.gemini import GeminiExtractor, GeminiSettings, GeminiWriter

    return GeminiWriter(GeminiExtractor(GeminiSettings.from_env()))
