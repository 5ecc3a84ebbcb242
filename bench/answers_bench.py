"""Issue 47 figures: every answer carries a vector, understood or not.

One person's journal holds the 1,000 entries of the ask suite (``ask_bench.seed_journal``); Ask is measured on it
(the 16 held-out questions, three rounds after a warm-up), then 1,000 answers are added beside it (700 that fed
journal entries, the held-out dozen's among them, and 300 the reader understood nothing from, composed from the
same everyday phrases) and Ask is measured again, the same hour on the same emulator.  Measured:

* **Ask's latency and reads at 1,000 answers beside 1,000 journal entries**, against the journal alone, and the
  answers' own ``find_nearest``;
* **the extra write and bytes per answer**: a turn settled with and without its answer's vector (alternating, the
  same person; a turn with no reading, so the answer's vector is the only vector written), and the vector
  document's size by Firestore's storage-size rules beside the turn's.
"""

from __future__ import annotations

import random
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from bench.ask_bench import ACTIONS, HELD_OUT, OBJECTS, SUBJECTS, ask_rounds, document_size, seed_journal
from bench.common import fresh_database, percentiles
from factor_journal.catalog import load_catalog
from factor_journal.embedding import WordLlamaEmbedder, spoken_lines
from factor_journal.models import JournalEntry, UserProfile
from factor_journal.questions import answer_question
from factor_journal.questions.intent import question_topic
from factor_journal.questions.search import SEARCH_LIMIT
from factor_journal.repositories.vectors import Answered, answer_id_of
from factor_journal.store import FactorJournalStore, TurnContext

ANSWERS = 1000
UNDERSTOOD = 700
WRITES_MEASURED = 60
CHUNK = 100
QUESTIONS = [
    "Why does it take our controller days to get the month closed?",
    "What did I say about the returns process?",
    "How are the figures for the board going?",
]


def _journal(store: FactorJournalStore, user: str) -> list[JournalEntry]:
    return [
        JournalEntry.model_validate(snapshot.to_dict())
        for factor in store.paths.factors(user).list_documents()
        for snapshot in factor.collection("journal").stream()
    ]


def _seed_answers(store: FactorJournalStore, user: str, embedder: WordLlamaEmbedder) -> int:
    """1,000 answers in one session, each a turn with its vector (written a hundred at a time, as ``reembed``
    does): the answers of 700 journal entries, with the entry each fed, and 300 that fed none."""
    rng = random.Random(47)
    session = store.start_session(user)
    entries = sorted(_journal(store, user), key=lambda entry: entry.observed_at)[:UNDERSTOOD]
    start = datetime.now(UTC) - timedelta(days=200)
    answers: list[tuple[str, dict[str, str]]] = [
        (spoken_lines(e.conversation_excerpt)[1], {e.entry_id: e.factor_id}) for e in entries
    ]
    while len(answers) < ANSWERS:
        said = f"{rng.choice(SUBJECTS)} {rng.choice(ACTIONS)} {rng.choice(OBJECTS)}."
        answers.append((said, {}))
    rng.shuffle(answers)
    for first in range(0, len(answers), CHUNK):
        part = answers[first : first + CHUNK]
        vectors = embedder.embed_documents([said for said, _ in part])
        batch = store.client.batch()
        for index, ((said, fed), vector) in enumerate(zip(part, vectors, strict=True)):
            at = start + timedelta(minutes=11 * (first + index))
            turn = f"t{first + index:05d}"
            batch.set(store.paths.turn(user, session, turn), {"role": "user", "text": said, "created_at": at})
            answer = Answered(user, session, turn, at, "processed" if fed else "no_update", entries=fed)
            batch.set(
                store.paths.answer_vector(user, answer_id_of(session, turn)), answer.document(vector, embedder, said)
            )
        batch.commit()
    return sum(1 for _ in store.paths.answer_vectors(user).select([]).stream())


def _ask_answers(store: FactorJournalStore, user: str, embedder: WordLlamaEmbedder) -> dict[str, Any]:
    """Ask with the answers beside the journal (``ask_rounds``), the answers' own search timed apart, and how many
    of the held-out questions (each about an answer that was understood) also cite words of the 300 answers the
    reader understood nothing from, which are about none of them: what a loose match adds to an answer."""
    figures = ask_rounds(store, user)
    search = []
    for _ in range(3):
        for question in QUESTIONS:
            vector = embedder.embed_query(question_topic(question))
            started = time.perf_counter()
            store.vectors.answers.nearest(user, vector, embedder.model_id, SEARCH_LIMIT)
            search.append((time.perf_counter() - started) * 1000)
    figures["parts"]["find_nearest_answers"] = percentiles(search)
    cited = [len(answer_question(store, user, item["q"]).unassessed_answers) for item in HELD_OUT["questions"]]
    figures["held_out_citing_unread_answers"] = f"{sum(1 for n in cited if n)}/{len(cited)}"
    figures["unread_answers_cited_mean"] = round(sum(cited) / len(cited), 2)
    return figures


def _answer_writes(store: FactorJournalStore, user: str, embedder: WordLlamaEmbedder) -> dict[str, Any]:
    """A turn settled with its answer's vector and without (the embedder switched off), alternating; and the sizes
    of the vector documents and of the turns they belong to."""
    session = store.start_session(user)
    times: dict[str, list[float]] = {"with_vector": [], "without_vector": []}
    writes: dict[str, list[int]] = {"with_vector": [], "without_vector": []}
    at = datetime.now(UTC) - timedelta(hours=2)
    for index in range(WRITES_MEASURED):
        label = "with_vector" if index % 2 == 0 else "without_vector"
        said = f"{SUBJECTS[index % len(SUBJECTS)]} {ACTIONS[index % len(ACTIONS)]} {OBJECTS[index % len(OBJECTS)]}."
        moment = at + timedelta(seconds=index)
        turn = store.add_turn(user, session, "user", said, created_at=moment)
        store.changes.embedder = embedder if label == "with_vector" else None
        store.stats.reset()
        started = time.perf_counter()
        store.record_inferences(user, [], turn=TurnContext(session, turn, moment, answer=said))
        times[label].append((time.perf_counter() - started) * 1000)
        writes[label].append(store.stats.writes)
    store.changes.embedder = embedder
    result: dict[str, Any] = {}
    for label in times:
        result[label] = {**percentiles(times[label]), "writes_mean": round(sum(writes[label]) / len(writes[label]), 2)}
    result["extra_writes_per_answer"] = round(
        result["with_vector"]["writes_mean"] - result["without_vector"]["writes_mean"], 2
    )
    result["extra_p50_ms"] = round(result["with_vector"]["p50_ms"] - result["without_vector"]["p50_ms"], 2)
    vectors = list(store.paths.answer_vectors(user).limit(200).stream())
    sizes = [document_size(s.reference.path, s.to_dict() or {}) for s in vectors]
    turns = []
    for snapshot in vectors[:50]:
        data = snapshot.to_dict() or {}
        stored = store.paths.turn(user, data["session_id"], data["turn_id"]).get()
        turns.append(document_size(stored.reference.path, stored.to_dict() or {}))
    result["answer_vector_bytes_mean"] = round(sum(sizes) / len(sizes))
    result["turn_bytes_mean"] = round(sum(turns) / len(turns))
    result["note"] = "by Firestore's storage-size rules; the vector index's own entries are not counted"
    return result


def run() -> dict[str, Any]:
    catalog = load_catalog()
    client = fresh_database("fj-bench-answers")
    store = FactorJournalStore(client, catalog)
    embedder = WordLlamaEmbedder()
    store.changes.embedder = embedder
    user = f"bench-answers-{uuid.uuid4().hex[:8]}"
    store.register_user(UserProfile(user_id=user))
    seed_journal(store, user)
    results: dict[str, Any] = {"journal_entries": 1000, "ask_journal_alone": ask_rounds(store, user)}
    started = time.perf_counter()
    results["answers"] = _seed_answers(store, user, embedder)
    results["answers_understood"] = UNDERSTOOD
    results["seed_answers_seconds"] = round(time.perf_counter() - started, 1)
    results["ask_with_answers"] = _ask_answers(store, user, embedder)
    results["per_answer_vector"] = _answer_writes(store, user, embedder)
    alone, both, per = results["ask_journal_alone"], results["ask_with_answers"], results["per_answer_vector"]
    results["extra_p50_ms"] = round(both["p50_ms"] - alone["p50_ms"], 2)
    print(
        f"  answers: Ask at 1,000 entries p50 {alone['p50_ms']} ms p95 {alone['p95_ms']} ms, "
        f"reads {alone['reads_mean']}; "
        f"with {results['answers']} answers beside them p50 {both['p50_ms']} ms p95 {both['p95_ms']} ms, "
        f"reads {both['reads_mean']}; answers' find_nearest p50 {both['parts']['find_nearest_answers']['p50_ms']} ms; "
        f"per answer {per['extra_writes_per_answer']} write, {per['answer_vector_bytes_mean']} B "
        f"(its turn {per['turn_bytes_mean']} B), settle p50 {per['with_vector']['p50_ms']} vs "
        f"{per['without_vector']['p50_ms']} ms"
    )
    return results
