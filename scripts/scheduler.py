"""Cloud Scheduler for the Functions emulator: fires the project's scheduled functions on their schedules.

Deployed, Cloud Scheduler calls each ``scheduler_fn.on_schedule`` function over HTTP on its cron schedule.
The Emulator Suite has no Cloud Scheduler: with the Pub/Sub emulator running, the Functions emulator
loads scheduled functions but nothing ever calls them.  This stand-in does what Cloud Scheduler does:

* it reads the scheduled functions, their schedules and time zones from the Functions emulator
  (``GET /backends``; the emulator is found through the hub, ``FIREBASE_EMULATOR_HUB``);
* it calls each one at its schedule's times with Cloud Scheduler's headers
  (``X-CloudScheduler-JobName``, ``X-CloudScheduler-ScheduleTime``), so the function runs exactly the
  code a deployment runs, in the emulator's Python worker.

Schedules are unix-cron (``*/5 * * * *``), read with croniter; any other syntax is refused by name.

    scheduler.py list              the scheduled functions and when each fires next
    scheduler.py fire NAME [--at ISO-TIME]
                                   call one now (as scheduled for ISO-TIME, default now); exit 1 if it failed
    scheduler.py run [--only NAME]... [--schedule NAME=CRON]...
                                   call every one (or only those named) on its schedule until stopped (what
                                   ``make demo`` runs); ``--schedule`` fires one on another schedule instead, which may
                                   have a sixth field for seconds (``'* * * * * */5'``: every 5 s), so a test sees in
                                   seconds what the deployed schedule does in minutes (``tests/test_self_healing.py``)
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from zoneinfo import ZoneInfo

from croniter import croniter

log = logging.getLogger("scheduler")
TIMEOUT_SECONDS = 600  # a call waits for the function (the functions' own timeout is shorter)


class SchedulerError(Exception):
    """The emulators or a function could not be reached or read as expected."""


@dataclass(frozen=True)
class Job:
    """One scheduled function as the Functions emulator loaded it."""

    name: str
    region: str
    schedule: str
    time_zone: str | None

    @property
    def zone(self) -> tzinfo:
        return ZoneInfo(self.time_zone) if self.time_zone else UTC

    @property
    def job_name(self) -> str:
        """The Cloud Scheduler job name a deployment gives it (firebase-tools: firebase-schedule-NAME-REGION)."""
        return f"firebase-schedule-{self.name}-{self.region}"

    def next_after(self, moment: datetime) -> datetime:
        """The first time after ``moment`` this job fires (in UTC)."""
        if not croniter.is_valid(self.schedule):
            raise SchedulerError(f"{self.name}: schedule {self.schedule!r} is not unix-cron (e.g. '*/5 * * * *')")
        return croniter(self.schedule, moment.astimezone(self.zone)).get_next(datetime).astimezone(UTC)

    def on(self, schedule: str) -> Job:
        """The same function fired on another schedule (unix-cron, optionally with a sixth field for seconds)."""
        job = Job(self.name, self.region, schedule, self.time_zone)
        job.next_after(datetime.now(UTC))  # refused by name now if it is not cron
        return job


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:  # noqa: S310 (a loopback emulator URL)
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()
    except OSError as error:
        raise SchedulerError(f"cannot reach {url}: {error}") from error


def functions_origin() -> str:
    """The Functions emulator's http://host:port, from the emulator hub."""
    hub = os.environ.get("FIREBASE_EMULATOR_HUB")
    if not hub:
        raise SchedulerError("FIREBASE_EMULATOR_HUB is not set: run inside the emulators (scripts/with-emulators.sh)")
    status, body = _get(f"http://{hub}/emulators")
    info = json.loads(body).get("functions") if status == 200 else None
    if not info:
        raise SchedulerError("the Functions emulator is not running")
    return f"http://{info['host']}:{info['port']}"


def discover(origin: str) -> list[Job]:
    """The scheduled functions the Functions emulator loaded (none unless the Pub/Sub emulator runs too)."""
    status, body = _get(f"{origin}/backends")
    if status != 200:
        raise SchedulerError(f"{origin}/backends answered {status}")
    jobs = [
        Job(t["name"], t["region"], t["schedule"]["schedule"], t["schedule"].get("timeZone"))
        for backend in json.loads(body)["backends"]
        for t in backend["functionTriggers"]
        if t.get("schedule")
    ]
    return sorted(jobs, key=lambda job: job.name)


def fire(origin: str, project: str, job: Job, scheduled_for: datetime) -> str:
    """Call the job's function as Cloud Scheduler would for ``scheduled_for``; returns its answer.

    The Functions emulator names a loaded function by its load generation (``recover_turns-0``); after it reloads its
    functions (their triggers switched off and on again) the old name answers 404, or 204 with nothing run while its
    trigger is still on record but off: the newest generation is called then.  Raises ``SchedulerError`` when the
    function fails (it answers 500 with its error), is switched off, or cannot be called.
    """
    headers = {
        "X-CloudScheduler-JobName": job.job_name,
        "X-CloudScheduler-ScheduleTime": scheduled_for.astimezone(UTC).isoformat().replace("+00:00", "Z"),
    }
    generation = 0
    for _ in range(3):
        request = urllib.request.Request(f"{origin}/{project}/{job.region}/{job.name}-{generation}", data=b"")
        for name, value in headers.items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:  # noqa: S310
                if response.status != 204:
                    return response.read().decode()
                newest = _newest_generation(origin, project, job)  # 204: this generation's trigger is off
        except urllib.error.HTTPError as error:
            body = error.read().decode()
            known = _generations(body, job) if error.code == 404 else []
            if not known:  # a failure, or a name the emulator does not know under any generation
                raise SchedulerError(f"{job.name} answered {error.code}: {body.strip()[:500]}") from error
            newest = known[-1]
        except OSError as error:
            raise SchedulerError(f"cannot call {job.name}: {error}") from error
        if newest is None or newest == generation:
            raise SchedulerError(f"{job.name} is switched off in the Functions emulator: nothing ran")
        generation = newest
    raise SchedulerError(f"{job.name} is not loaded by the Functions emulator")


def _generations(listing: str, job: Job) -> list[int]:
    """The load generations of ``job`` named in the emulator's 404 answer (which lists every function's key)."""
    found = re.findall(rf"{re.escape(job.region)}-{re.escape(job.name)}-(\d+)", listing)
    return sorted({int(generation) for generation in found})


def _newest_generation(origin: str, project: str, job: Job) -> int | None:
    """The job's newest load generation, read from the 404 the emulator answers for a name it does not know."""
    request = urllib.request.Request(f"{origin}/{project}/{job.region}/{job.name}-unknown", data=b"")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
            response.read()
    except urllib.error.HTTPError as error:
        generations = _generations(error.read().decode(), job)
        return generations[-1] if generations else None
    except OSError as error:
        raise SchedulerError(f"cannot reach the Functions emulator: {error}") from error
    return None


def run(
    origin: str,
    project: str,
    jobs: list[Job],
    *,
    clock: Callable[[], float] = time.time,
    sleep: Callable[[float], None] = time.sleep,
    rounds: int | None = None,
) -> None:
    """Call every job at each of its scheduled times, in time order, until stopped (or ``rounds`` calls).

    A call that fails is logged and the job fires again at its next time (Cloud Scheduler without retries)."""
    now = datetime.fromtimestamp(clock(), UTC)
    due = {job: job.next_after(now) for job in jobs}
    fired = 0
    while jobs and (rounds is None or fired < rounds):
        job, at = min(due.items(), key=lambda item: (item[1], item[0].name))
        wait = at.timestamp() - clock()
        if wait > 0:
            sleep(wait)
        try:
            fire(origin, project, job, at)
            log.info("%s ran (scheduled for %s)", job.name, at.isoformat())
        except SchedulerError as error:
            log.warning("%s failed: %s", job.name, error)
        fired += 1
        due[job] = job.next_after(at)


def chosen(jobs: list[Job], only: list[str] | None, schedules: list[str]) -> list[Job]:
    """``jobs`` narrowed to ``only`` (names; all when None) and fired on the ``NAME=CRON`` schedules given instead of
    their own; an unknown name is refused by name."""
    known = {job.name: job for job in jobs}
    overrides = dict(item.split("=", 1) for item in schedules if "=" in item)
    unknown = sorted({*(only or []), *overrides} - set(known)) + [item for item in schedules if "=" not in item]
    if unknown:
        raise SchedulerError(f"no scheduled function {unknown[0]!r}; scheduled: {sorted(known)}")
    names = only or list(known)
    return [known[name].on(overrides[name]) if name in overrides else known[name] for name in names]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--project", default=os.environ.get("GCLOUD_PROJECT", "demo-factor-journal"))
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("list")
    one = commands.add_parser("fire")
    one.add_argument("name")
    one.add_argument("--at", type=datetime.fromisoformat, help="the scheduled time to pass (ISO 8601; default now)")
    every = commands.add_parser("run")
    every.add_argument("--only", action="append", metavar="NAME", help="fire only this function (repeatable)")
    every.add_argument(
        "--schedule", action="append", default=[], metavar="NAME=CRON", help="fire NAME on CRON instead (repeatable)"
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="scheduler: %(message)s", stream=sys.stderr)
    try:
        origin = functions_origin()
        jobs = discover(origin)
        now = datetime.now(UTC)
        if args.command == "list":
            for job in jobs:
                print(f"{job.name}\t{job.schedule}\t{job.time_zone or 'UTC'}\tnext {job.next_after(now).isoformat()}")
        elif args.command == "fire":
            job = next((job for job in jobs if job.name == args.name), None)
            if job is None:
                raise SchedulerError(f"no scheduled function {args.name!r}; scheduled: {[j.name for j in jobs]}")
            at = args.at if args.at is None or args.at.tzinfo else args.at.replace(tzinfo=UTC)
            print(fire(origin, args.project, job, at or now))
        else:
            jobs = chosen(jobs, args.only, args.schedule)
            if not jobs:
                raise SchedulerError("the Functions emulator loaded no scheduled function (is Pub/Sub running?)")
            log.info("firing %s on their schedules", ", ".join(f"{j.name} ({j.schedule})" for j in jobs))
            run(origin, args.project, jobs)
    except SchedulerError as error:
        print(f"scheduler: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
