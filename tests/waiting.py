"""Waiting on the emulators: functions run asynchronously, so tests poll until what they expect is there."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def wait_for(probe: Callable[[], Any], timeout: float = 45.0, what: str = "the trigger", interval: float = 0.2) -> Any:
    """``probe()``'s first truthy value, polled every ``interval`` seconds; an AssertionError naming ``what``
    after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
