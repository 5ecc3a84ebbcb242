"""Training the semantic extractor: one command retrains it from a dev corpus (never the test split), and
the artefact it writes loads and reads turns, with its evidence gate and thresholds chosen on dev."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from factor_journal.extraction.linear import Calibration
from factor_journal.extraction.semantic import SemanticModel, SemanticReader, load_model_artefact
from factor_journal.extraction.semantic_features import Example, Space
from factor_journal_tools import train as training

DEV = Path(__file__).resolve().parents[2] / "eval" / "corpus" / "dev.jsonl"
SMALL_CORPUS_TURNS = 540  # a fixed count, so the test's cost holds as dev grows


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory):
    """``SMALL_CORPUS_TURNS`` dev turns spread evenly over the split (every writers' round, every kind): enough for
    the models to learn something, quick to train."""
    lines = [line for line in DEV.read_text(encoding="utf-8").splitlines() if line.strip()]
    picked = np.linspace(0, len(lines) - 1, num=min(SMALL_CORPUS_TURNS, len(lines))).round().astype(int)
    path = tmp_path_factory.mktemp("corpus") / "dev-small.jsonl"
    path.write_text("\n".join(lines[i] for i in picked) + "\n", encoding="utf-8")
    return path


@pytest.mark.training
@pytest.mark.timeout(1200)  # minutes of CPU alone; far more on a shared machine
def test_training_writes_an_artefact_that_loads_and_reads(small_corpus, tmp_path, catalog):
    out = tmp_path / "semantic.json"
    assert training.main(["--corpus", str(small_corpus), "--out", str(out)]) == 0
    model = SemanticModel.from_json(json.loads(out.read_text(encoding="utf-8")))
    assert model.gate is not None and 0 < model.gate_threshold <= 1.0
    assert model.calibration is not None and np.all(np.diff(model.calibration.chances) >= 0)
    assert 0 < model.threshold < 1 and model.metadata["turns"] == len(model.examples)
    assert "dev-small.jsonl" in model.metadata["trained_on"]
    reader = SemanticReader(Space(catalog, model.examples), model)
    asked = "Would you say you have a data catalog, or named owners for your key data?"
    readings = reader.readings(asked, "Yes, every domain has a named owner and the catalog is kept current.")
    assert readings and readings[0].factor_id == "data_governance"


@pytest.mark.parametrize("split", ["test", "validation"])
def test_training_refuses_the_held_out_splits(tmp_path, split):
    with pytest.raises(SystemExit):
        training.main(["--corpus", str(DEV.with_name(f"{split}.jsonl")), "--out", str(tmp_path / "x.json")])


def test_validation_scores_the_trained_model_on_turns_it_never_saw(tmp_path, catalog):
    turns = [
        {
            "question": "Who owns your key data?",
            "answer": "Every domain has a named owner and a current catalog.",
            "expected": [{"factor_id": "data_governance", "value": 85}],
            "kind": "factor",
        },
        {
            "question": "Who owns your key data?",
            "answer": "My car is due its service next week.",
            "expected": [],
            "kind": "off_topic",
        },
    ]
    corpus = tmp_path / "validation.jsonl"
    corpus.write_text("".join(json.dumps(t) + "\n" for t in turns), encoding="utf-8")
    figures = training.validate(load_model_artefact(), corpus, catalog)
    assert figures["recall"] == 1.0 and figures["band_accuracy"] == 1.0
    assert figures["off_topic_or_hostile_updates"] == 0 and figures["spurious_per_turn"] <= 0.5


def test_a_malformed_corpus_line_is_named(tmp_path, catalog):
    bad = tmp_path / "dev-bad.jsonl"
    bad.write_text('{"question": "q", "answer": "a", "expected": []}\n{"question": "q"}\n', encoding="utf-8")
    with pytest.raises(SystemExit, match="dev-bad.jsonl:2"):
        training.train(bad, catalog, quiet=True)


def test_calibration_states_the_chance_of_being_right():
    """Readings right as often as a hidden chance that rises with the score: the calibration recovers that chance,
    never decreases with the score, and never claims certainty from a few readings at either end."""
    rng = np.random.default_rng(3)
    scores = rng.uniform(0.2, 0.9, 4000)
    chance = 0.3 + 0.6 * (scores - 0.2) / 0.7  # what the model's score really means: 0.3 at 0.2, 0.9 at 0.9
    calibration = Calibration.fit(scores, (rng.uniform(size=4000) < chance).astype(float))
    for score in (0.3, 0.5, 0.7):
        assert calibration(score) == pytest.approx(0.3 + 0.6 * (score - 0.2) / 0.7, abs=0.08)
    stated = [calibration(s) for s in np.linspace(0, 1, 101)]
    assert all(a <= b for a, b in zip(stated, stated[1:], strict=False))
    few = Calibration.fit(np.array([0.3, 0.9]), np.array([0.0, 1.0]))
    assert 0 < few(0.0) < few(1.0) < 1


def test_calibration_is_learnt_from_the_updates_the_thresholds_let_through():
    examples = [
        Example("q", "a", {"data_quality": 20.0}),
        Example("q", "b", {"data_quality": 80.0}),
        Example("q", "c", {}),
    ]
    predictions = [
        ([("data_quality", "low", 0.9, 0.9)], 0.0),  # right, score 0.81
        ([("data_quality", "low", 0.9, 0.4)], 0.0),  # wrong band, score 0.36
        ([("data_quality", "low", 0.9, 0.1)], 0.0),  # below the threshold: not an update, not counted
    ]
    calibration = training.calibrate(predictions, examples, floor=0.1, threshold=0.3, gate_threshold=1.0)
    assert calibration.scores.tolist() == pytest.approx([0.36, 0.81])
    assert calibration(0.36) < 0.5 < calibration(0.81)
