"""Extractors: read factor updates out of a conversation turn (offline rules or Vertex AI Gemini)."""

from factor_journal.extraction.base import (
    CandidateFactor,
    ExchangeTurn,
    ExtractionError,
    ExtractionOutput,
    ExtractionRequest,
    ExtractionResult,
    Extractor,
    ProposedUpdate,
)

__all__ = [
    "CandidateFactor",
    "ExchangeTurn",
    "ExtractionError",
    "ExtractionOutput",
    "ExtractionRequest",
    "ExtractionResult",
    "Extractor",
    "ProposedUpdate",
]
