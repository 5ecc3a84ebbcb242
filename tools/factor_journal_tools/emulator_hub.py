"""The Emulator Hub's switch for the Functions emulator's background functions (the Firestore trigger and the
scheduled ones): ``triggers_stopped`` switches them off for a block and on again however it ends.

While they are off, a write's event is dropped, never delivered later; switching them on reloads the functions, so
their next call starts a cold worker (as after an outage).  ``make demo`` seeds with them off (``demo/seed.py``);
the self-healing test and bench lose a delivery this way (``bench/healing_bench.py``).
"""

from __future__ import annotations

import os
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager

DISABLE = "/functions/disableBackgroundTriggers"
ENABLE = "/functions/enableBackgroundTriggers"


def hub_url() -> str:
    """The Emulator Hub's address (``FIREBASE_EMULATOR_HUB``, set by ``firebase emulators:exec``); a clear error
    outside the emulators."""
    hub = os.environ.get("FIREBASE_EMULATOR_HUB")
    if not hub:
        raise RuntimeError(
            "FIREBASE_EMULATOR_HUB is not set: run inside the emulators (make demo, make test, make bench)"
        )
    return f"http://{hub}"


def put(path: str) -> None:
    """One ``PUT`` to the hub; it returns once the hub has done it (``DISABLE``: once the events it had queued are
    done, that is dropped)."""
    request = urllib.request.Request(f"{hub_url()}{path}", method="PUT", data=b"")
    with urllib.request.urlopen(request, timeout=120) as response:  # noqa: S310 (the loopback emulator hub)
        response.read()


@contextmanager
def triggers_stopped() -> Iterator[None]:
    """The Functions emulator's background functions switched off (as when the functions are down), and on again
    however the block ends."""
    put(DISABLE)
    try:
        yield
    finally:
        put(ENABLE)
