"""Fixtures of the rules tests: Auth-emulator users and a seeded world of their documents.

A world is fresh Auth-emulator accounts (so fresh uids), uuid-suffixed organisation, session,
entry, turn, link and mail ids, all seeded in one batch with admin access (``trigger_client``,
which bypasses the rules), so worlds never see each other's data.  ``world`` is shared by the
tests of the module (they only read, or write what the rules must refuse and then check nothing
changed); a test that changes the world on purpose (a manager removed, a person moved) takes
``fresh_world``.
"""

from __future__ import annotations

import sys
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from google.cloud import firestore
from google.cloud.firestore_v1.vector import Vector

sys.path.insert(0, str(Path(__file__).parent))

from rules_client import AdminRead, World, sign_up  # noqa: E402

DAY = "2026-03-14"
OTHER_DAY = "2026-03-15"
FACTOR = "data_quality"
OTHER_FACTOR = "model_monitoring"

# Who is who.  Org A: alice and amir (members, assessed), ada (member, registered but not yet
# assessed: no summary) and mona (A's manager: listed in its `managers`).  Org B: bob (member) and
# bea (B's manager).  No organisation: carl (member) and nora (role manager, but of no
# organisation).  max says `role: manager` and belongs to A, but A's `managers` list does not
# name him (never added, or removed with the role left as it was); lena is listed in A's
# `managers` with `role: member` (the list decides, not the role).  newcomer has an account but
# no profile at all.
PROFILES: dict[str, tuple[str | None, str]] = {
    "alice": ("A", "member"),
    "amir": ("A", "member"),
    "ada": ("A", "member"),
    "mona": ("A", "manager"),
    "bob": ("B", "member"),
    "bea": ("B", "manager"),
    "carl": (None, "member"),
    "nora": (None, "manager"),
    "max": ("A", "manager"),
    "lena": ("A", "member"),
}
MANAGERS = {"A": ["mona", "lena"], "B": ["bea"]}
UNASSESSED = {"ada"}
PEOPLE = [*PROFILES, "newcomer"]


def _seed(db: firestore.Client, world: World) -> None:
    batch = db.batch()
    ids = world.ids
    created = datetime(2026, 3, 14, 9, 30, tzinfo=UTC)
    for org_key, org_id in world.orgs.items():
        managers = [world.uid(name) for name in MANAGERS[org_key]]
        batch.set(db.document(f"organisations/{org_id}"), {"name": f"Organisation {org_key}", "managers": managers})
        batch.set(db.document(f"organisations/{org_id}/figures/shard-00"), {"c": {"n|exploratory:0:0": 1}})
        batch.set(db.document(f"organisations/{org_id}/daily/{DAY}"), {"date": DAY, "people": 4})
    for name, (org_key, role) in PROFILES.items():
        uid = world.uid(name)
        user = f"users/{uid}"
        org_id = world.orgs[org_key] if org_key else None
        profile = {"user_id": uid, "display_name": name.title(), "email": f"{name}@example.com"}
        batch.set(db.document(user), profile | {"org_id": org_id, "role": role})
        if org_id:  # the person's roll-up row, as a change writes it
            batch.set(db.document(f"organisations/{org_id}/people/{uid}"), {"user_id": uid, "display_name": name})
        if name in UNASSESSED:
            continue
        batch.set(db.document(f"{user}/metadata/assessment"), {"assessment_summary": {"overall": {}}})
        batch.set(db.document(f"{user}/metadata/preferences"), {"reminders": True})
        batch.set(db.document(f"{user}/snapshots/{DAY}"), {"date": DAY, "overall": 40})
        batch.set(db.document(f"{user}/factors/{FACTOR}"), {"factor_id": FACTOR, "current_value": 20})
        batch.set(db.document(f"{user}/factors/{FACTOR}/journal/{ids['entry']}"), {"new_value": 20})
        vector = {"user_id": uid, "entry_id": ids["entry"], "embedding": Vector([0.6, 0.8]), "embedding_model": "m"}
        batch.set(db.document(f"{user}/journal_vectors/{ids['entry']}"), vector)
        answer = {"user_id": uid, "turn_id": ids["turn"], "embedding": Vector([0.8, 0.6]), "embedding_model": "m"}
        batch.set(db.document(f"{user}/answer_vectors/{ids['answer']}"), answer)
        aside = {"user_id": uid, "kind": "journal_entry", "path": f"{user}/factors/{FACTOR}/journal/x", "error": "…"}
        batch.set(db.document(f"{user}/set_aside/{ids['entry']}"), aside | {"stored": {"new_value": 20}})
        batch.set(db.document(f"{user}/conversations/{ids['session']}"), {"session_id": ids["session"]})
        turn = {"role": "assistant", "text": "How is your data quality?", "created_at": created}
        batch.set(db.document(f"{user}/conversations/{ids['session']}/turns/{ids['turn']}"), turn)
        batch.set(db.document(f"{user}/conversations/{ids['session']}/lifts/{ids['turn']}"), {"lifted_at": created})
    link = {"user_id": world.uid("alice"), "created_at": created}
    batch.set(db.document(f"resume_links/{ids['link']}"), link)
    batch.set(db.document(f"mail/{ids['mail']}"), {"to": ["alice@example.com"], "message": {"subject": "Hi"}})
    batch.set(db.document(f"unlisted/{ids['misc']}"), {"anything": "else"})
    batch.commit()


def _world(trigger_client: firestore.Client) -> World:
    with ThreadPoolExecutor(max_workers=len(PEOPLE)) as pool:
        people = dict(zip(PEOPLE, pool.map(sign_up, PEOPLE), strict=True))
    suffix = uuid.uuid4().hex[:10]
    orgs = {"A": f"org-a-{suffix}", "B": f"org-b-{suffix}"}
    ids = {
        key: f"{key}-{uuid.uuid4().hex[:10]}" for key in ("session", "turn", "entry", "answer", "link", "mail", "misc")
    }
    ids |= {"day": DAY, "other_day": OTHER_DAY, "factor": FACTOR, "other_factor": OTHER_FACTOR}
    world = World(people=people, orgs=orgs, ids=ids)
    _seed(trigger_client, world)
    return world


@pytest.fixture(scope="module")
def world(trigger_client: firestore.Client) -> World:
    """A freshly signed-up cast with their documents seeded in ``(default)``, shared by the module."""
    return _world(trigger_client)


@pytest.fixture
def fresh_world(trigger_client: firestore.Client) -> World:
    """A world of this test's own, for tests that change who manages or belongs where."""
    return _world(trigger_client)


@pytest.fixture
def admin_read(trigger_client: firestore.Client) -> AdminRead:
    """Reads a document with admin access (bypassing rules), to check what a write really stored."""

    def read(path: str) -> dict[str, Any] | None:
        return trigger_client.document(path).get().to_dict()

    return read
