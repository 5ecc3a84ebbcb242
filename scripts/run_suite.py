"""``make test``'s runner, inside the emulators: the suite as two pytest processes at once.

The tests that need the emulators run in one process, in the order collected (they share the emulators' databases,
their session fixtures and the deployed trigger), its report streamed; the tests that need none (``-m "not
emulator"``, the marker ``tests/conftest.py`` gives: the pure code and the training test, minutes of CPU) run beside
them in another, whose report follows.  The run fails if either does.  With ``--workers 1``, or arguments that
choose by marker themselves (``-m``), it is one process, as before.

    scripts/run_suite.py [--workers 1|2] [PYTEST-ARGS...]
"""

from __future__ import annotations

import subprocess
import sys
import tempfile

NO_TESTS = 5  # pytest's exit code when the selection holds no test: one half of a narrow run may be empty


def halves(args: list[str]) -> list[list[str]]:
    """The pytest argument lists to run at once: the emulator tests' and the others' (never the cache twice)."""
    return [["-m", "emulator", *args], ["-m", "not emulator", "-p", "no:cacheprovider", *args]]


def combined(codes: list[int]) -> int:
    """One exit code for the halves: the first failure's; no tests at all only when neither half had any."""
    failed = [code for code in codes if code not in (0, NO_TESTS)]
    if failed:
        return failed[0]
    return 0 if 0 in codes else NO_TESTS


def main(argv: list[str]) -> int:
    workers = 2
    if argv[:1] == ["--workers"]:
        workers, argv = int(argv[1]), argv[2:]
    pytest = [sys.executable, "-m", "pytest"]
    if workers < 2 or "-m" in argv:
        return subprocess.run([*pytest, *argv]).returncode
    emulated, pure = halves(argv)
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8") as report:
        beside = subprocess.Popen([*pytest, *pure], stdout=report, stderr=subprocess.STDOUT, text=True)
        try:
            first = subprocess.run([*pytest, *emulated]).returncode
        finally:
            second = beside.wait()
        report.seek(0)
        print("\n==== the tests that need no emulator, run beside them ====", flush=True)
        sys.stdout.write(report.read())
    return combined([first, second])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
