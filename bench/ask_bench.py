"""Issue 33 figures: "ask in your own words" at 1,000 journal entries.

One person's journal holds 1,000 entries: the dozen plainly worded answers of the held-out set
(tests/fixtures/ask_own_words.json) and 988 other answers composed from everyday phrases, each read as one
of the catalog's factors.  Measured on the emulators:

* **an Ask that takes the semantic fallback** (the 16 held-out questions, none naming a factor, three rounds
  after one warm-up): document reads and latency p50/p95, and how many cite the expected factor among
  1,000 entries (the 14/16 gate is the test's, on the dozen-answer journal);
* **the vector's cost per journal entry**: its document's size by Firestore's storage-size rules beside the
  entry's, and the write time of one reading with and without its vector (alternating, same person).
"""

from __future__ import annotations

import json
import random
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from google.cloud.firestore_v1.vector import Vector

from bench.common import fresh_database, percentiles
from factor_journal.catalog import load_catalog
from factor_journal.conversation import Turn, format_excerpt
from factor_journal.embedding import WordLlamaEmbedder
from factor_journal.models import InferredUpdate, UserProfile
from factor_journal.questions import answer_question
from factor_journal.questions.intent import question_topic
from factor_journal.questions.search import SEARCH_LIMIT, rank_catalog
from factor_journal.store import FactorJournalStore

HELD_OUT = json.loads((Path(__file__).parents[1] / "tests" / "fixtures" / "ask_own_words.json").read_text())
ENTRIES = 1000
WRITES_MEASURED = 60
ROUNDS = 3

SUBJECTS = [
    "The team",
    "Our supplier",
    "Finance",
    "The night shift",
    "Head office",
    "The new hire",
    "Marketing",
    "Our biggest client",
    "The plant manager",
    "The IT contractor",
    "Customer service",
    "The auditors",
]
ACTIONS = [
    "keeps asking about",
    "has no time for",
    "complained again about",
    "wants a report on",
    "is still waiting for",
    "signed off on",
    "never looks at",
    "spent the month on",
]
OBJECTS = [
    "the price list",
    "the holiday rota",
    "the safety checks",
    "the new website",
    "invoices from Poland",
    "the parking situation",
    "the coffee machine",
    "training for the apprentices",
    "the trade fair",
    "the returns process",
    "the loyalty cards",
    "the office move",
    "overtime rules",
    "the email backlog",
]
ASKED = ["What else is going on?", "Anything else I should know?", "How are things otherwise?", "What's new?"]


def storage_size(value: Any) -> int:
    """A value's size by Firestore's storage-size rules (strings: UTF-8 bytes + 1; numbers, timestamps: 8;
    booleans, null: 1; maps and arrays: the sum of their parts (map keys as strings); a vector: its doubles)."""
    if isinstance(value, Vector):
        return 8 * len(value.to_map_value()["value"])
    if isinstance(value, str):
        return len(value.encode()) + 1
    if isinstance(value, bool) or value is None:
        return 1
    if isinstance(value, int | float | datetime):
        return 8
    if isinstance(value, dict):
        return sum(storage_size(str(k)) + storage_size(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return sum(storage_size(v) for v in value)
    return len(str(value)) + 1


def document_size(path: str, data: dict[str, Any]) -> int:
    """A document's stored size: its name (each path segment's bytes + 1, plus 16) and its fields, plus 32."""
    name = sum(len(part.encode()) + 1 for part in path.split("/")) + 16
    return name + storage_size(data) + 32


def _excerpt(asked: str, said: str, at: datetime) -> str:
    return format_excerpt(
        [
            Turn(turn_id="a", role="assistant", text=asked, created_at=at),
            Turn(turn_id="u", role="user", text=said, created_at=at),
        ]
    )


def seed_journal(store: FactorJournalStore, user: str) -> None:
    """1,000 entries: the held-out dozen and 988 everyday answers, six readings per transaction."""
    rng = random.Random(33)
    factors = [f.id for f in store.catalog.assessable_factors]
    start = datetime.now(UTC) - timedelta(days=300)
    updates = []
    for index, item in enumerate(HELD_OUT["journal"]):
        at = start + timedelta(days=10 * index)
        updates.append((item["expected"], item["asked"], item["said"], at))
    while len(updates) < ENTRIES:
        said = f"{rng.choice(SUBJECTS)} {rng.choice(ACTIONS)} {rng.choice(OBJECTS)}."
        at = start + timedelta(minutes=17 * len(updates))
        updates.append((rng.choice(factors), rng.choice(ASKED), said, at))
    rng.shuffle(updates)
    batch: list[InferredUpdate] = []
    for factor, asked, said, at in updates:
        if any(u.factor_id == factor for u in batch) or len(batch) == 6:
            store.record_inferences(user, batch)
            batch = []
        batch.append(
            InferredUpdate(
                factor_id=factor,
                value=rng.choice([20.0, 50.0, 80.0]),
                confidence=0.6,
                rationale=f'User said "{said}": reads as mid.',
                conversation_excerpt=_excerpt(asked, said, at),
                observed_at=at,
            )
        )
    if batch:
        store.record_inferences(user, batch)


def ask_rounds(store: FactorJournalStore, user: str) -> dict[str, Any]:
    answer_question(store, user, "How are the figures for the board going?")  # warm-up: loads the models
    latencies, reads, cited, found = [], [], 0, {}
    for round_ in range(ROUNDS):
        for item in HELD_OUT["questions"]:
            store.stats.reset()
            started = time.perf_counter()
            answer = answer_question(store, user, item["q"])
            latencies.append((time.perf_counter() - started) * 1000)
            reads.append(store.stats.reads)
            if round_ == 0:
                cited += item["expected"] in [c.factor_id for c in answer.citations]
                found[answer.found_by] = found.get(answer.found_by, 0) + 1
    ordered = sorted(reads)
    ranking, search, embedding = [], [], []
    embedder = store.changes.embedder
    for item in HELD_OUT["questions"]:  # where the time goes: the parts of the fallback, one at a time
        topic = question_topic(item["q"])
        started = time.perf_counter()
        rank_catalog(store.catalog, topic)
        ranking.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        vector = embedder.embed_query(topic)  # type: ignore[union-attr]
        embedding.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        store.changes.vectors.nearest(user, vector, embedder.model_id, SEARCH_LIMIT)  # type: ignore[union-attr]
        search.append((time.perf_counter() - started) * 1000)
    parts = {
        "catalog_ranking": percentiles(ranking),
        "embed_question": percentiles(embedding),
        "find_nearest": percentiles(search),
    }
    return {
        "parts": parts,
        "questions": len(HELD_OUT["questions"]),
        "rounds": ROUNDS,
        **percentiles(latencies),
        "reads_mean": round(sum(reads) / len(reads), 1),
        "reads_max": ordered[-1],
        "reads_min": ordered[0],
        "cited_expected_factor_at_1000_entries": f"{cited}/{len(HELD_OUT['questions'])}",
        "found_by": found,
    }


def _writes(store: FactorJournalStore, user: str) -> dict[str, Any]:
    """One reading with its vector and without (the embedder switched off), alternating."""
    embedder = store.changes.embedder
    times: dict[str, list[float]] = {"with_vector": [], "without_vector": []}
    writes: dict[str, list[int]] = {"with_vector": [], "without_vector": []}
    at = datetime.now(UTC)
    for index in range(WRITES_MEASURED):
        label = "with_vector" if index % 2 == 0 else "without_vector"
        store.changes.embedder = embedder if label == "with_vector" else None
        said = f"{SUBJECTS[index % len(SUBJECTS)]} {ACTIONS[index % len(ACTIONS)]} {OBJECTS[index % len(OBJECTS)]}."
        update = InferredUpdate(
            factor_id="staff_capacity",
            value=40.0,
            confidence=0.6,
            rationale=f'User said "{said}"',
            conversation_excerpt=_excerpt("Anything else?", said, at),
            observed_at=at + timedelta(seconds=index),
        )
        store.stats.reset()
        started = time.perf_counter()
        store.record_inferences(user, [update])
        times[label].append((time.perf_counter() - started) * 1000)
        writes[label].append(store.stats.writes)
    store.changes.embedder = embedder
    started = time.perf_counter()
    for index in range(200):
        embedder.embed_documents([f"{SUBJECTS[index % 12]} {ACTIONS[index % 8]} {OBJECTS[index % 14]}."])  # type: ignore[union-attr]
    embed_ms = (time.perf_counter() - started) * 1000 / 200
    result: dict[str, Any] = {"embed_one_entry_ms": round(embed_ms, 3)}
    for label in times:
        result[label] = {**percentiles(times[label]), "writes_mean": round(sum(writes[label]) / len(writes[label]), 2)}
    result["extra_p50_ms"] = round(result["with_vector"]["p50_ms"] - result["without_vector"]["p50_ms"], 2)
    return result


def _sizes(store: FactorJournalStore, user: str) -> dict[str, Any]:
    vectors = list(store.paths.vectors(user).limit(200).stream())
    vector_sizes = [document_size(s.reference.path, s.to_dict() or {}) for s in vectors]
    entries = []
    for snapshot in vectors[:50]:
        data = snapshot.to_dict() or {}
        entry = store.paths.journal(user, data["factor_id"]).document(snapshot.id).get()
        entries.append(document_size(entry.reference.path, entry.to_dict() or {}))
    mean_vector = sum(vector_sizes) / len(vector_sizes)
    mean_entry = sum(entries) / len(entries)
    return {
        "vector_document_bytes_mean": round(mean_vector),
        "journal_entry_bytes_mean": round(mean_entry),
        "extra_bytes_per_entry_percent": round(100 * mean_vector / mean_entry),
        "note": "by Firestore's storage-size rules; the vector index's own entries are not counted",
    }


def run() -> dict[str, Any]:
    catalog = load_catalog()
    client = fresh_database("fj-bench-ask")
    store = FactorJournalStore(client, catalog)
    store.changes.embedder = WordLlamaEmbedder()
    user = f"bench-ask-{uuid.uuid4().hex[:8]}"
    store.register_user(UserProfile(user_id=user))
    started = time.perf_counter()
    seed_journal(store, user)
    seeded = time.perf_counter() - started
    vectors = sum(1 for _ in store.paths.vectors(user).select([]).stream())
    results: dict[str, Any] = {"journal_entries": ENTRIES, "vectors": vectors, "seed_seconds": round(seeded, 1)}
    results["ask_with_fallback"] = ask_rounds(store, user)
    results["per_entry_vector"] = _sizes(store, user) | _writes(store, user)
    ask, per = results["ask_with_fallback"], results["per_entry_vector"]
    print(
        f"  ask: {ENTRIES} entries, fallback p50 {ask['p50_ms']} ms p95 {ask['p95_ms']} ms, "
        f"reads {ask['reads_mean']} (max {ask['reads_max']}), cited {ask['cited_expected_factor_at_1000_entries']}; "
        f"find_nearest p50 {ask['parts']['find_nearest']['p50_ms']} ms, "
        f"ranking {ask['parts']['catalog_ranking']['p50_ms']} ms; "
        f"vector {per['vector_document_bytes_mean']} B per entry (entry {per['journal_entry_bytes_mean']} B), "
        f"write p50 {per['with_vector']['p50_ms']} vs {per['without_vector']['p50_ms']} ms"
    )
    return results
