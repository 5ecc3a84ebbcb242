"""Prints the path of the firebase.json to run the emulators with.

With FJ_EMULATOR_PORT_OFFSET unset (or 0) that is the project's firebase.json. With an
offset N it writes ``firebase.ports-N.json`` beside it (git-ignored): the same
configuration with every emulator port moved by N, so several checkouts on one machine
can each run their own Emulator Suite without fighting over ports.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def shifted(config: dict, offset: int) -> dict:
    emulators = config.get("emulators", {})
    for settings in emulators.values():
        if isinstance(settings, dict):
            for key in ("port", "websocketPort"):
                if isinstance(settings.get(key), int):
                    settings[key] += offset
    return config


def main() -> int:
    offset = int(os.environ.get("FJ_EMULATOR_PORT_OFFSET") or 0)
    source = ROOT / "firebase.json"
    if offset == 0:
        print(source)
        return 0
    target = ROOT / f"firebase.ports-{offset}.json"
    target.write_text(json.dumps(shifted(json.loads(source.read_text()), offset), indent=2) + "\n")
    print(target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
