"""Seed the emulators with the demo organisation by replaying scripted conversations
through the real trigger: each turn is written like a client writes it, and the
Functions emulator's trigger turns it into factors, journal entries and summaries.

    python -m demo.seed [--timeout SECONDS]
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from factor_journal import runtime
from factor_journal.cli import issue_link
from factor_journal.models import UserProfile
from factor_journal.organisation import OrganisationDirectory
from factor_journal.store import FactorJournalStore

SCRIPT = Path(__file__).with_name("conversations.yaml")
TURN_SPACING = timedelta(seconds=90)


def load_script(path: Path = SCRIPT) -> dict[str, Any]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def seed(store: FactorJournalStore, script: dict[str, Any], timeout: float = 60.0) -> list[str]:
    """Register the organisation's people and replay their sessions; returns the seeded user ids."""
    organisation = script["organisation"]
    manager = organisation["manager"]
    directory = OrganisationDirectory(store)
    directory.create(organisation["id"], organisation["name"])
    store.register_user(
        UserProfile(
            user_id=manager["user_id"],
            display_name=manager["display_name"],
            email=manager["email"],
            org_id=organisation["id"],
        )
    )
    directory.assign_manager(organisation["id"], manager["user_id"])
    now = datetime.now(UTC)
    seeded = []
    for person in script["users"]:
        user = person["user_id"]
        store.register_user(
            UserProfile(
                user_id=user, display_name=person["display_name"], email=person["email"], org_id=organisation["id"]
            )
        )
        for session in person.get("sessions", []):
            if store.session_data(user, session["id"]) is not None:
                continue  # already seeded
            started = now - timedelta(days=session["days_ago"])
            store.start_session(user, session["id"], started_at=started)
            for index, (role, text) in enumerate(session["turns"]):
                turn = store.add_turn(user, session["id"], role, text, created_at=started + index * TURN_SPACING)
                if role == "user":
                    status = store.wait_for_analysis(user, session["id"], turn, timeout)
                    if status is None:
                        raise TimeoutError(
                            f"the trigger did not analyse {user}/{session['id']}/{turn} within {timeout:.0f}s"
                        )
                    print(f"  {user:12} {session['id']:15} {status:9} {text[:60]}", flush=True)
        seeded.append(user)
    return seeded


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m demo.seed", description=__doc__)
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for each turn's analysis")
    args = parser.parse_args(argv)
    store = runtime.store()
    print("Seeding the demo organisation through the trigger …", flush=True)
    users = seed(store, load_script(), args.timeout)
    for user in users:
        summary = store.summary(user)
        if summary:
            overall = summary.overall
            print(
                f"  {user:12} {overall.total_factors_assessed:>2}/{overall.total_factors} factors, "
                f"tier {overall.decision_tier}, can evaluate {len(summary.capabilities.can_evaluate)}"
            )
    OrganisationDirectory(store).record_day(load_script()["organisation"]["id"])
    print("\nOpen the app through these links (valid 14 days):")
    for user in users:
        print(f"  {user:12} {issue_link(user)}")
    manager = load_script()["organisation"]["manager"]["user_id"]
    print(f"  {'manager':12} {issue_link(manager, manager=True)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
