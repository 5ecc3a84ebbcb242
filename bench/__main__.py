"""Run the benchmark suites against the emulators and write bench/results.json.

    python -m bench [--only SUITE ...]

Each suite returns a dictionary of figures; results of suites not run this time
are kept from the previous file, so one suite can be re-measured alone.  Each suite's figures
say when it ran (``measured_at``) and the machine's load average before and after it
(``load_average``, 1/5/15 minutes): the top-level ``measured_at`` is only the latest run of any suite.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

RESULTS = Path(__file__).with_name("results.json")


def suites() -> dict:
    """Every ``bench/<name>_bench.py`` module with a ``run()`` is the suite ``<name>``."""
    import importlib

    found = {}
    for path in sorted(Path(__file__).parent.glob("*_bench.py")):
        module = importlib.import_module(f"bench.{path.stem}")
        found[path.stem.removesuffix("_bench")] = module.run
    return found


def _load() -> list[float]:
    """The machine's load average over 1, 5 and 15 minutes (runnable processes; 2 is a full 2-core machine)."""
    return [round(value, 2) for value in os.getloadavg()]


def main() -> int:
    available = suites()
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("--only", nargs="*", choices=sorted(available), help="suites to run (default: all)")
    args = parser.parse_args()
    chosen = args.only or list(available)
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    results.setdefault("suites", {})
    for name in chosen:
        print(f"== {name}", flush=True)
        started, load_before = time.perf_counter(), _load()
        figures = available[name]()
        figures["suite_seconds"] = round(time.perf_counter() - started, 1)
        # when, and how busy the machine was (a suite's timings are only comparable at a like load)
        figures["measured_at"] = datetime.now(UTC).isoformat(timespec="seconds")
        figures["load_average"] = {"before": load_before, "after": _load()}
        results["suites"][name] = figures
    results["machine"] = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "firestore": "Firestore emulator (local), not production latency",
    }
    results["measured_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    RESULTS.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    print(f"wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
