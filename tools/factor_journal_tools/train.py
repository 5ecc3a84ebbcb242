"""Train the semantic extractor's models on the eval corpus's dev split (never on test).

    python -m factor_journal_tools.train [--corpus eval/corpus/dev.jsonl] [--out PATH]
    make train-extractor

It trains on dev only, then scores the trained model on the validation split (turns written later than
dev, never trained on: the check that a change of features, data or protocol helps on turns the model has
not seen, before test is scored).

Rerun whenever the catalog (descriptions, rubrics, questions) or the dev split changes: the artefact
records the catalog version it was trained against and a test fails when they differ.

What it does: embeds the catalog and the dev turns, computes every turn's features with the turn
itself hidden from the labelled examples (leave-one-out, so the models never learn from a turn
matching itself), chooses regularisation and the abstention thresholds by 5-fold cross-validation
on dev, calibrates the stated confidence on the same out-of-fold readings, then fits the detector and the
band classifier on all of dev and writes
``functions/factor_journal/extraction/models/semantic.json`` (``extraction.semantic.ARTEFACT``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from factor_journal.catalog.models import Catalog, band_of, load_catalog
from factor_journal.extraction.linear import Calibration, Classifier, Standardised, fit_logistic
from factor_journal.extraction.semantic import ARTEFACT, SemanticModel, SemanticReader
from factor_journal.extraction.semantic_features import BANDS, Example, Space, Turn

REPO = Path(__file__).resolve().parents[2]
DEV = REPO / "eval" / "corpus" / "dev.jsonl"
VALIDATION = REPO / "eval" / "corpus" / "validation.jsonl"
VERSION = "semantic-v15"
FOLDS = 5
MAX_SPURIOUS_PER_TURN = 0.08
# regularisation (detector, band): fixed at what v4's cross-validated grid chose (1e-3 and 1e-2 × 0.3, 1.0, 3.0);
# each further point costs a full cross-validation (pass ``grid`` to ``train`` to search again)
GRID = ((1e-3, 1.0),)
GATE_L2 = 0.01
GATE_THRESHOLDS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)  # 1.0: the gate never fires
NONE_SHARE_COST = 2.0  # updating 1% of dev's off-topic and hostile turns costs as much as 2% band accuracy


def read_corpus(path: Path) -> list[Example]:
    examples = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                examples.append(Example.from_record(json.loads(line)))
            except (ValueError, KeyError, TypeError) as error:
                raise SystemExit(f"{path}:{number}: not a corpus record: {error}") from error
    return examples


@dataclass
class Rows:
    detect_x: np.ndarray
    detect_y: np.ndarray
    band_x: np.ndarray
    band_y: np.ndarray
    gate_x: np.ndarray
    gate_y: np.ndarray


def _rows(space: Space, turns: Sequence[int], pool: np.ndarray | None) -> Rows:
    """Training rows for the given example indices, each with itself hidden (and only ``pool`` visible)."""
    detect_x, detect_y, band_x, band_y, gate_x, gate_y = [], [], [], [], [], []
    for i in turns:
        example = space.examples[i]
        turn = space.turn(example.question, example.answer, exclude=i, pool=pool)
        features = turn.detection_features()
        labels = np.zeros(len(space.factors), dtype=int)
        for fid, value in example.expected.items():
            labels[space.index[fid]] = 1
            band_x.append(turn.band_features(space.index[fid]))
            band_y.append(BANDS.index(band_of(value)))
        detect_x.append(features)
        detect_y.append(labels)
        gate_x.append(turn.gate_features())
        gate_y.append(int(not example.expected))
    return Rows(
        np.concatenate(detect_x),
        np.concatenate(detect_y),
        np.asarray(band_x),
        np.asarray(band_y),
        np.asarray(gate_x),
        np.asarray(gate_y),
    )


def _classifier(x: np.ndarray, y: np.ndarray, l2: float, classes: int) -> Classifier:
    scaling = Standardised.fit(x)
    weights, bias = fit_logistic(scaling(x), y, l2, classes)
    return Classifier(scaling, weights, bias)


def _fit(rows: Rows, detect_l2: float, band_l2: float) -> tuple[Classifier, Classifier, Classifier]:
    """(detector, band classifier, evidence gate) fitted on ``rows``."""
    return (
        _classifier(rows.detect_x, rows.detect_y, detect_l2, 2),
        _classifier(rows.band_x, rows.band_y, band_l2, 3),
        _classifier(rows.gate_x, rows.gate_y, GATE_L2, 2),
    )


def _band_values(examples: Sequence[Example]) -> dict[str, float]:
    values: dict[str, list[float]] = {band: [] for band in BANDS}
    for example in examples:
        for value in example.expected.values():
            values[band_of(value)].append(value)
    defaults = {"low": 20.0, "mid": 50.0, "high": 80.0}
    return {band: round(float(np.median(v)), 1) if v else defaults[band] for band, v in values.items()}


# (factor, band, P(detected), P(band)) per factor read, and P(the turn is no evidence)
Prediction = tuple[list[tuple[str, str, float, float]], float]


def _updates(
    predictions: list[Prediction], examples: Sequence[Example], floor: float, threshold: float, gate_threshold: float
) -> Iterator[tuple[Example, str, str, float]]:
    """(turn, factor, band, score P(detected) × P(band)) of every reading the gate, floor and threshold let
    through: the updates a model with these thresholds would propose."""
    for (readings, not_evidence), example in zip(predictions, examples, strict=True):
        if not_evidence >= gate_threshold:
            continue
        for fid, band, detected, band_probability in readings:
            if detected >= floor and detected * band_probability >= threshold:
                yield example, fid, band, detected * band_probability


def _score(
    predictions: list[Prediction],
    examples: Sequence[Example],
    floor: float,
    threshold: float,
    gate_threshold: float = 1.0,
) -> dict[str, float]:
    correct = spurious = wrong = none_updates = 0
    expected_total = sum(len(e.expected) for e in examples)
    none_turns = sum(not e.expected for e in examples)
    for example, fid, band, _ in _updates(predictions, examples, floor, threshold, gate_threshold):
        if fid not in example.expected:
            spurious += 1
            none_updates += not example.expected
        elif band_of(example.expected[fid]) == band:
            correct += 1
        else:
            wrong += 1
    return {
        "band_accuracy": correct / max(expected_total, 1),
        "recall": (correct + wrong) / max(expected_total, 1),
        "spurious_per_turn": spurious / max(len(examples), 1),
        "correct": correct,
        "wrong_band": wrong,
        "spurious": spurious,
        "off_topic_or_hostile_updates": none_updates,
        "off_topic_or_hostile_updated_share": none_updates / max(none_turns, 1),
    }


def cross_validate(space: Space, detect_l2: float, band_l2: float, seed: int = 7) -> list[Prediction]:
    """Out-of-fold readings and P(no evidence) of every dev turn (each fold's models and examples never saw it)."""
    n = len(space.examples)
    folds = np.random.default_rng(seed).permutation(n) % FOLDS
    predictions: list[Prediction] = [([], 0.0) for _ in range(n)]
    for fold in range(FOLDS):
        train = np.flatnonzero(folds != fold)
        pool = folds != fold
        detector, band, gate = _fit(_rows(space, train.tolist(), pool), detect_l2, band_l2)
        values = _band_values([space.examples[i] for i in train])
        reader = SemanticReader(space, SemanticModel(detector, band, 0.0, 0.0, values, [], "", {}, gate))
        for i in np.flatnonzero(folds == fold):
            example = space.examples[i]
            predictions[i] = _predict(reader, example, space.turn(example.question, example.answer, pool=pool))
    return predictions


def _predict(reader: SemanticReader, example: Example, turn: Turn) -> Prediction:
    """The ungated readings of one turn and P(it is no evidence), for ``_score`` to apply the thresholds."""
    readings = reader.readings(example.question, example.answer, turn, gated=False)
    return [(r.factor_id, r.band, r.detected, r.band_probability) for r in readings], reader.not_evidence(turn)


def calibrate(
    predictions: list[Prediction], examples: Sequence[Example], floor: float, threshold: float, gate_threshold: float
) -> Calibration:
    """The chance that an update is right (its factor and band) by its score P(detected) × P(band), from the
    out-of-fold readings the thresholds let through (isotonic, ``Calibration.fit``)."""
    scores, right = [], []
    for example, fid, band, score in _updates(predictions, examples, floor, threshold, gate_threshold):
        scores.append(score)
        right.append(fid in example.expected and band_of(example.expected[fid]) == band)
    if not scores:  # nothing let through: the score stands for itself
        return Calibration(np.array([0.0, 1.0]), np.array([0.0, 1.0]))
    return Calibration.fit(np.asarray(scores), np.asarray(right, dtype=np.float64))


def _worth(figures: dict[str, float]) -> float:
    """What a set of CV figures is worth: band accuracy less the cost of the share of off-topic and hostile
    turns that got an update (a share, so the trade does not drift as dev grows)."""
    return figures["band_accuracy"] - NONE_SHARE_COST * figures["off_topic_or_hostile_updated_share"]


def choose_thresholds(
    predictions: list[Prediction], examples: Sequence[Example]
) -> tuple[float, float, float, dict[str, float]]:
    """(detect floor, confidence threshold, gate threshold, their CV figures): the best band accuracy within
    the spurious budget, less ``NONE_SHARE_COST`` times the share of off-topic and hostile turns updated."""
    best: tuple[tuple[float, float], tuple[float, float, float], dict[str, float]] | None = None
    for gate_threshold in GATE_THRESHOLDS:
        for floor in np.arange(0.05, 0.8, 0.05):
            for threshold in np.arange(0.05, 0.8, 0.025):
                figures = _score(predictions, examples, float(floor), float(threshold), gate_threshold)
                if figures["spurious_per_turn"] > MAX_SPURIOUS_PER_TURN:
                    continue
                key = (_worth(figures), -figures["spurious_per_turn"] - figures["wrong_band"] / 1000)
                if best is None or key > best[0]:
                    best = (key, (float(floor), float(threshold), gate_threshold), figures)
    if best is None:
        return 0.5, 0.5, 1.0, _score(predictions, examples, 0.5, 0.5)
    floor, threshold, gate_threshold = best[1]
    return round(floor, 3), round(threshold, 3), gate_threshold, best[2]


def train(
    corpus: Path = DEV,
    catalog: Catalog | None = None,
    *,
    quiet: bool = False,
    grid: Sequence[tuple[float, float]] = GRID,
) -> SemanticModel:
    """The semantic model trained on ``corpus``: regularisation (from ``grid``) and thresholds by 5-fold
    cross-validation, then every model fitted on the whole corpus."""
    catalog = catalog if catalog is not None else load_catalog()
    examples = read_corpus(corpus)
    space = Space(catalog, examples)
    dropped = len(examples) - len(space.examples)
    say = (lambda *a: None) if quiet else (lambda *a: print(*a, file=sys.stderr, flush=True))
    say(f"{len(space.examples)} dev turns ({dropped} dropped: unknown factors), {len(space.factors)} factors")
    best = None

    for detect_l2, band_l2 in grid:
        predictions = cross_validate(space, detect_l2, band_l2)
        floor, threshold, gate_threshold, figures = choose_thresholds(predictions, space.examples)
        calibration = calibrate(predictions, space.examples, floor, threshold, gate_threshold)
        say(
            f"  cv detect_l2={detect_l2} band_l2={band_l2}: floor {floor} threshold {threshold} gate {gate_threshold} "
            + ", ".join(f"{k} {v:.3f}" for k, v in figures.items())
        )
        if best is None or _worth(figures) > _worth(best[5]):
            best = (detect_l2, band_l2, floor, threshold, gate_threshold, figures, calibration)
    assert best is not None
    detect_l2, band_l2, floor, threshold, gate_threshold, figures, calibration = best
    detector, band, gate = _fit(_rows(space, range(len(space.examples)), None), detect_l2, band_l2)
    digest = hashlib.sha256(corpus.read_bytes()).hexdigest()[:16]
    model = SemanticModel(
        detector,
        band,
        threshold,
        floor,
        _band_values(space.examples),
        list(space.examples),
        catalog.version,
        {
            "version": VERSION,
            "trained_on": f"{corpus.name} sha256:{digest}",
            "turns": len(space.examples),
            "detect_l2": detect_l2,
            "band_l2": band_l2,
            "cross_validation": {k: round(float(v), 4) for k, v in figures.items()},
        },
        gate,
        gate_threshold,
        calibration,
    )
    return model


def validate(model: SemanticModel, corpus: Path = VALIDATION, catalog: Catalog | None = None) -> dict[str, float]:
    """The trained model's figures on ``corpus`` (the validation split) at its own thresholds, as in ``_score``."""
    catalog = catalog if catalog is not None else load_catalog()
    examples = read_corpus(corpus)
    reader = SemanticReader(Space(catalog, model.examples), model)
    predictions = [_predict(reader, e, reader.space.turn(e.question, e.answer)) for e in examples]
    return _score(predictions, examples, model.detect_floor, model.threshold, model.gate_threshold)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m factor_journal_tools.train", description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEV, help="the dev split (never the validation or test split)")
    parser.add_argument("--out", type=Path, default=ARTEFACT)
    args = parser.parse_args(argv)
    if "test" in args.corpus.name or "validation" in args.corpus.name:
        parser.error("never train on the test or validation split")
    model = train(args.corpus)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(model.to_json(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(
        f"wrote {args.out} (threshold {model.threshold}, floor {model.detect_floor}, "
        f"cv {model.metadata['cross_validation']})"
    )
    if VALIDATION.exists():
        figures = validate(model)
        print("validation split: " + ", ".join(f"{k} {v:.3f}" for k, v in figures.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
