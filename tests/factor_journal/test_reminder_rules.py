"""Who a reminder page may remind, from the profile it read (pure: ``reminders.may_be_reminded``; the scan, the
sending transaction and the mail are tested on the emulator in test_reminders.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from factor_journal.models import UserProfile
from factor_journal.reminders import ReminderPolicy, may_be_reminded

NOW = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
POLICY = ReminderPolicy(inactive_after=timedelta(days=7), window=timedelta(days=7))


def profile(**fields: object) -> UserProfile:
    return UserProfile.model_validate({"user_id": "u", "email": "p@example.com", **fields})


@pytest.mark.parametrize(
    ("fields", "reminded"),
    [
        ({}, True),  # never reminded
        ({"reminders_opt_out": True}, False),  # opted out: nothing, ever
        ({"role": "manager"}, False),  # managers are not reminded to answer
        ({"email": ""}, False),  # nowhere to send it
        ({"last_reminded_at": NOW - timedelta(days=3)}, False),  # still inside the window
        ({"last_reminded_at": NOW - timedelta(days=7)}, True),  # the window has passed, to the instant
    ],
)
def test_a_page_reminds_only_whom_the_profile_allows(fields, reminded):
    assert may_be_reminded(profile(**fields), NOW, POLICY) is reminded
