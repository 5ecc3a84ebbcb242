"""Test doubles shared by the suite.  Only the model is ever doubled: Firestore is always the emulator."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

from factor_journal.extraction.base import ExtractionError, ExtractionRequest, ExtractionResult


def reading(factor_id: str, value: float, confidence: float = 0.7, **extra: object) -> dict:
    """One extractor reading as a model would return it."""
    return {
        "factor_id": factor_id,
        "value": value,
        "confidence": confidence,
        "rationale": f"about {factor_id}",
        **extra,
    }


class ScriptedExtractor:
    """Returns scripted outputs in turn (the last one repeats); an Exception output is raised."""

    name = "scripted"

    def __init__(self, *outputs: list | Exception, prompt_tokens: int = 120, response_tokens: int = 30) -> None:
        self.outputs = list(outputs)
        self.requests: list[ExtractionRequest] = []
        self.prompt_tokens, self.response_tokens = prompt_tokens, response_tokens
        self._lock = threading.Lock()

    def extract(self, request: ExtractionRequest) -> ExtractionResult:
        with self._lock:
            self.requests.append(request)
            output = self.outputs.pop(0) if len(self.outputs) > 1 else self.outputs[0]
        if isinstance(output, Exception):
            raise output
        return ExtractionResult(
            raw_updates=output,
            extractor="scripted",
            model="scripted-1",
            prompt_tokens=self.prompt_tokens,
            response_tokens=self.response_tokens,
        )


class ReadingsByText:
    """Answers each turn with the readings scripted for its text; counts calls per text (thread-safe).
    ``fail_first`` makes the first k calls for a text raise, as a flaky model would."""

    name = "scripted"

    def __init__(self, readings: dict[str, list[dict]], *, fail_first: int = 0) -> None:
        self.readings = readings
        self.fail_first = fail_first
        self.calls: dict[str, int] = {}
        self._lock = threading.Lock()

    @property
    def total_calls(self) -> int:
        return sum(self.calls.values())

    def extract(self, request: ExtractionRequest) -> ExtractionResult:
        with self._lock:
            count = self.calls[request.text] = self.calls.get(request.text, 0) + 1
        if count <= self.fail_first:
            raise ExtractionError(f"Vertex AI answered 503 (call {count} for this turn)")
        return ExtractionResult(
            raw_updates=self.readings.get(request.text, []), extractor="scripted", model="scripted-1"
        )


class Clock:
    """A clock the test moves by hand, for code that takes ``clock=`` (no real sleeps in tests)."""

    def __init__(self, now: datetime | None = None) -> None:
        self.now = now or datetime.now(UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, delta: timedelta | None = None, **parts: float) -> None:
        """Move on by ``delta`` or by ``timedelta(**parts)``."""
        self.now += (delta or timedelta()) + timedelta(**parts)
