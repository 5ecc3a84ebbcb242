"""scripts/run_suite.py, make test's runner: the emulator tests and the others as two pytest processes at once,
every test in exactly one of them, and the run failing when either fails."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

SPEC = importlib.util.spec_from_file_location("run_suite", Path(__file__).parents[1] / "scripts" / "run_suite.py")
runner = importlib.util.module_from_spec(SPEC)  # type: ignore[arg-type]
sys.modules["run_suite"] = runner
SPEC.loader.exec_module(runner)  # type: ignore[union-attr]


def test_the_halves_split_the_suite_by_the_emulator_marker_and_keep_the_arguments():
    emulated, pure = runner.halves(["--durations=30", "tests/dashboard"])
    assert emulated == ["-m", "emulator", "--durations=30", "tests/dashboard"]
    assert pure[:2] == ["-m", "not emulator"] and pure[-2:] == ["--durations=30", "tests/dashboard"]


def test_the_run_fails_when_either_half_fails_and_an_empty_half_is_no_failure():
    assert runner.combined([0, 0]) == 0
    assert runner.combined([1, 0]) == 1 and runner.combined([0, 1]) == 1
    assert runner.combined([0, 5]) == 0 and runner.combined([5, 0]) == 0  # a narrow run: one half has no test
    assert runner.combined([5, 5]) == 5  # nothing selected at all
    assert runner.combined([5, 2]) == 2  # interrupted


def test_a_run_that_chooses_by_marker_itself_stays_one_process(monkeypatch):
    ran = []

    class Done:
        returncode = 0

    monkeypatch.setattr(runner.subprocess, "run", lambda command: ran.append(command) or Done())
    assert runner.main(["-m", "browser", "tests/dashboard"]) == 0
    assert runner.main(["--workers", "1", "tests/test_trigger.py"]) == 0
    assert [command[3:] for command in ran] == [["-m", "browser", "tests/dashboard"], ["tests/test_trigger.py"]]
