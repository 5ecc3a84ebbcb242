"""Gemini embeddings through google-genai in Vertex mode, against the local Vertex stand-in; and a change of
embedding model detected and fixed by ``python -m factor_journal reembed`` on the emulator (issue 33).

The stand-in answers an embedding request with the offline model's vector of the same text, zero-padded to
the dimension asked for and scaled (Gemini's vectors below 3,072 dimensions are not unit length): so a search
through the Gemini path finds what the offline one would, and the code's normalisation is exercised.
"""

from __future__ import annotations

import math
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from factor_journal import cli, runtime
from factor_journal.embedding import (
    EmbeddingError,
    GeminiEmbedder,
    GeminiEmbeddingSettings,
    WordLlamaEmbedder,
    default_embedder,
)
from factor_journal.extraction.sentence_model import embed
from factor_journal.models import InferredUpdate, UserProfile
from factor_journal.questions import answer_question
from factor_journal.repositories.vectors import ReembedReport
from factor_journal.store import FactorJournalStore
from vertex_stand_in import Step, VertexStandIn, error


def padded(text: str, dimensions: int) -> list[float]:
    values = [3.0 * float(v) for v in embed([text])[0]][:dimensions]
    return values + [0.0] * (dimensions - len(values))


def gemini(url: str, dimensions: int = 768, attempts: int = 2) -> GeminiEmbedder:
    return GeminiEmbedder(
        GeminiEmbeddingSettings(dimensions=dimensions, base_url=url, project="demo", max_attempts=attempts)
    )


def test_documents_and_questions_are_embedded_with_their_task_and_dimension_and_normalised():
    with VertexStandIn([Step()], embed=padded) as vertex:
        embedder = gemini(vertex.url)
        [document] = embedder.embed_documents(["The drivers write their routes on paper."])
        query = embedder.embed_query("the delivery vans")
    assert embedder.model_id == "gemini-embedding-001@768" and embedder.dimensions == 768 and not embedder.local
    assert len(document) == 768 and math.isclose(sum(v * v for v in document), 1.0, rel_tol=1e-6)
    assert len(query) == 768
    assert all(path.endswith("/publishers/google/models/gemini-embedding-001:embedContent") for path in vertex.paths)
    configs = [request["embedContentConfig"] for request in vertex.requests]
    assert configs == [
        {"taskType": "RETRIEVAL_DOCUMENT", "outputDimensionality": 768},
        {"taskType": "RETRIEVAL_QUERY", "outputDimensionality": 768},
    ]
    assert vertex.requests[0]["content"]["parts"][0]["text"] == "The drivers write their routes on paper."
    assert embedder.tokens == 14  # as Vertex reports them (the cost)


def test_a_transient_failure_is_retried_and_a_lasting_one_is_a_typed_error():
    with VertexStandIn([error(503), Step()], embed=padded) as vertex:
        assert len(gemini(vertex.url).embed_query("budget")) == 768
        assert len(vertex.requests) == 2
    with VertexStandIn([error(400)], embed=padded) as vertex, pytest.raises(EmbeddingError, match="400"):
        gemini(vertex.url).embed_query("budget")
    wrong = VertexStandIn([Step()], embed=lambda text, _: [1.0] * 10)
    with wrong as vertex, pytest.raises(EmbeddingError, match="10 dimensions, expected 768"):
        gemini(vertex.url).embed_query("budget")


SAID = [
    (
        "data_quality",
        "Who fixes the numbers?",
        "Our controller fixes the branches' spreadsheets by hand every quarter.",
    ),
    ("maintenance_practice", "How are machines looked after?", "We repair the forklifts when they break down."),
    ("budget_commitment", "Is there money for it?", "Nothing in this year's budget for it."),
]


@pytest.fixture
def cli_database(monkeypatch):
    monkeypatch.setenv("FJ_FIRESTORE_DATABASE", "fj-tests")
    runtime.reset()
    default_embedder.cache_clear()
    yield monkeypatch
    runtime.reset()
    default_embedder.cache_clear()


def test_a_change_of_model_is_detected_and_reembed_fixes_it_resumably(cli_database, firestore_client, catalog, capsys):
    store = FactorJournalStore(firestore_client, catalog)
    store.changes.embedder = WordLlamaEmbedder()  # the journal is written with the offline model
    user = f"u-{uuid.uuid4().hex[:12]}"
    store.register_user(UserProfile(user_id=user))
    start = datetime.now(UTC) - timedelta(days=3)
    for index, (factor, asked, said) in enumerate(SAID):
        store.record_inference(
            user,
            InferredUpdate(
                factor_id=factor,
                value=25,
                confidence=0.7,
                rationale=f"reads as low ({factor})",
                conversation_excerpt=f"Assistant: {asked}\nUser: {said}",
                observed_at=start + timedelta(hours=index),
            ),
        )
    question = "Why are the quarterly numbers always late?"
    assert answer_question(store, user, question).found_by == "journal"

    with VertexStandIn([Step()], embed=padded) as vertex:
        cli_database.setenv("FJ_EMBEDDER", "gemini")
        cli_database.setenv("FJ_GEMINI_BASE_URL", vertex.url)
        cli_database.setenv("FJ_GEMINI_PROJECT", "demo")
        runtime.reset()
        default_embedder.cache_clear()
        model = gemini(vertex.url)

        # Detected: every vector is of the offline model; the search never compares them with Gemini's.
        assert cli.main(["reembed", "--user", user, "--check"]) == 1
        out = capsys.readouterr().out
        assert "model gemini-embedding-001@768" in out and "3 stale" in out and "0 written" in out
        stale = answer_question(store, user, question, embedder=model)
        assert stale.found_by != "journal" and not any(c.similarity for c in stale.citations)

        # Interrupted after the first vector (the model refuses the second request): what was done stays done.
        vertex.steps[:] = [Step(), error(400)]
        report = ReembedReport()
        with pytest.raises(EmbeddingError):
            store.changes.vectors.reembed_user(user, model, report, chunk=1)
        assert report.written == 1
        vertex.steps[:] = [Step()]

        # Resumed by running it again: only the rest is embedded; a further run writes nothing (idempotent).
        assert cli.main(["reembed", "--user", user]) == 0
        out = capsys.readouterr().out
        assert "1 current, 2 stale" in out and "2 written" in out
        assert cli.main(["reembed", "--user", user, "--check"]) == 0
        assert "3 current, 0 stale, 0 missing" in capsys.readouterr().out
        requests = len(vertex.requests)
        assert cli.main(["reembed", "--user", user]) == 0
        assert "0 written" in capsys.readouterr().out and len(vertex.requests) == requests

        fixed = answer_question(store, user, question, embedder=model)
        assert fixed.found_by == "journal" and fixed.citations[0].factor_id == "data_quality"
        stored = {s.id: s.to_dict() for s in store.paths.vectors(user).stream()}
        assert {d["embedding_model"] for d in stored.values()} == {"gemini-embedding-001@768"}
        assert {d["embedding_dimensions"] for d in stored.values()} == {768}
