"""Nightly runs: ``nightly_runs/{run}`` and one marker per finished task (``.../tasks/{key}``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from google.cloud import firestore

from factor_journal.repositories.client import FirestoreClient
from factor_journal.repositories.paths import RUNS_COLLECTION as RUNS_COLLECTION


class NightlyRuns:
    def __init__(self, client: FirestoreClient) -> None:
        self.client = client

    def _run(self, run_id: str) -> firestore.DocumentReference:
        return self.client.collection(RUNS_COLLECTION).document(run_id)

    def start(self, run_id: str, now: datetime, settings: dict[str, Any]) -> None:
        self._run(run_id).set({"now": now, "settings": settings, "started_at": firestore.SERVER_TIMESTAMP}, merge=True)

    def mark_done(self, run_id: str, key: str, marker: dict[str, Any]) -> None:
        """Record a finished task (counting its executions: a task may run more than once)."""
        self._run(run_id).collection("tasks").document(key).set(
            {**marker, "finished_at": firestore.SERVER_TIMESTAMP, "executions": firestore.Increment(1)}, merge=True
        )

    def markers(self, run_id: str) -> list[dict[str, Any]]:
        return [snapshot.to_dict() or {} for snapshot in self._run(run_id).collection("tasks").stream()]
