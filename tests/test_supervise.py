"""scripts/supervise.py, which every `make test`, `make bench` and `make demo` runs the emulators under:
whatever the run leaves running is stopped, and the run fails if a process of it or a configured
emulator port outlives it.  (Real processes and sockets; no emulator needed.)"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from factor_journal_tools.browser import free_port

SUPERVISE = Path(__file__).resolve().parents[1] / "scripts" / "supervise.py"

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="process checks read /proc (Linux)")


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def config_with(tmp_path: Path, port: int) -> Path:
    config = tmp_path / "firebase.json"
    config.write_text(json.dumps({"emulators": {"hub": {"host": "127.0.0.1", "port": port}, "ui": {"enabled": False}}}))
    return config


def test_what_the_run_leaves_behind_is_stopped_and_the_run_keeps_its_exit_code(tmp_path):
    port = free_port()
    listener = f"import socket,time; s=socket.socket(); s.bind(('127.0.0.1',{port})); s.listen(); time.sleep(300)"
    script = (
        "sleep 300 & echo $! > orphan;"  # an orphan in the run's process group (the functions-framework case)
        "setsid sleep 300 & echo $! > escaped;"  # left the group and the session: found by the run's tag
        "sh -c \"trap '' TERM; exec sleep 300\" & echo $! > stubborn;"  # ignores SIGTERM: killed after the grace
        f'{sys.executable} -c "{listener}" & echo $! > listener;'  # keeps an emulator port bound
        f"while ! {sys.executable} -c 'import socket; socket.create_connection((\"127.0.0.1\",{port}))' 2>/dev/null;"
        " do sleep 0.1; done; exit 7"
    )
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, str(SUPERVISE), "--config", str(config_with(tmp_path, port)), "--", "sh", "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 7, done.stderr  # the command's own code: the clean-up succeeded
    assert "stopping 4 process(es)" in done.stderr and "FAILED" not in done.stderr
    pids = {name: int((tmp_path / name).read_text()) for name in ("orphan", "escaped", "stubborn", "listener")}
    assert not any(alive(pid) for pid in pids.values()), pids
    assert not listening(port)
    assert time.monotonic() - started < 30


def test_the_run_fails_when_an_emulator_port_is_still_bound_afterwards(tmp_path):
    port = free_port()
    command = "touch started; while [ ! -e go ]; do sleep 0.1; done"
    run = subprocess.Popen(
        [sys.executable, str(SUPERVISE), "--config", str(config_with(tmp_path, port)), "--", "sh", "-c", command],
        cwd=tmp_path,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 20
        while not (tmp_path / "started").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        with socket.socket() as squatter:  # bound during the run by something the run cannot stop
            squatter.bind(("127.0.0.1", port))
            squatter.listen()
            (tmp_path / "go").touch()
            _, stderr = run.communicate(timeout=30)
    finally:
        run.kill() if run.poll() is None else None
    assert run.returncode == 3, stderr
    assert f"emulator port still bound: 127.0.0.1:{port}" in stderr


def test_a_port_taken_before_the_run_is_reported_not_blamed_on_it(tmp_path):
    port = free_port()
    with socket.socket() as other:
        other.bind(("127.0.0.1", port))
        other.listen()
        done = subprocess.run(
            [sys.executable, str(SUPERVISE), "--config", str(config_with(tmp_path, port)), "--", "true"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=30,
        )
    assert done.returncode == 0, done.stderr
    assert f"127.0.0.1:{port} is already in use" in done.stderr


def test_the_make_targets_run_the_emulators_under_the_supervisor():
    root = SUPERVISE.parents[1]
    wrapper = (root / "scripts" / "with-emulators.sh").read_text()
    assert 'scripts/supervise.py --config "$CONFIG" -- \\\n  firebase emulators:exec' in wrapper
    makefile = (root / "Makefile").read_text()
    for target in ("test", "demo", "bench"):
        recipe = makefile.split(f"\n{target}:", 1)[1].split("\n\n", 1)[0]
        assert "$(RUN)" in recipe, target
    assert os.access(root / "scripts" / "with-emulators.sh", os.X_OK)
