"""The nightly job, fanned out over task queues so it scales past one function instance.

The scheduled function only calls :func:`start_run`, which enqueues three tasks:
the first page of organisations and the first page of each reminder scan
(``reminders.SCANS``).  Everything else happens in task queue functions
(``functions/main.py``), each task doing a bounded amount of work:

* ``organisations`` page: lists up to ``org_page_size`` organisation ids after a
  cursor, enqueues the next page (when this one was full), then one ``organisation``
  task for each listed organisation;
* ``organisation``: keeps one organisation's rows and figures true (``upkeep``), a
  bounded step per task, each task enqueueing the next: rebuild every row after a
  catalog or freshness change (``refresh``), age the rows whose time has come
  (``age``), compare the figures with the rows and repair any drift (``check``), and
  write the organisation's figures for the run's day (``record_day``: one document per
  organisation and day, from its figures whatever its size); an organisation whose
  document no longer reads is skipped, with its id and the damaged field in the task's
  marker (``skipped``) and a warning;
* ``reminders`` page: reads up to ``page_size`` people of one scan after a cursor,
  enqueues the next page first (so pages overlap instead of queueing behind each
  other), then queues a reminder for each person due on it (one mail per person and
  window: ``reminders.mail_id_for`` and the window check in one transaction).

Every task carries the run's ``now``, so a task retried after midnight still counts
for the run's day.  Task ids are derived from the run and the task, so enqueueing
the same task twice (a retried scheduler or page task) is refused by the queue;
and running one task twice writes nothing twice anyway.  Each finished task
records a marker in ``nightly_runs/{run}/tasks/{key}`` (counts, whether its chain
goes on, how often it ran): :func:`progress` reads them to tell when a run is done.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, Protocol

from pydantic import AwareDatetime, BaseModel, Field, model_validator

from factor_journal.links import LinkSigner
from factor_journal.organisation import DamagedOrganisationError, OrganisationDirectory
from factor_journal.reminders import (
    DEFAULT_PAGE_SIZE,
    MAX_PAGE_SIZE,
    SCANS,
    Cursor,
    ReminderPolicy,
    Scan,
    due_page,
    remind,
)
from factor_journal.repositories.nightly_runs import RUNS_COLLECTION as RUNS_COLLECTION  # re-exported
from factor_journal.repositories.nightly_runs import NightlyRuns
from factor_journal.settings import Settings
from factor_journal.store import FactorJournalStore
from factor_journal.upkeep import RowUpkeep

REGION = "europe-west1"  # where the task queue functions are deployed (functions/main.py)
ORGANISATION_QUEUE = "nightlyOrganisations"  # Cloud Tasks queue ids: letters, digits and hyphens only
REMINDER_QUEUE = "nightlyReminders"
DEFAULT_ORG_PAGE_SIZE = 10
RUN_ID = re.compile(r"^[A-Za-z0-9-]{1,64}$")

log = logging.getLogger(__name__)

TaskKind = Literal["organisations", "organisation", "reminders"]
Phase = Literal["refresh", "strays", "age", "check"]
QUEUE_OF: dict[str, str] = {
    "organisations": ORGANISATION_QUEUE,
    "organisation": ORGANISATION_QUEUE,
    "reminders": REMINDER_QUEUE,
}


class NightlySettings(BaseModel):
    """The nightly job's knobs (environment: FJ_NIGHTLY_PAGE_SIZE, FJ_NIGHTLY_ORG_PAGE_SIZE,
    FJ_REMINDER_INACTIVE_DAYS, FJ_REMINDER_WINDOW_DAYS)."""

    page_size: int = Field(DEFAULT_PAGE_SIZE, ge=1, le=MAX_PAGE_SIZE)
    org_page_size: int = Field(DEFAULT_ORG_PAGE_SIZE, ge=1, le=MAX_PAGE_SIZE)
    inactive_days: float = Field(7.0, gt=0)
    window_days: float = Field(7.0, gt=0)

    @classmethod
    def from_env(cls) -> NightlySettings:
        """This run's knobs, from the product's settings (read from the environment)."""
        configured = Settings.from_env()
        return cls(
            page_size=configured.nightly_page_size,
            org_page_size=configured.nightly_org_page_size,
            inactive_days=configured.reminder_inactive_days,
            window_days=configured.reminder_window_days,
        )

    def policy(self) -> ReminderPolicy:
        return ReminderPolicy(
            inactive_after=timedelta(days=self.inactive_days),
            window=timedelta(days=self.window_days),
            page_size=self.page_size,
        )


class NightlyTask(BaseModel):
    """One task's payload (JSON through Cloud Tasks); validated before any work."""

    kind: TaskKind
    run_id: str = Field(pattern=RUN_ID.pattern)
    now: AwareDatetime
    settings: NightlySettings = Field(default_factory=NightlySettings)
    page: int = Field(0, ge=0)  # position in its chain of pages
    after_org: str | None = None  # organisations: cursor
    scan: Scan | None = None  # reminders
    cursor: Cursor | None = None  # reminders
    org_id: str | None = Field(None, min_length=1, max_length=1500)  # organisation
    phase: Phase | None = None  # organisation: the step to do (None: decided from the organisation)
    after: str | None = None  # organisation: where the step resumes

    @model_validator(mode="after")
    def _complete(self) -> NightlyTask:
        if self.kind == "reminders" and self.scan is None:
            raise ValueError("a reminders task needs scan")
        if self.kind == "organisation" and self.org_id is None:
            raise ValueError("an organisation task needs org_id")
        return self

    @property
    def chain(self) -> str:
        """The chain of pages the task belongs to (``progress``)."""
        if self.kind == "reminders":
            return f"reminders/{self.scan}"
        return f"organisation/{self.org_id}" if self.kind == "organisation" else "organisations"

    @property
    def key(self) -> str:
        """The task's name within its run (also its marker's document id)."""
        if self.kind == "reminders":
            return f"reminders-{self.scan}-{self.page:06d}"
        if self.kind == "organisation":
            return f"organisation-{hashlib.sha256(str(self.org_id).encode()).hexdigest()[:16]}-{self.page:06d}"
        return f"organisations-{self.page:06d}"

    @property
    def task_id(self) -> str:
        """The Cloud Tasks task id: deterministic per run and task, hashed prefix (spreads the keyspace)."""
        prefix = hashlib.sha256(f"{self.run_id}/{self.key}".encode()).hexdigest()[:8]
        return f"{prefix}-{self.run_id}-{self.key}"

    @property
    def queue(self) -> str:
        return QUEUE_OF[self.kind]

    def follow(self, **changes: Any) -> NightlyTask:
        return self.model_copy(update=changes)


class TaskSink(Protocol):
    def enqueue(self, task: NightlyTask) -> bool:
        """Enqueue ``task``; False when a task of that id was already enqueued."""


class CloudTasksSink:
    """Enqueues through firebase-admin's task queue client: Cloud Tasks in production, the Cloud Tasks
    emulator when CLOUD_TASKS_EMULATOR_HOST is set (``firebase emulators:exec`` sets it)."""

    def __init__(self, app: Any = None, region: str = REGION, dispatch_deadline_seconds: int = 540) -> None:
        self.app, self.region, self.deadline = app, region, dispatch_deadline_seconds

    def enqueue(self, task: NightlyTask) -> bool:
        from firebase_admin import exceptions, functions

        queue = functions.task_queue(f"locations/{self.region}/functions/{task.queue}", app=self.app)
        options = functions.TaskOptions(task_id=task.task_id, dispatch_deadline_seconds=self.deadline)
        try:
            queue.enqueue(callable_body(task), options)
        except (exceptions.AlreadyExistsError, exceptions.ConflictError):
            return False
        except ValueError as error:
            # firebase-admin 7.7 drops the first character of the task name the Cloud Tasks emulator
            # echoes for a *named* task, then fails to parse it -- after the task was enqueued.
            if not (os.environ.get("CLOUD_TASKS_EMULATOR_HOST") and str(error) == "Invalid resource name format."):
                raise
        return True


def callable_body(task: NightlyTask) -> dict[str, Any]:
    """The request body a task queue function expects: ``{"data": payload}`` (the Python admin SDK,
    unlike the Node one, sends the given object as the body as it is)."""
    return {"data": task.model_dump(mode="json", exclude_none=True)}


class InlineQueue:
    """Runs tasks in this process, in order, through the same worker (``python -m factor_journal
    daily --inline``): the nightly job where no task queue is at hand.  Refuses a task id twice."""

    def __init__(self) -> None:
        self.pending: deque[NightlyTask] = deque()
        self.seen: set[str] = set()

    def enqueue(self, task: NightlyTask) -> bool:
        if task.task_id in self.seen:
            return False
        self.seen.add(task.task_id)
        self.pending.append(task)
        return True

    def drain(self, worker: NightlyWorker) -> int:
        done = 0
        while self.pending:
            worker.run(self.pending.popleft())
            done += 1
        return done


def default_run_id(now: datetime) -> str:
    return now.astimezone(UTC).strftime("%Y-%m-%d")


def start_run(
    runs: NightlyRuns,
    sink: TaskSink,
    now: datetime | None = None,
    run_id: str | None = None,
    settings: NightlySettings | None = None,
) -> list[NightlyTask]:
    """What the scheduled function does: record the run and enqueue its first three tasks.

    ``runs``: where the run is recorded (``FactorJournalStore.nightly_runs``).  The run id defaults to the
    day, so starting a day's run again enqueues nothing new.
    Returns the tasks this call enqueued.
    """
    now = (now or datetime.now(UTC)).astimezone(UTC)
    run_id = run_id or default_run_id(now)
    settings = settings or NightlySettings.from_env()
    first = [NightlyTask(kind="organisations", run_id=run_id, now=now, settings=settings)]
    first += [NightlyTask(kind="reminders", run_id=run_id, now=now, settings=settings, scan=scan) for scan in SCANS]
    runs.start(run_id, now, settings.model_dump())
    return [task for task in first if sink.enqueue(task)]


class NightlyWorker:
    """Runs one nightly task (what the task queue functions call)."""

    def __init__(self, store: FactorJournalStore, signer: LinkSigner, base_url: str, sink: TaskSink) -> None:
        self.store, self.signer, self.base_url, self.sink = store, signer, base_url, sink
        self.directory = OrganisationDirectory(store)
        self.upkeep = RowUpkeep(store)

    def run(self, task: NightlyTask | dict[str, Any]) -> dict[str, Any]:
        """Do the task's work and record its marker; returns the marker's counts."""
        task = task if isinstance(task, NightlyTask) else NightlyTask.model_validate(task)
        handler: Callable[[NightlyTask], dict[str, Any]] = {
            "organisations": self._organisations,
            "organisation": self._organisation,
            "reminders": self._reminders,
        }[task.kind]
        counts = handler(task)
        marker = {"kind": task.kind, "chain": task.chain, "page": task.page, "scan": task.scan, **counts}
        self.store.nightly_runs.mark_done(task.run_id, task.key, marker)
        return marker

    def _organisations(self, task: NightlyTask) -> dict[str, Any]:
        ids, after = self.directory.organisation_page(task.after_org, task.settings.org_page_size)
        if after is not None:  # the next page starts while this one is being worked on
            self.sink.enqueue(task.follow(page=task.page + 1, after_org=after))
        for org_id in ids:
            self.sink.enqueue(NightlyTask(kind="organisation", run_id=task.run_id, now=task.now, org_id=org_id))
        return {"listed": ids, "more": after is not None}

    def _organisation(self, task: NightlyTask) -> dict[str, Any]:
        """One bounded step of an organisation's upkeep, then the next task of its chain (until its day is
        recorded); a damaged organisation document ends the chain, skipped."""
        org_id = str(task.org_id)
        try:
            organisation = self.directory.get(org_id)
        except DamagedOrganisationError as damage:  # one damaged organisation never stops the others' figures
            log.warning("organisation %s is damaged (%s): its day is not recorded", org_id, damage.reason)
            return {"skipped": [{"org_id": org_id, "reason": damage.reason}], "more": False}
        if organisation is None:  # deleted since it was listed
            return {"more": False}
        phase = task.phase or ("refresh" if self.upkeep.needs_refresh(organisation.rows_stamp) else "age")
        if phase == "refresh":
            step = self.upkeep.refresh_members(org_id, task.after)
            return self._next(task, "refresh" if step.after is not None else "strays", step.after, step.done)
        if phase == "strays":
            step = self.upkeep.remove_strays(org_id)
            return self._next(task, "strays" if step.after is not None else "age", None, step.done)
        if phase == "age":
            step = self.upkeep.age(org_id, task.now)
            return self._next(task, "age" if step.after is not None else "check", None, step.done)
        check = self.upkeep.check(org_id)
        day = self.directory.record_day(org_id, task.now)
        repaired = {shard: len(counters) for shard, counters in check.repaired.items()}
        return {"recorded": 1, "people": day.people, "repaired": repaired, "more": False}

    def _next(self, task: NightlyTask, phase: Phase, after: str | None, done: int) -> dict[str, Any]:
        self.sink.enqueue(task.follow(page=task.page + 1, phase=phase, after=after))
        return {"phase": task.phase, "rows": done, "more": True}

    def _reminders(self, task: NightlyTask) -> dict[str, Any]:
        policy = task.settings.policy()
        assert task.scan is not None
        page = due_page(self.store, task.scan, task.now - policy.inactive_after, task.cursor, policy.page_size)
        if page.next_cursor is not None:  # the next page starts while this one is being worked on
            self.sink.enqueue(task.follow(page=task.page + 1, cursor=page.next_cursor))
        mail_ids = remind(self.store, self.signer, self.base_url, page.people, task.now, policy)
        return {"seen": len(page.people), "sent": len(mail_ids), "more": page.next_cursor is not None}


class RunProgress(BaseModel):
    run_id: str
    complete: bool
    tasks: int  # distinct tasks finished
    executions: int  # task executions (more than tasks when some ran twice)
    organisations: int  # organisations whose day was recorded
    people_seen: int
    reminders_sent: int
    # organisations whose document no longer reads, by id: why (the field), their day not recorded
    skipped_organisations: dict[str, str] = Field(default_factory=dict)
    repaired_organisations: list[str] = Field(default_factory=list)  # whose figures had drifted from their rows


def progress(runs: NightlyRuns, run_id: str) -> RunProgress:
    """How far a run got, from its task markers (one read per finished task).

    Complete when each chain of pages (organisations, each organisation listed, every reminder scan) has a last
    page with every page before it.
    """
    markers = runs.markers(run_id)
    chains: dict[str, list[dict[str, Any]]] = {}
    for marker in markers:
        chains.setdefault(marker.get("chain") or f"{marker['kind']}/{marker.get('scan')}", []).append(marker)
    listed = {str(org_id) for m in markers if m["kind"] == "organisations" for org_id in m.get("listed") or []}
    expected_chains = {"organisations", *(f"reminders/{scan}" for scan in SCANS)}
    expected_chains |= {f"organisation/{org_id}" for org_id in listed}

    def chain_done(pages: list[dict[str, Any]]) -> bool:
        ends = [m["page"] for m in pages if not m.get("more")]
        return bool(ends) and len({m["page"] for m in pages if m["page"] <= ends[0]}) == ends[0] + 1

    complete = set(chains) >= expected_chains and all(chain_done(chains[c]) for c in expected_chains)
    return RunProgress(
        run_id=run_id,
        complete=complete,
        tasks=len(markers),
        executions=sum(m.get("executions", 0) for m in markers),
        organisations=sum(m.get("recorded", 0) for m in markers),
        people_seen=sum(m.get("seen", 0) for m in markers),
        reminders_sent=sum(m.get("sent", 0) for m in markers),
        skipped_organisations={
            str(skip.get("org_id")): str(skip.get("reason")) for m in markers for skip in m.get("skipped") or []
        },
        repaired_organisations=sorted(
            str(m.get("chain", "")).removeprefix("organisation/") for m in markers if m.get("repaired")
        ),
    )
