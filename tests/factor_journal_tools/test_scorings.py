"""`test` is scored once per model version: the ledger `make eval` keeps of every scoring, the refusal of a
second one without a reason, and what the report says of both (issue 35, section 4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from factor_journal.extraction.semantic import load_model_artefact
from factor_journal_tools.evaluate import main, render_report, score, splits_to_run
from factor_journal_tools.scorings import TEST_LEDGER, read_test_scorings, seat_version, why_test_is_refused

SCORED = {"extractor": "semantic", "model": "m-v1", "measured_at": "2026-11-20T10:00:00+00:00", "band_accuracy": 0.6}


def test_a_model_scored_on_test_already_is_refused_without_a_reason():
    refusal = why_test_is_refused([SCORED], "m-v1", None)
    assert refusal is not None and "m-v1" in refusal and "1x" in refusal and "--rescore-test" in refusal
    assert why_test_is_refused([SCORED], "m-v1", "   ") is not None


def test_a_new_model_or_a_stated_reason_may_score_test():
    assert why_test_is_refused([SCORED], "m-v2", None) is None
    assert why_test_is_refused([SCORED], "m-v1", "the test split was relabelled") is None


def test_an_extractor_that_names_no_model_is_refused():
    assert "no model" in (why_test_is_refused([], None, "any reason") or "")


def test_test_is_never_among_the_default_splits():
    assert splits_to_run(None, ["dev", "validation", "test"]) == ["dev", "validation"]
    assert splits_to_run(None, ["validation", "test"]) == ["validation"]
    assert splits_to_run(["test"], ["dev", "validation", "test"]) == ["test"]


def test_a_ledger_line_that_does_not_read_is_named_not_dropped(tmp_path: Path):
    ledger = tmp_path / "ledger.jsonl"
    assert read_test_scorings(ledger) == []
    ledger.write_text(json.dumps(SCORED) + "\n\n{not json\n")
    with pytest.raises(ValueError, match="ledger.jsonl:3"):
        read_test_scorings(ledger)
    ledger.write_text(json.dumps({"model": "m-v1"}) + "\n")
    with pytest.raises(ValueError, match="extractor and model"):
        read_test_scorings(ledger)


def test_make_eval_refuses_a_second_scoring_before_running_anything(tmp_path: Path, capsys, monkeypatch):
    monkeypatch.delenv("FIRESTORE_EMULATOR_HOST", raising=False)  # a run would stop on it: the refusal comes first
    ledger = tmp_path / "ledger.jsonl"
    ledger.write_text(json.dumps({**SCORED, "extractor": "offline", "model": "offline-rules-v1"}) + "\n")
    before = ledger.read_text()
    args = ["--extractor", "offline", "--split", "test", "--test-ledger", str(ledger)]
    with pytest.raises(SystemExit) as stopped:
        main([*args, "--results", str(tmp_path / "r.json"), "--report", str(tmp_path / "R.md")])
    assert stopped.value.code == 2
    assert "scored for offline-rules-v1 already" in capsys.readouterr().err
    assert ledger.read_text() == before and not (tmp_path / "r.json").exists()


def test_the_report_counts_every_scoring_and_the_shipped_models_own():
    figures = score([])
    figures.update(model="m-v2", measured_at="2026-11-21T09:00:00+00:00")
    results = {
        "extractors": {
            "semantic": {
                "model": "m-v2",
                "splits": {"test": figures},
                "training": {"version": "v2", "turns": 100, "cross_validation": {"band_accuracy": 0.665}},
            }
        }
    }
    report = render_report(results, [SCORED, {**SCORED, "model": "m-v2", "why": "first scoring of this model"}])
    assert "scored **2 times** in all" in report
    assert "(`m-v2`) was scored on test 1x" in report
    assert "## Cross-validated figures" in report and "| 66.5% |" in report
    assert "| semantic | test | 2026-11-21 |" in report


def test_the_repositorys_ledger_reads_and_holds_the_shipped_model():
    scorings = read_test_scorings(TEST_LEDGER)
    shipped = load_model_artefact().metadata["version"]
    assert any(s["model"].endswith(f"+{shipped}") for s in scorings), f"{shipped} was never scored on test"


def test_a_seat_is_scored_once_per_model_and_reader_prompt():
    assert seat_version("seat:m", "b6b10bab2b44") == "seat:m+prompt-b6b10bab2b44"
    assert seat_version("seat:m", None) == "seat:m"
    assert seat_version("seat:m", "a") != seat_version("seat:m", "b")
