"""Embeddings of what was said, for "ask in your own words" (issue 33).

Every journal entry that carries a person's words or an extractor's rationale gets a vector, written in the
transaction that writes the entry (``repositories.changes``; the vector lives server-only in
``users/{uid}/journal_vectors/{entry_id}``, see ``repositories.vectors``).  This module holds what is not
Firestore:

* **what is embedded** (``said_text``): the assistant's question, the person's answer and the rationale of
  one entry, a pure function of the entry (so a refold that rewrites an entry never changes its vector, and
  ``reembed`` can recompute it from the entry alone);
* **the embedders**, behind one small interface (``Embedder``): the offline model the semantic extractor
  already loads (WordLlama, 256 dimensions, the default) and, in production, Gemini's embedding model on
  Vertex AI through ``google-genai`` (``FJ_EMBEDDER=gemini``).  Each names its ``model_id`` (model and
  dimension): stored with every vector, so a change of model is detected and fixed by
  ``python -m factor_journal reembed``.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
from collections.abc import Sequence
from functools import lru_cache
from typing import Protocol

from pydantic import BaseModel, Field

from factor_journal.folding import COMBINED_MARK
from factor_journal.models import EntryKind, JournalEntry, Source

log = logging.getLogger(__name__)

SAID_LIMIT = 2000  # characters embedded per entry (a turn is at most 4,000; its excerpt line at most 240)
UNSPOKEN_KINDS = frozenset({EntryKind.confirmed, EntryKind.derived})  # no words: a click, a computation


class EmbeddingError(RuntimeError):
    """The embedding model could not embed (not loadable, unreachable after its retries, a malformed answer)."""


class Embedder(Protocol):
    """Turns texts into unit-length vectors of ``dimensions`` floats.

    ``model_id`` names the model and the dimension (it is stored with each vector: vectors of different
    ``model_id`` are never compared).  ``local`` says embedding is in-process and cheap (no I/O), so it may
    run inside a transaction; a remote embedder is only ever called before one."""

    model_id: str
    dimensions: int
    local: bool

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]: ...

    def embed_query(self, text: str) -> list[float]: ...


# What is embedded -----------------------------------------------------------------------------------------


def spoken_lines(excerpt: str) -> tuple[str, str]:
    """(the question asked, the person's answer) of an excerpt: its last ``User:`` line (the analysed turn)
    and the ``Assistant:`` line just before it."""
    lines = [line.strip() for line in excerpt.splitlines() if line.strip()]
    for index in range(len(lines) - 1, -1, -1):
        if lines[index].startswith("User:"):
            said = lines[index].removeprefix("User:").strip()
            before = lines[index - 1] if index else ""
            asked = before.removeprefix("Assistant:").strip() if before.startswith("Assistant:") else ""
            return asked, said
    return "", ""


def said_text(excerpt: str, rationale: str) -> str:
    """The text embedded for one journal entry: the question asked, the person's answer (the analysed turn of
    the excerpt) and the rationale, one per line; a rationale that only quotes the answer adds nothing.
    Empty when there is nothing said."""
    asked, said = spoken_lines(excerpt or "")
    rationale = " ".join((rationale or "").split(COMBINED_MARK, 1)[0].split())
    parts = [asked, said]
    if rationale and (not said or said[:60] not in rationale):
        parts.append(rationale)
    return "\n".join(part for part in parts if part)[:SAID_LIMIT]


def entry_said(entry: JournalEntry) -> str | None:
    """What an entry's vector embeds, or None when the entry carries no person's words and no extractor's
    rationale (a confirmation click, a composite's derivation, a system's own note)."""
    if EntryKind(entry.kind) in UNSPOKEN_KINDS or (Source(entry.source) == Source.system and not entry.turn_id):
        return None
    rationale = entry.reading_rationale if entry.reading_rationale is not None else entry.change_rationale
    text = said_text(entry.conversation_excerpt, rationale)
    return text or None


def answer_said(text: str) -> str | None:
    """What an answer's vector embeds (``repositories.answer_vectors``): the person's words as they gave them, whole
    up to ``SAID_LIMIT`` (not the excerpt's line of an entry, cut at 240 characters); None when there are none."""
    said = (text or "").strip()[:SAID_LIMIT]
    return said or None


def text_digest(text: str) -> str:
    """A short digest of an embedded text (stored with the vector: a changed text is embedded again)."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _unit(vector: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(v * v for v in vector))
    return [float(v) / norm for v in vector] if norm > 0 else [0.0 for _ in vector]


# The embedders --------------------------------------------------------------------------------------------


class WordLlamaEmbedder:
    """The offline model the semantic extractor loads (``extraction.sentence_model``): 256-d, in-process."""

    local = True

    def __init__(self) -> None:
        from factor_journal.extraction.sentence_model import DIMENSIONS, MODEL_ID

        self.model_id = f"{MODEL_ID}"
        self.dimensions = DIMENSIONS

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        from factor_journal.extraction.sentence_model import EmbeddingModelError, embed

        try:
            return [[float(v) for v in row] for row in embed(list(texts))]
        except EmbeddingModelError as error:
            raise EmbeddingError(str(error)) from error

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


class GeminiEmbeddingSettings(BaseModel):
    """Gemini's embedding model on Vertex AI; ``from_env`` reads FJ_EMBEDDING_MODEL, FJ_EMBEDDING_DIMENSIONS and
    the FJ_GEMINI_* connection settings the extractor uses (project, location, timeout, attempts, base URL)."""

    model: str = "gemini-embedding-001"
    dimensions: int = Field(default=768, ge=1, le=3072)
    project: str | None = None
    location: str = "europe-west1"
    timeout_seconds: float = Field(default=30.0, gt=0)
    max_attempts: int = Field(default=4, ge=1, le=10)
    base_url: str | None = None

    @classmethod
    def from_env(cls) -> GeminiEmbeddingSettings:
        from factor_journal.extraction.gemini import vertex_env

        env = os.environ
        return cls.model_validate(
            vertex_env(model=env.get("FJ_EMBEDDING_MODEL"), dimensions=env.get("FJ_EMBEDDING_DIMENSIONS"))
        )


class GeminiEmbedder:
    """Gemini's embedding model through ``google-genai`` in Vertex mode: documents embedded with the
    ``RETRIEVAL_DOCUMENT`` task, questions with ``RETRIEVAL_QUERY``, at ``dimensions`` (normalised: below 3,072
    dimensions Gemini's vectors are not unit length).  One text per request (Vertex takes one input per
    ``embedContent`` call for this model); the SDK retries 408/429/5xx with backoff; after the last attempt an
    ``EmbeddingError`` says what failed.  ``tokens`` counts the input tokens Vertex reports (the cost)."""

    local = False

    def __init__(self, settings: GeminiEmbeddingSettings | None = None) -> None:
        from google.genai import Client, types

        from factor_journal.extraction.gemini import RETRIED_STATUS_CODES, stand_in_credentials, vertex_mode

        self.settings = settings = settings or GeminiEmbeddingSettings.from_env()
        self.model_id = f"{settings.model}@{settings.dimensions}"
        self.dimensions = settings.dimensions
        self.tokens = 0
        retry = types.HttpRetryOptions(
            attempts=settings.max_attempts,
            initial_delay=1.0,
            max_delay=20.0,
            http_status_codes=list(RETRIED_STATUS_CODES),
        )
        options = types.HttpOptions(
            timeout=max(1, round(settings.timeout_seconds * 1000)), retry_options=retry, base_url=settings.base_url
        )
        credentials = stand_in_credentials() if settings.base_url else None
        self.client = Client(
            **vertex_mode(),
            project=settings.project,
            location=settings.location,
            credentials=credentials,
            http_options=options,
        )

    def _embed(self, text: str, task: str) -> list[float]:
        from google.genai import errors, types

        config = types.EmbedContentConfig(task_type=task, output_dimensionality=self.dimensions)
        try:
            response = self.client.models.embed_content(model=self.settings.model, contents=text or ".", config=config)
        except errors.APIError as error:
            reason = f"{error.code} {error.message}"
            raise EmbeddingError(f"Vertex AI embedding failed after its retries: {reason}") from error
        except Exception as error:  # transport errors, timeouts after the SDK's retries
            raise EmbeddingError(f"Vertex AI embedding failed: {type(error).__name__}: {error}") from error
        embeddings = response.embeddings or []
        values = embeddings[0].values if embeddings else None
        if not values or len(values) != self.dimensions:
            got = len(values) if values else 0
            raise EmbeddingError(f"Vertex AI answered {got} dimensions, expected {self.dimensions}")
        statistics = embeddings[0].statistics
        self.tokens += int(statistics.token_count or 0) if statistics else 0
        return _unit(values)

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._embed(text, "RETRIEVAL_DOCUMENT") for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._embed(text, "RETRIEVAL_QUERY")


EMBEDDERS = ("local", "gemini", "none")


def embedder_named(name: str) -> Embedder | None:
    """The embedder ``name`` selects: ``local`` (WordLlama, offline), ``gemini`` (Vertex AI) or ``none`` (no
    vectors are written and the "ask" fallback ranks the catalog only)."""
    if name == "local":
        return WordLlamaEmbedder()
    if name == "gemini":
        return GeminiEmbedder()
    if name == "none":
        return None
    raise ValueError(f"unknown embedder {name!r}: one of {', '.join(EMBEDDERS)}")


@lru_cache(maxsize=1)
def default_embedder() -> Embedder | None:
    """The process's embedder, from ``FJ_EMBEDDER`` (default ``local``), built once."""
    from factor_journal.settings import settings

    return embedder_named(settings().embedder)
