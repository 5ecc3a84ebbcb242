"""Organisations: their documents and managers lists, roll-up shards and daily figures."""

from __future__ import annotations

from typing import Any

from google.cloud import firestore

from factor_journal.repositories.client import FirestoreClient
from factor_journal.repositories.paths import ORGANISATIONS, Paths


class OrganisationRecords:
    def __init__(self, client: FirestoreClient) -> None:
        self.client = client
        self.paths = Paths(client)

    def get(self, org_id: str) -> dict[str, Any] | None:
        snapshot = self.paths.organisation(org_id).get()
        return snapshot.to_dict() or {} if snapshot.exists else None

    def upsert(self, org_id: str, fields: dict[str, Any]) -> None:
        self.paths.organisation(org_id).set(fields, merge=True)

    def shard_rows(self, org_id: str) -> dict[str, Any]:
        """Every row of the organisation's roll-up shards by person id (one read per shard document)."""
        rows: dict[str, Any] = {}
        for snapshot in self.paths.organisation(org_id).collection("rollup").stream():
            rows.update(_rows_of(snapshot))
        return rows

    def write_day(self, org_id: str, date: str, figures: dict[str, Any]) -> None:
        self.paths.organisation(org_id).collection("daily").document(date).set(figures)

    def days(self, org_id: str, limit: int) -> list[dict[str, Any]]:
        """The newest ``limit`` daily figures."""
        query = (
            self.paths.organisation(org_id)
            .collection("daily")
            .order_by("date", direction=firestore.Query.DESCENDING)
            .limit(limit)
        )
        return [snapshot.to_dict() or {} for snapshot in query.stream()]

    def id_page(self, after: str | None, page_size: int) -> list[str]:
        """Organisation ids in id order after ``after``."""
        query = self.client.collection(ORGANISATIONS).select([]).order_by("__name__")
        if after is not None:
            query = query.start_after({"__name__": after})
        return [snapshot.id for snapshot in query.limit(page_size).stream()]


def _rows_of(snapshot: firestore.DocumentSnapshot) -> dict:
    """A shard's ``rows`` map ({} when the shard has none or it is not a map)."""
    try:
        rows = snapshot.get("rows")
    except KeyError:
        return {}
    return rows if isinstance(rows, dict) else {}
