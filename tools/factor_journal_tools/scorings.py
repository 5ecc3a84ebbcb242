"""The ledger of ``test`` scorings (``eval/test_scorings.jsonl``): test is scored once per model version, every
scoring recorded with why; ``make eval`` and the seat's replay refuse a second scoring without a reason.  Pure,
but for reading the ledger."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from factor_journal_tools.corpus import REPO

TEST_LEDGER = REPO / "eval" / "test_scorings.jsonl"


def read_test_scorings(path: Path = TEST_LEDGER) -> list[dict[str, Any]]:
    """Every recorded scoring of ``test``, oldest first ([] when there is no ledger yet).  A line that does not
    read raises ``ValueError`` naming it: the count the report gives must not silently drop a scoring."""
    if not path.exists():
        return []
    scorings = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(f"{path.name}:{number}: not JSON ({error})") from error
        if not isinstance(record, dict) or not record.get("model") or not record.get("extractor"):
            raise ValueError(f"{path.name}:{number}: a scoring needs its extractor and model")
        scorings.append(record)
    return scorings


def seat_version(model: str, prompt_version: str | None) -> str:
    """The name a seat's model is scored on test under: once per model and reader prompt (its static prefix's
    version), ``<model>+prompt-<version>``; the model alone when no version is known.  Pure."""
    return f"{model}+prompt-{prompt_version}" if prompt_version else model


def why_test_is_refused(scorings: Sequence[dict[str, Any]], model: str | None, reason: str | None) -> str | None:
    """Why ``test`` may not be scored now for ``model`` (None: it may).  Test is scored once per model version,
    so a model the ledger already holds is refused unless a reason to score it again is given (kept in the
    ledger with the new scoring); so is an extractor that names no model, whose scorings could not be counted.
    Pure."""
    if not model:
        return "the extractor names no model version, so its scorings of test could not be counted"
    earlier = [s for s in scorings if s.get("model") == model]
    if earlier and not (reason and reason.strip()):
        when = ", ".join(str(s.get("measured_at") or s.get("source") or "?") for s in earlier)
        return (
            f"test has been scored for {model} already ({len(earlier)}x: {when}); it is scored once per model "
            "version. Choose on validation; to score it again anyway, give the reason with --rescore-test"
        )
    return None


def ledger_line(name: str, model: str, measured_at: str, figures: dict[str, Any], why: str) -> dict[str, Any]:
    """The ledger line for one scoring of test.  Pure."""
    return {
        "extractor": name,
        "model": model,
        "measured_at": measured_at,
        "turns": figures["turns"],
        "band_accuracy": round(figures["band_accuracy"], 4) if figures["band_accuracy"] is not None else None,
        "recall": round(figures["detection"]["recall"], 4) if figures["detection"]["recall"] is not None else None,
        "spurious_per_turn": figures["spurious_per_turn"],
        "why": why,
        "source": "make eval",
    }
