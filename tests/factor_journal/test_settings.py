"""Settings: one model, read from FJ_ variables, with clear errors for bad values."""

from __future__ import annotations

from datetime import timedelta

import pytest
from pydantic import ValidationError

from factor_journal.pipeline import UNCLAIMED_AFTER
from factor_journal.settings import Settings


def test_defaults_and_environment_overrides():
    assert Settings.from_env({}).link_ttl == timedelta(days=14)
    configured = Settings.from_env({"FJ_TURNS_PER_MINUTE": "3", "FJ_LINK_TTL_DAYS": "2", "FJ_EXTRACTOR": " "})
    assert configured.turns_per_minute == 3 and configured.link_ttl == timedelta(days=2)
    assert configured.extractor == Settings().extractor  # empty keeps the default


@pytest.mark.parametrize(("attempts", "seconds"), [(1, 60), (2, 240), (3, 960), (4, 3600), (9, 3600)])
def test_retry_delay_grows_exponentially_and_is_capped(attempts, seconds):
    assert Settings().retry_delay(attempts) == timedelta(seconds=seconds)


@pytest.mark.parametrize("name", ["FJ_TURNS_PER_MINUTE", "FJ_MAX_TURN_ATTEMPTS", "FJ_CLAIM_LEASE_SECONDS"])
def test_bad_values_are_refused_by_name(name):
    with pytest.raises(ValidationError, match=name.removeprefix("FJ_").lower()):
        Settings.from_env({name: "0" if "LEASE" not in name else "-1"})


def test_a_turn_no_delivery_claimed_is_taken_as_lost_after_two_minutes_unless_set():
    assert Settings().unclaimed_after == UNCLAIMED_AFTER == timedelta(minutes=2)
    assert Settings.from_env({"FJ_UNCLAIMED_AFTER_SECONDS": "5"}).unclaimed_after == timedelta(seconds=5)
    with pytest.raises(ValidationError, match="unclaimed_after_seconds"):
        Settings.from_env({"FJ_UNCLAIMED_AFTER_SECONDS": "-1"})
