"""Helpers shared by the benchmark suites: timing, percentiles, a clean emulator database."""

from __future__ import annotations

import os
import statistics
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import psutil
from google.cloud import firestore

PROJECT_ID = os.environ.get("GCLOUD_PROJECT", "demo-factor-journal")


def fresh_database(database: str) -> firestore.Client:
    """A client on an emptied emulator database (named databases have no triggers)."""
    host = os.environ.get("FIRESTORE_EMULATOR_HOST")
    if not host:
        raise SystemExit("FIRESTORE_EMULATOR_HOST is not set: run the benchmarks with `make bench`")
    httpx.delete(f"http://{host}/emulator/v1/projects/{PROJECT_ID}/databases/{database}/documents").raise_for_status()
    return firestore.Client(project=PROJECT_ID, database=database)


def percentiles(samples_ms: list[float]) -> dict[str, float]:
    ordered = sorted(samples_ms)
    if not ordered:
        return {"p50_ms": 0.0, "p95_ms": 0.0, "n": 0}
    cut = statistics.quantiles(ordered, n=100, method="inclusive") if len(ordered) > 1 else [ordered[0]] * 99
    return {"p50_ms": round(cut[49], 2), "p95_ms": round(cut[94], 2), "n": len(ordered)}


@contextmanager
def stopwatch() -> Any:
    box: dict[str, float] = {}
    start = time.perf_counter()
    try:
        yield box
    finally:
        box["ms"] = (time.perf_counter() - start) * 1000


def timed(function: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = function()
    return (time.perf_counter() - start) * 1000, value


APP = str(Path(__file__).resolve().parents[1] / "dashboard" / "app.py")


def app_on_fresh_database(database: str) -> firestore.Client:
    """Point the app's runtime at an emptied emulator database (and forget cached clients)."""
    import streamlit as st

    from factor_journal import runtime

    os.environ["FJ_FIRESTORE_DATABASE"] = database
    client = fresh_database(database)
    runtime.reset()  # the client takes its database from the cached settings: forget them too
    st.cache_resource.clear()
    st.cache_data.clear()  # the team's rows kept a minute
    return client


def measure_page(token: str, page: str | None = None, before: Callable[[], object] | None = None) -> tuple[int, float]:
    """(document reads, server-side render ms) of one page view through AppTest, after sign-in;
    ``before`` runs just before the measured run (e.g. to drop what the app keeps between reruns)."""
    from streamlit.testing.v1 import AppTest

    from factor_journal import runtime

    app = AppTest.from_file(APP, default_timeout=120)
    app.query_params["t"] = token
    app.run()  # sign-in: the link is verified once per browser session
    if page:
        app.switch_page(f"screens/{page}.py")
    if before is not None:
        before()
    runtime.store().stats.reset()
    started = time.perf_counter()
    app.run()
    elapsed = (time.perf_counter() - started) * 1000
    if app.exception:
        raise RuntimeError(f"page {page or 'default'} failed: {app.exception}")
    return runtime.store().stats.reads, elapsed


class CheckedBulkWriter:
    """A ``BulkWriter`` that fails loudly: ``close`` raises unless every document set was written (a bulk
    writer alone retries a failed write a few times and then drops it without a word)."""

    def __init__(self, client: firestore.Client, attempts: int = 5) -> None:
        self.writer = client.bulk_writer()
        self.sent = self.written = 0
        self.failures: list[str] = []
        self._lock = threading.Lock()
        self.writer.on_write_result(self._written)
        self.writer.on_write_error(lambda failure, _: self._failed(failure, attempts))

    def _written(self, *_: Any) -> None:
        with self._lock:
            self.written += 1

    def _failed(self, failure: Any, attempts: int) -> bool:
        if failure.attempts < attempts:
            return True  # retried
        with self._lock:
            self.failures.append(f"{failure.operation.reference.path}: {failure.message}")
        return False

    def set(self, reference: Any, data: dict[str, Any]) -> None:
        self.writer.set(reference, data)
        self.sent += 1

    def close(self) -> None:
        self.writer.close()
        if self.failures or self.written != self.sent:
            raise RuntimeError(
                f"bulk write: {self.written} of {self.sent} documents written; failed: {self.failures[:3]}"
            )


def emulator_suite_processes() -> list[psutil.Process]:
    """The processes of the emulator run this process is part of: every descendant of its nearest ancestor that
    runs ``firebase emulators:exec`` (the Firestore emulator, the Functions emulator's workers, firebase-tools
    itself), this process included; only this process when it runs outside one (another run's emulators on the
    machine are never counted)."""
    me = psutil.Process()
    for ancestor in me.parents():
        try:
            command = " ".join(ancestor.cmdline())
        except psutil.Error:
            continue
        if "emulators:exec" in command:
            return [ancestor, *ancestor.children(recursive=True)]
    return [me]


def role_of_command(command: str) -> str:
    """What a process of the emulator run does, from its command line, for CPU accounting: ``firestore_emulator``,
    ``functions_worker`` (the Python worker running the deployed functions), ``firebase_tools`` (node: the emulator
    hub and the Functions emulator's delivery) or ``other``."""
    if "java" in command and "firestore" in command:
        return "firestore_emulator"
    if "functions-framework" in command:
        return "functions_worker"
    if "node" in command or "firebase" in command:
        return "firebase_tools"
    return "other"


def process_role(process: psutil.Process) -> str:
    """``bench`` for this process (the writers and the observer), else ``role_of_command`` of its command line."""
    if process.pid == os.getpid():
        return "bench"
    try:
        return role_of_command(" ".join(process.cmdline()))
    except psutil.Error:
        return "other"


class ProcessCpu:
    """CPU seconds (user + system) spent by each role of the emulator run (or of ``processes``) between ``start()``
    and ``stop()``: a process that started in between counts from zero, one that ended in between is lost (reported
    as such)."""

    def __init__(self, processes: Callable[[], list[psutil.Process]] = emulator_suite_processes) -> None:
        self._processes = processes  # which processes are read at the start and the stop
        self._start: dict[int, tuple[str, float]] = {}
        self.lost: int = 0

    def _read(self) -> dict[int, tuple[str, float]]:
        readings = {}
        for process in self._processes():
            try:
                times = process.cpu_times()
                readings[process.pid] = (process_role(process), times.user + times.system)
            except psutil.Error:
                continue
        return readings

    def start(self) -> None:
        self._start = self._read()

    def stop(self) -> dict[str, float]:
        end = self._read()
        self.lost = len(set(self._start) - set(end))
        seconds: dict[str, float] = {}
        for pid, (role, spent) in end.items():
            seconds[role] = seconds.get(role, 0.0) + spent - self._start.get(pid, (role, 0.0))[1]
        return {role: round(value, 2) for role, value in sorted(seconds.items())}
