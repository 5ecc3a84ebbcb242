"""Settings in one place: read once from the environment, typed, with the product's defaults.

Every knob an operator may turn lives here (the configuration table in docs/configuration.md
lists them).  Secrets are not settings: the link secret comes from Secret
Manager through firebase-functions params in the functions (``.secret.local``
under the emulators) and from the environment for the dashboard.
"""

from __future__ import annotations

import os
from datetime import timedelta
from functools import lru_cache

from pydantic import BaseModel, Field

ENV_PREFIX = "FJ_"


class Settings(BaseModel):
    extractor: str = Field("semantic", description="semantic (embedded model) | rules (alias offline) | gemini")
    embedder: str = Field(
        "local",
        pattern="^(local|gemini|none)$",
        description="embeds what was said for 'ask': local (WordLlama, offline) | gemini (Vertex AI) | none",
    )
    firestore_database: str = "(default)"
    app_url: str = "http://localhost:8501"
    # Links and reminders
    link_ttl_days: float = Field(14.0, gt=0)
    reminder_inactive_days: float = Field(7.0, gt=0)
    reminder_window_days: float = Field(7.0, gt=0)
    unsubscribe_url: str | None = Field(None, description="where mail clients POST a one-click unsubscribe")
    # The nightly job
    nightly_page_size: int = Field(200, ge=1, le=1000, description="people per reminder task")
    nightly_org_page_size: int = Field(10, ge=1, le=1000, description="organisations per figures task")
    # The turn pipeline
    turns_per_minute: int = Field(30, ge=1, description="analysed turns a person may write per minute")
    turns_per_day: int = Field(1000, ge=1, description="analysed turns a person may write per day")
    claim_lease_seconds: float = Field(
        180.0, gt=0, description="how long a claimer holds a turn before others may take over"
    )
    max_turn_attempts: int = Field(5, ge=1, description="attempts before a failing turn needs attention")
    retry_base_seconds: float = Field(60.0, gt=0, description="wait before the second attempt; x4 each further attempt")
    retry_max_seconds: float = Field(3600.0, gt=0)
    max_event_age_hours: float = Field(6.0, gt=0, description="older (re)deliveries are parked for the sweeper")
    unclaimed_after_seconds: float = Field(
        120.0, ge=0, description="a person's turn no delivery claimed this long after its writing lost its delivery"
    )

    @property
    def link_ttl(self) -> timedelta:
        return timedelta(days=self.link_ttl_days)

    @property
    def claim_lease(self) -> timedelta:
        return timedelta(seconds=self.claim_lease_seconds)

    @property
    def unclaimed_after(self) -> timedelta:
        return timedelta(seconds=self.unclaimed_after_seconds)

    def retry_delay(self, attempts: int) -> timedelta:
        """The wait after the ``attempts``-th failed attempt (exponential, capped)."""
        seconds = self.retry_base_seconds * 4 ** max(0, attempts - 1)
        return timedelta(seconds=min(self.retry_max_seconds, seconds))

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Settings:
        """Settings from ``FJ_<NAME>`` variables (unset or empty ones keep their defaults)."""
        env = os.environ if environ is None else environ
        values = {}
        for name in cls.model_fields:
            raw = env.get(ENV_PREFIX + name.upper())
            if raw is not None and raw.strip():
                values[name] = raw.strip()
        return cls.model_validate(values)


@lru_cache(maxsize=1)
def settings() -> Settings:
    """The process's settings, read once."""
    return Settings.from_env()
