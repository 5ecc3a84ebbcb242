"""The Vertex AI stand-in the tests use (``factor_journal_tools.vertex_stand_in``, shared with the seat's tools),
and the recorded Vertex AI responses under ``tests/fixtures/vertex``."""

from __future__ import annotations

import json
from pathlib import Path

from factor_journal_tools.vertex_stand_in import Step, VertexStandIn, error, model_response, output

RECORDED = Path(__file__).resolve().parent / "fixtures" / "vertex"

__all__ = ["RECORDED", "Step", "VertexStandIn", "error", "model_response", "output", "recorded"]


def recorded(name: str) -> Step:
    """A recorded Vertex AI response from ``tests/fixtures/vertex/<name>.json``."""
    return Step(body=json.loads((RECORDED / f"{name}.json").read_text()))
