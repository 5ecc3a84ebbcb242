"""scripts/firebase_config.py: the emulators' configuration moved by a port offset, and where its Functions
emulator serves an HTTP function (the address reminder mails name for a one-click unsubscribe under the
emulators, exported by scripts/with-emulators.sh)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from factor_journal.reminders import FUNCTIONS_REGION

ROOT = Path(__file__).resolve().parents[1]
SPEC = importlib.util.spec_from_file_location("firebase_config", ROOT / "scripts" / "firebase_config.py")
firebase_config = importlib.util.module_from_spec(SPEC)  # type: ignore[arg-type]
SPEC.loader.exec_module(firebase_config)  # type: ignore[union-attr]


def project_config() -> dict:
    return json.loads((ROOT / "firebase.json").read_text())


def test_a_function_is_served_by_the_functions_emulator_of_the_configuration():
    config = project_config()
    functions = config["emulators"]["functions"]
    assert firebase_config.function_url(config, "unsubscribe", "demo-p") == (
        f"http://{functions['host']}:{functions['port']}/demo-p/{FUNCTIONS_REGION}/unsubscribe"
    )


def test_a_port_offset_moves_the_functions_address_with_the_emulator():
    moved = firebase_config.shifted(project_config(), 40)
    port = project_config()["emulators"]["functions"]["port"] + 40
    assert moved["emulators"]["functions"]["port"] == port
    assert firebase_config.function_url(moved, "unsubscribe", "demo-p").startswith(f"http://127.0.0.1:{port}/")


def test_the_region_is_the_one_the_functions_are_deployed_in():
    assert firebase_config.FUNCTIONS_REGION == FUNCTIONS_REGION
    assert f'region="{FUNCTIONS_REGION}"' in (ROOT / "functions" / "main.py").read_text()


def emulator_ports(config: dict) -> set[int]:
    return {
        settings[key]
        for settings in config["emulators"].values()
        if isinstance(settings, dict)
        for key in ("port", "websocketPort")
        if isinstance(settings.get(key), int)
    }


def test_two_checkouts_on_any_two_offsets_share_no_port():
    """Offsets 1-49 are for checkouts running side by side: Pub/Sub at 8085 was Firestore's 8080 five offsets on."""
    moved = {offset: emulator_ports(firebase_config.shifted(project_config(), offset)) for offset in range(50)}
    clashes = [(a, b, moved[a] & moved[b]) for a in moved for b in moved if a < b and moved[a] & moved[b]]
    assert clashes == []
