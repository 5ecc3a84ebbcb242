"""Prints the path of the firebase.json to run the emulators with.

With FJ_EMULATOR_PORT_OFFSET unset (or 0) that is the project's firebase.json. With an
offset N it writes ``firebase.ports-N.json`` beside it (git-ignored): the same
configuration with every emulator port moved by N, so several checkouts on one machine
can each run their own Emulator Suite without fighting over ports.

    firebase_config.py                             the configuration's path
    firebase_config.py --function-url NAME PROJECT the address the Functions emulator serves the HTTP
                                                   function NAME at, under that configuration
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FUNCTIONS_REGION = "europe-west1"  # functions/main.py's region (factor_journal.reminders.FUNCTIONS_REGION)


def shifted(config: dict, offset: int) -> dict:
    emulators = config.get("emulators", {})
    for settings in emulators.values():
        if isinstance(settings, dict):
            for key in ("port", "websocketPort"):
                if isinstance(settings.get(key), int):
                    settings[key] += offset
    return config


def function_url(config: dict, name: str, project: str, region: str = FUNCTIONS_REGION) -> str:
    """Where the Functions emulator of ``config`` serves the HTTP function ``name``:
    ``http://HOST:PORT/PROJECT/REGION/NAME`` (deployed: ``https://REGION-PROJECT.cloudfunctions.net/NAME``)."""
    functions = config["emulators"]["functions"]
    return f"http://{functions.get('host', '127.0.0.1')}:{functions['port']}/{project}/{region}/{name}"


def main() -> int:
    offset = int(os.environ.get("FJ_EMULATOR_PORT_OFFSET") or 0)
    source = ROOT / "firebase.json"
    config = shifted(json.loads(source.read_text()), offset)
    if sys.argv[1:2] == ["--function-url"]:
        name, project = sys.argv[2:4]
        print(function_url(config, name, project))
        return 0
    if offset == 0:
        print(source)
        return 0
    target = ROOT / f"firebase.ports-{offset}.json"
    target.write_text(json.dumps(config, indent=2) + "\n")
    print(target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
