"""Keeping an organisation's rows and figures true as time passes and the catalog changes (the nightly job).

Each step is idempotent and bounded (``limit`` rows a call, resumed from a cursor), so the nightly job runs it
in tasks of bounded work and a task run twice writes nothing twice:

* ``refresh``: after a catalog or freshness change is deployed (the organisation's ``rows_stamp`` is not the
  catalog's ``rollup.row_stamp``), every member's summary is rebuilt for the new catalog from its factor
  states and their row from it (``store.rewrite_row``), then rows left by people no longer members are removed
  and the rows of the earlier format deleted, then the stamp is recorded;
* ``age``: rows whose ``next_change`` has come are aged to now (an answer fell due, someone went quiet, decay
  took someone below their tier), each with its figures in one transaction;
* ``check``: each figures shard is compared with the sum of its rows, and repaired (logged) when they differ.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime

from google.api_core import exceptions as api_exceptions

from factor_journal.repositories.organisations import ShardCheck
from factor_journal.rollup import FIGURE_SHARDS, aged, row_stamp
from factor_journal.store import FactorJournalStore

log = logging.getLogger(__name__)

UPKEEP_LIMIT = 200  # rows rebuilt or aged per call


@dataclass
class Step:
    """What a bounded step did and where the next call resumes (``after`` None: the step is finished)."""

    done: int
    after: str | None = None
    repaired: dict[str, dict[str, float]] = field(default_factory=dict)  # figures shard -> what was added


class RowUpkeep:
    def __init__(self, store: FactorJournalStore) -> None:
        self.store = store
        self.records = store.organisations
        self.stamp = row_stamp(store.catalog)

    def needs_refresh(self, org_stamp: str) -> bool:
        return org_stamp != self.stamp

    def refresh_members(self, org_id: str, after: str | None = None, limit: int = UPKEEP_LIMIT) -> Step:
        """Rebuild the rows (and the summaries, for a new catalog) of up to ``limit`` members after ``after``."""
        members = self.records.member_page(org_id, after, limit)
        for user_id in members:
            self.store.rewrite_row(user_id, org_id, refresh_summary=True)
        return Step(done=len(members), after=members[-1] if len(members) == limit else None)

    def remove_strays(self, org_id: str, limit: int = UPKEEP_LIMIT) -> Step:
        """Once every member's row is rebuilt: rebuild or remove up to ``limit`` rows of other stamps (people no
        longer members); when none is left, delete the earlier format's shards and record the stamp."""
        strays = self.records.rows_not_stamped(org_id, self.stamp, limit)
        for user_id in strays:
            self.store.rewrite_row(user_id, org_id)
        if len(strays) == limit:
            return Step(done=len(strays), after="")
        self.records.drop_legacy_rows(org_id)
        self.records.upsert(org_id, {"rows_stamp": self.stamp})
        log.info("rows of %s rebuilt for %s", org_id, self.stamp)
        return Step(done=len(strays))

    def refresh(self, org_id: str) -> int:
        """Every step of a refresh at once (``python -m factor_journal refresh-rows``, tests): the rows done."""
        done, after = 0, None
        while True:
            step = self.refresh_members(org_id, after)
            done, after = done + step.done, step.after
            if after is None:
                break
        while (step := self.remove_strays(org_id)).after is not None:
            done += step.done
        return done + step.done

    def age(self, org_id: str, now: datetime, limit: int = UPKEEP_LIMIT) -> Step:
        """Age up to ``limit`` rows whose ``next_change`` is at or before ``now``; ``after`` is set while more
        may be due."""
        due = self.records.rows_due(org_id, now, limit)
        for user_id in due:
            self.store.age_row(user_id, org_id, now, lambda row: aged(row, self.store.catalog, now))
        return Step(done=len(due), after="" if len(due) == limit else None)

    def check(self, org_id: str) -> Step:
        """Compare every figures shard with its rows and repair what drifted (each repair logged)."""
        repaired: dict[str, dict[str, float]] = {}
        rows = 0
        for index in range(FIGURE_SHARDS):
            shard = f"shard-{index:02d}"
            try:
                found: ShardCheck = self.records.check_shard(org_id, shard)
            except api_exceptions.GoogleAPICallError as error:  # one shard never stops the others' check
                log.warning("figures shard %s of %s not checked: %s", shard, org_id, error)
                continue
            rows += found.rows
            if found.repaired:
                repaired[shard] = found.repaired
                log.warning(
                    "figures shard %s of %s had drifted from its %d rows: repaired (%d counters: %s)",
                    shard,
                    org_id,
                    found.rows,
                    len(found.repaired),
                    ", ".join(f"{key} {value:+g}" for key, value in list(found.repaired.items())[:8]),
                )
        return Step(done=rows, repaired=repaired)
