"""Page figures.

* Issue 4: document reads per page view, and the overview's server-side render time for a user with
  50 assessed factors and 5,000 journal entries (rendered with Streamlit's AppTest).
* Issues 11 and 48: the team page's server-side render at 2,000 and 20,000 people (seeded through the
  roll-up path), its first view and each rerun with a filter (tier, gone quiet, name search, to re-check), a
  later page of the table and another order, with the reads of each.  The overview's first view in a browser
  is its own suite (``first_view_bench.py``).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from bench.common import APP, app_on_fresh_database, measure_page, percentiles
from bench.org_bench import _seed_org
from dashboard.pages import person_page_names
from factor_journal import runtime
from factor_journal.extraction.base import ExtractionRequest, ExtractionResult
from factor_journal.links import LinkSigner
from factor_journal.models import InferredUpdate, UserProfile
from factor_journal.pipeline import TurnProcessor
from factor_journal.repositories.links import LinkRecords
from factor_journal.store import FactorJournalStore, entry_id_for

ASSESSED = 50
JOURNAL_ENTRIES = 5000
RENDERS = 15


def _seed(store: FactorJournalStore) -> str:
    user = f"bench-pages-{uuid.uuid4().hex[:8]}"
    store.register_user(UserProfile(user_id=user, display_name="Bench User"))
    factors = [f.id for f in store.catalog.assessable_factors][:ASSESSED]
    start = datetime.now(UTC) - timedelta(days=300)
    for index in range(0, len(factors), 6):
        store.record_inferences(
            user,
            [
                InferredUpdate(
                    factor_id=f,
                    value=30 + i,
                    confidence=0.7,
                    rationale="bench",
                    session_id="s1",
                    conversation_excerpt="User: benchmark words",
                    observed_at=start,
                )
                for i, f in enumerate(factors[index : index + 6])
            ],
        )
    per_factor = JOURNAL_ENTRIES // len(factors)
    writer = store.client.bulk_writer()
    for factor in factors:
        template = store.history(user, factor, page_size=1).entries[0]
        journal = store.client.document(f"users/{user}/factors/{factor}").collection("journal")
        for index in range(per_factor - 1):
            entry = template.model_copy(
                update={
                    "entry_id": entry_id_for(f"seed-{index}", factor),
                    "observed_at": start - timedelta(hours=index + 1),
                }
            )
            writer.set(journal.document(entry.entry_id), entry.to_document())
    writer.close()
    return user


TEAM_SIZES = (2000, 20000)
TEAM_TARGETS_MS = {2000: (300, 100), 20000: (500, 150)}  # issue 48: (first view, each click) AppTest p50
TEAM_RENDERS = 7
TEAM_VIEWS: dict[str, Callable[[Any], None]] = {
    "unfiltered": lambda app: None,
    "tier filter": lambda app: app.multiselect(key="team_tiers").select("low_risk"),
    "gone quiet": lambda app: app.toggle(key="team_quiet").set_value(True),
    "name search": lambda app: app.text_input(key="team_search").input("Person 01"),
    "table page 10": lambda app: app.number_input(key="team_page").set_value(10),
    "to re-check": lambda app: app.toggle(key="team_stale").set_value(True),
    "sort by least mapped": lambda app: app.selectbox(key="team_sort").select("Least mapped first"),
}


def _team_view(token: str, prepare: Callable[[Any], None], forget: Callable[[], None]) -> tuple[int, list[float]]:
    """(reads, render ms samples) of the team page with a filter applied, server side through AppTest; before
    each sample ``forget`` drops what the app keeps between reruns (a first view drops everything; a click the
    pages of rows, which a new filter, order or page has never read; a rerun nothing)."""
    from streamlit.testing.v1 import AppTest

    app = AppTest.from_file(APP, default_timeout=120)
    app.query_params["t"] = token
    app.run()  # sign-in
    prepare(app)
    app.run()  # the filter applied
    samples, reads = [], 0
    for _ in range(TEAM_RENDERS):
        forget()
        runtime.store().stats.reset()
        started = time.perf_counter()
        app.run()
        samples.append((time.perf_counter() - started) * 1000)
        reads = runtime.store().stats.reads
        if app.exception:
            raise RuntimeError(f"team page failed: {app.exception}")
    return reads, samples


def _team_page(client, people: int) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    from dashboard.views import manager

    def pages() -> None:
        manager._rows.clear()
        manager._count.clear()

    store = runtime.store()
    started = time.perf_counter()
    org, manager_id = _seed_org(store, people)
    seeded_in = time.perf_counter() - started
    token = LinkSigner(LinkRecords(client)).issue(manager_id, kind="manager", org_id=org)
    views: dict[str, Any] = {}
    reads, samples = _team_view(token, TEAM_VIEWS["unfiltered"], manager._forget)
    views["first view"] = {"reads": reads, **percentiles(samples)}
    print(f"  pages: team page, {people:,} people, first view: p50 {views['first view']['p50_ms']} ms, {reads} reads")
    for name, prepare in TEAM_VIEWS.items():
        click_reads, clicks = _team_view(token, prepare, pages)
        rerun_reads, reruns = _team_view(token, prepare, lambda: None)
        views[name] = {
            "click": {"reads": click_reads, **percentiles(clicks)},
            "rerun": {"reads": rerun_reads, **percentiles(reruns)},
        }
        print(
            f"  pages: team page, {people:,} people, {name}: click p50 {views[name]['click']['p50_ms']} ms "
            f"({click_reads} reads), rerun p50 {views[name]['rerun']['p50_ms']} ms ({rerun_reads} reads)"
        )
    first, click = TEAM_TARGETS_MS[people]
    return {
        "people": people,
        "seeded_seconds": round(seeded_in, 1),
        "views": views,
        "target_ms": {"first_view": first, "each_click": click},
        "note": "seeded through the roll-up path (rows aged and keyed as a change writes them, the figures moved "
        "by their counts, both read back). First view: nothing kept (the figures shards, the page of rows, the "
        "gone-quiet list, the daily history read). Click: the figures kept, the page of rows the new filter, order "
        "or page shows read (a Firestore query; the emulator scans the collection for it, production reads the "
        "declared index). Rerun: the same view again within the minute, the page kept.",
    }


CONVERSATION_ANSWERS = (1, 6, 12)


class _TwoReadings:
    """A stand-in model that reads every answer as two factors (the say-back shows two lines per answer)."""

    name = "bench"

    def extract(self, request: ExtractionRequest) -> ExtractionResult:
        updates = [
            {"factor_id": fid, "value": value, "confidence": 0.7, "rationale": "bench", "quote": request.text[:20]}
            for fid, value in (("data_quality", 20), ("ml_expertise", 50))
        ]
        return ExtractionResult(raw_updates=updates, extractor="bench", model="bench-1")


def _conversation(client) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """Reads of one conversation page view with 1, 6 and 12 analysed answers on it, each said back (two lines),
    and the same views with the say-back's readings taken off the turns: what the say-back costs per answer."""
    store = runtime.store()
    processor = TurnProcessor(store, _TwoReadings())
    figures: dict[str, Any] = {}
    for answers in CONVERSATION_ANSWERS:
        user = f"bench-conv-{uuid.uuid4().hex[:8]}"
        store.register_user(UserProfile(user_id=user, display_name="Bench Chat"))
        session = store.start_session(user)
        start = datetime.now(UTC) - timedelta(hours=1)
        turns = []
        for index in range(answers):
            store.add_turn(
                user, session, "assistant", f"Question {index}?", created_at=start + timedelta(minutes=index)
            )
            turn = store.add_turn(
                user,
                session,
                "user",
                f"Answer number {index} about our data.",
                created_at=start + timedelta(minutes=index, seconds=30),
            )
            processor.process(user, session, turn)
            turns.append(turn)
        store.add_turn(user, session, "assistant", "Next question?", created_at=start + timedelta(minutes=answers))
        token = LinkSigner(LinkRecords(client)).issue(user, session)
        with_sayback, _ = measure_page(token, "conversation")
        for turn in turns:
            store.turns(user, session).document(turn).update({"extraction.readings": []})
        without, _ = measure_page(token, "conversation")
        figures[f"{answers}_answers"] = {"reads": with_sayback, "reads_without_sayback": without}
    extra = [f["reads"] - f["reads_without_sayback"] for f in figures.values()]
    print(f"  pages: conversation page reads {figures}; extra reads for the say-back: {extra}")
    return {
        **figures,
        "extra_reads_for_sayback": max(extra),
        "note": "each answer's outcome (and what it was understood to say) is read with its turn document, which the "
        "page reads anyway: no read per answer beyond the turn itself; the factor states the lines show come from the "
        "summary, one read per page view",
    }


def run() -> dict[str, Any]:
    client = app_on_fresh_database("fj-bench")
    store = runtime.store()
    user = _seed(store)
    token = LinkSigner(LinkRecords(client)).issue(user)
    reads = {}
    for page in person_page_names():
        reads[page], _ = measure_page(token, page)
    samples = [measure_page(token, "overview")[1] for _ in range(RENDERS)]
    assessed = store.summary(user).overall.total_factors_assessed
    conversation = _conversation(client)
    teams = {f"team_page_{people}": _team_page(client, people) for people in TEAM_SIZES}
    results = {
        **teams,
        "conversation_page": conversation,
        "user": {"assessed_factors": assessed, "journal_entries": JOURNAL_ENTRIES},
        "reads_per_page_view": reads,
        "overview_render": percentiles(samples),
        "note": "reads counted after sign-in (the link and the viewer are re-checked on every run, cached 5 s: 2 reads "
        "per check for a person, 3 for a manager); "
        "history/review/ask read journal pages on demand; conversation reads the session's turns",
    }
    print(
        f"  pages: reads per view {reads}; overview render p50 {results['overview_render']['p50_ms']} ms "
        f"(p95 {results['overview_render']['p95_ms']} ms) for {assessed} factors / {JOURNAL_ENTRIES} entries"
    )
    return results
