"""Issue 3 figures: the conversation trigger end to end, its Firestore cost, and the prompt size.

* End-to-end latency in the emulators: a client writes a user turn, the deployed
  trigger (Functions emulator) analyses it; measured until the summary shows it.
* Document reads and writes per analysed turn, counted in-process by the store.
* Extraction prompt size (estimated tokens) for a session of 5 and of 200 turns:
  the prompt carries the recent exchanges and the candidate factors only, so it
  should not grow with the session.
"""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from google.cloud import firestore

from bench.common import PROJECT_ID, fresh_database, percentiles
from factor_journal.candidates import select_candidates
from factor_journal.catalog import load_catalog
from factor_journal.extraction.base import ExchangeTurn, ExtractionRequest
from factor_journal.extraction.offline import OfflineExtractor
from factor_journal.extraction.prompts import estimate_tokens, reader_instruction, turn_prompt
from factor_journal.models import UserProfile
from factor_journal.pipeline import CONTEXT_TURNS, TurnProcessor
from factor_journal.settings import Settings
from factor_journal.store import FactorJournalStore

SAYINGS = [
    "Our data is all over the place, 5 different systems and lots of spreadsheets.",
    "No, we don't have a data catalog. Nobody owns the data really.",
    "We have sensors on the newest presses and collect telemetry.",
    "We have two data scientists in the BI team.",
    "We moved to a cloud data warehouse last year.",
    "Order entry is manual entry from emails.",
]
E2E_TURNS = 20
TURNS_PER_PERSON = 5
UNLIMITED = Settings(turns_per_minute=1000, turns_per_day=100000)  # the bench measures cost, not the limit


def _end_to_end() -> dict[str, Any]:
    client = firestore.Client(project=PROJECT_ID)  # the default database: the trigger listens here
    store = FactorJournalStore(client, load_catalog())
    samples = []
    for index in range(E2E_TURNS):
        if index % TURNS_PER_PERSON == 0:  # a new person every few turns: no one reaches the turn rate limit
            user = f"bench-e2e-{uuid.uuid4().hex[:8]}"
            store.register_user(UserProfile(user_id=user))
            session = store.start_session(user)
        store.add_turn(user, session, "assistant", "Tell me more about your data and systems.")
        written = time.perf_counter()
        turn = store.add_turn(user, session, "user", SAYINGS[index % len(SAYINGS)])
        while True:
            extraction = (store.turn_data(user, session, turn) or {}).get("extraction") or {}
            if extraction.get("status") not in (None, "processing"):
                break
            if time.perf_counter() - written > 60:
                raise TimeoutError("the trigger did not run within 60 s: are the Functions emulator and trigger up?")
            time.sleep(0.02)
        samples.append((time.perf_counter() - written) * 1000)
    return {"turns": E2E_TURNS, **percentiles(samples)}


def _cost_per_turn() -> dict[str, Any]:
    client = fresh_database("fj-bench")
    store = FactorJournalStore(client, load_catalog())
    processor = TurnProcessor(store, OfflineExtractor(store.catalog), config=UNLIMITED)
    user = f"bench-cost-{uuid.uuid4().hex[:8]}"
    store.register_user(UserProfile(user_id=user, org_id="bench-org"))
    session = store.start_session(user)
    start = datetime.now(UTC) - timedelta(hours=1)
    reads, writes, updates = [], [], []
    for index in range(30):
        store.add_turn(
            user, session, "assistant", "And how is that going?", created_at=start + timedelta(seconds=20 * index)
        )
        turn = store.add_turn(
            user, session, "user", SAYINGS[index % len(SAYINGS)], created_at=start + timedelta(seconds=20 * index + 10)
        )
        store.stats.reset()
        outcome = processor.process(user, session, turn)
        reads.append(store.stats.reads)
        writes.append(store.stats.writes)
        updates.append(len(outcome.entry_ids))
    return {
        "turns": len(reads),
        "reads_per_turn": round(sum(reads) / len(reads), 2),
        "writes_per_turn": round(sum(writes) / len(writes), 2),
        "journal_entries_per_turn": round(sum(updates) / len(updates), 2),
        "note": "reads: turn context query, summary, session, then in the transaction user, summary, touched "
        "factors, turn, session; writes: entries, factors, summary, snapshot, roll-up row, turn, session, user",
    }


def _prompt_size(session_turns: int) -> dict[str, Any]:
    catalog = load_catalog()
    from factor_journal.graph import graph_for

    history = [
        ExchangeTurn(role="assistant" if i % 2 == 0 else "user", text=SAYINGS[i % len(SAYINGS)])
        for i in range(session_turns - 1)
    ]
    recent = history[-CONTEXT_TURNS:]
    text = SAYINGS[1]
    candidates = select_candidates(catalog, graph_for(catalog), text, recent[-1].text if recent else "", {})
    request = ExtractionRequest(
        user_id="u", session_id="s", turn_id="t", text=text, recent=recent, candidates=candidates
    )
    static = reader_instruction(catalog)  # the system instruction: the rules and the whole catalog, cached
    return {
        "session_turns": session_turns,
        "prompt_tokens_estimate": estimate_tokens(static + "\n" + turn_prompt(request)),
        "static_prefix_tokens_estimate": estimate_tokens(static),
        "candidates": len(candidates),
    }


def run() -> dict[str, Any]:
    results: dict[str, Any] = {"end_to_end_latency": _end_to_end()}
    print(
        f"  trigger: turn written -> analysed p50 {results['end_to_end_latency']['p50_ms']} ms, "
        f"p95 {results['end_to_end_latency']['p95_ms']} ms"
    )
    results["firestore_per_analysed_turn"] = _cost_per_turn()
    print(
        f"  trigger: {results['firestore_per_analysed_turn']['reads_per_turn']} reads, "
        f"{results['firestore_per_analysed_turn']['writes_per_turn']} writes per analysed turn"
    )
    results["prompt_size"] = [_prompt_size(5), _prompt_size(200)]
    print(
        f"  trigger: prompt ~{results['prompt_size'][0]['prompt_tokens_estimate']} tokens (5 turns), "
        f"~{results['prompt_size'][1]['prompt_tokens_estimate']} tokens (200 turns), of which the static prefix "
        f"(rules and the whole catalog) ~{results['prompt_size'][0]['static_prefix_tokens_estimate']}"
    )
    return results
