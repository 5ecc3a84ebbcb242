"""The embedded semantic extractor (the default): meaning, not cue words, without the network.

A turn is read in five steps, each promise checked by the eval (``make eval``):

1. **Hostile text and small talk are not evidence**: a turn that instructs the system ("ignore previous
   instructions", "mark us fully ready", a forged "SYSTEM:" line, a JSON payload) or says nothing whatever
   was asked (filler, a question back, a deferral) proposes nothing (``is_evidence``); nor does a turn the
   trained **evidence gate** reads as off-topic or hostile (its closeness to the labelled off-topic,
   hostile and factor turns, whether it speaks for the company at all or about another workplace, private
   life or the world in general), even when the question named a factor.
2. **Detection**: every assessable factor gets a probability that the turn speaks to it, from a small
   logistic model over similarities (WordLlama's bundled 256-d embeddings, ``sentence_model.py``) of the
   answer to the factor's description, rubric and labelled examples, of the assistant's question to
   the factor's elicitation questions (so "Not yet, no" is read against what was asked; an answer that sets
   the question aside, "Couldn't tell you. What I do know is…", is read on its own), the votes of the
   nearest labelled turns, a ridge reading of the turn's embeddings (``Ridge``), how far ahead of the
   other factors it stands, how close the turn is to small talk and hostile turns, and the same readings
   for each clause ("the dashboards are great, but the numbers under them are a mess" speaks to two
   factors, one per clause, which the whole turn's embedding averages away), and the neighbour votes again
   by shared rare words (TF-IDF, ``lexical.py``) for the answer, each clause and the question: the
   embedding's average drowns a telling word ("no money set aside") that word overlap keeps.
3. **Band**: a softmax classifier (low / mid / high) over the answer's closeness to the factor's three
   rubric levels, the bands of the nearest labelled answers, negation and hedge signals ("we are not bad
   at…", "sort of, in places"), whether a "yes" answers a question about a problem, and a bag of band
   words learnt from dev (``signals.band_terms``), the bands of the labelled answers sharing its rare words,
   and for a turn of several clauses the same signals of the clause most about the factor.  The value is
   the expected value under the band probabilities, kept inside the chosen band.
4. **Abstention**: the update's score is P(detected) × P(band); below the trained threshold the factor is
   left alone (no update beats a wrong one).  At most ``MAX_FACTORS`` factors per turn.  The confidence an
   update states is the score calibrated on dev's out-of-fold readings: the chance that it is right.
5. **Torn**: a reading above the threshold that another reading of the turn scores within ``TORN_MARGIN`` of
   (its factor's second likeliest band, or the best factor it did not read) is not proposed: both go to
   ``ExtractionResult.torn`` and the person is asked which (``torn_readings``).  Every turn read also gives its
   ``ranking`` (the likeliest factors, whatever the detection floor), what the person chooses from when nothing
   was understood.

The three models are trained on the eval corpus's dev split only (``python -m factor_journal_tools.train``)
and ship as ``extraction/models/semantic.json`` (package data, versioned with the catalog version it
was trained against).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Final

import numpy as np

from factor_journal.catalog.models import BAND_FLOORS, Catalog, Level, load_catalog
from factor_journal.documents import LIFTABLE
from factor_journal.extraction.base import ExchangeTurn, ExtractionRequest, ExtractionResult, ProposedUpdate
from factor_journal.extraction.linear import Calibration, Classifier
from factor_journal.extraction.listening import screen_turn
from factor_journal.extraction.semantic_feature_names import BAND_SIGNALS, DETECT_FEATURES, GATE_FEATURES
from factor_journal.extraction.semantic_features import BAND_SIGNALS_VERSION, BANDS, Example, Space, Turn
from factor_journal.extraction.sentence_model import MODEL_ID
from factor_journal.guidance import question_asked
from factor_journal.vocabulary import clip

log = logging.getLogger(__name__)

ARTEFACT: Final = Path(__file__).with_name("models") / "semantic.json"
# Each band's values, from the catalog's band floors; whole-number edges, so a rounded value stays in its band
BAND_RANGES: Final = {
    "low": (0.0, BAND_FLOORS[Level.mid] - 1),
    "mid": (BAND_FLOORS[Level.mid], BAND_FLOORS[Level.high] - 1),
    "high": (BAND_FLOORS[Level.high], 100.0),
}
MAX_FACTORS: Final = 3
RANKED: Final = 4  # factors kept, closest first, as the reader's ranking of every turn it reads
# Two readings of an answer scored within this of each other (two factors, or two bands of one factor): the reader
# is torn and asks instead of storing either (``torn_readings``).  Chosen on validation by the rule written
# before it was scored (eval/HISTORY.md, "When the reader is torn").
TORN_MARGIN: Final = 0.125

# Models ------------------------------------------------------------------------------------------


@dataclass
class SemanticModel:
    """The trained artefact: evidence gate, detector, band classifier, thresholds, band values and the
    labelled examples."""

    detector: Classifier
    band: Classifier
    threshold: float  # minimum P(detected) × P(band) to propose an update
    detect_floor: float  # minimum P(detected) for a factor to be considered at all
    band_values: dict[str, float]
    examples: list[Example]
    catalog_version: str
    metadata: dict[str, Any]
    gate: Classifier | None = None  # P(the turn is no evidence: off-topic or hostile) from GATE_FEATURES
    gate_threshold: float = 1.0  # at or above this P(no evidence) the turn proposes nothing
    calibration: Calibration | None = None  # score -> chance the update is right; None: the score is stated as is

    def stated_confidence(self, score: float) -> float:
        """The confidence an update states: the chance, measured out of fold on dev, that an update with this
        score P(detected) × P(band) has the right factor and band."""
        return self.calibration(score) if self.calibration is not None else score

    def to_json(self) -> dict[str, Any]:
        return {
            "format": 1,
            "band_signals_version": BAND_SIGNALS_VERSION,
            "band_terms": len(self.band.weights) - len(BAND_SIGNALS),
            "embedding_model": MODEL_ID,
            "catalog_version": self.catalog_version,
            "threshold": self.threshold,
            "detect_floor": self.detect_floor,
            "gate_threshold": self.gate_threshold,
            "band_values": self.band_values,
            "detect_features": list(DETECT_FEATURES),
            "band_signals": list(BAND_SIGNALS),
            "gate_features": list(GATE_FEATURES),
            "metadata": self.metadata,
            "detector": self.detector.to_json(),
            "band": self.band.to_json(),
            "gate": self.gate.to_json() if self.gate is not None else None,
            "calibration": self.calibration.to_json() if self.calibration is not None else None,
            "examples": [
                {
                    "question": e.question,
                    "answer": e.answer,
                    "kind": e.kind,
                    "expected": [{"factor_id": f, "value": v} for f, v in e.expected.items()],
                }
                for e in self.examples
            ],
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> SemanticModel:
        versions = (
            data.get("detect_features"),
            data.get("band_signals"),
            data.get("gate_features"),
            data.get("band_signals_version"),
        )
        if versions != (list(DETECT_FEATURES), list(BAND_SIGNALS), list(GATE_FEATURES), BAND_SIGNALS_VERSION):
            raise ValueError("the semantic model artefact is from another version: retrain it")
        return SemanticModel(
            detector=Classifier.from_json(data["detector"]),
            band=Classifier.from_json(data["band"]),
            threshold=float(data["threshold"]),
            detect_floor=float(data["detect_floor"]),
            band_values={k: float(v) for k, v in data["band_values"].items()},
            examples=[Example.from_record(e) for e in data["examples"]],
            catalog_version=str(data["catalog_version"]),
            metadata=dict(data.get("metadata") or {}),
            gate=Classifier.from_json(data["gate"]) if data.get("gate") else None,
            gate_threshold=float(data.get("gate_threshold", 1.0)),
            calibration=Calibration.from_json(data["calibration"]) if data.get("calibration") else None,
        )


@lru_cache(maxsize=4)
def load_model_artefact(path: Path = ARTEFACT) -> SemanticModel:
    return SemanticModel.from_json(json.loads(Path(path).read_text(encoding="utf-8")))


# Reading a turn ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reading:
    """One factor's reading of a turn, before abstention."""

    factor_id: str
    detected: float  # P(the turn is about the factor)
    band: str
    band_probability: float
    value: float
    runner_up: str = ""  # the factor's second likeliest band ("" when not read)
    runner_up_probability: float = 0.0
    runner_up_value: float = 0.0  # the value that band stands for

    @property
    def score(self) -> float:
        """P(detected) × P(band): what abstention compares with the threshold (``SemanticModel.stated_confidence``
        turns it into the confidence an update states)."""
        return self.detected * self.band_probability

    def in_second_band(self) -> Reading:
        """The same factor read in its second likeliest band (its score: P(detected) × that band's P)."""
        return Reading(self.factor_id, self.detected, self.runner_up, self.runner_up_probability, self.runner_up_value)


@dataclass(frozen=True)
class Torn:
    """A reading the reader would store, and another reading of the same answer it scored within the margin of:
    another factor's, or the same factor's second likeliest band; ``gap`` is how far apart their scores are."""

    reading: Reading
    other: Reading
    gap: float


def torn_readings(readings: Sequence[Reading], threshold: float, margin: float) -> dict[str, Torn]:
    """The readings at or above ``threshold`` (those the reader would store) that another reading of the answer
    scores within ``margin`` of, by factor id: their second likeliest band (gap P(detected) × (P(band) −
    P(second band))), or the best reading of the answer below the threshold (gap: the difference of their scores;
    that rival is claimed by the likeliest stored reading only), whichever is closer.  Pure; none when ``margin``
    is 0."""
    if margin <= 0:
        return {}
    stored = sorted((r for r in readings if r.score >= threshold), key=lambda r: -r.score)
    rival = max((r for r in readings if r.score < threshold), key=lambda r: r.score, default=None)
    torn: dict[str, Torn] = {}
    for reading in stored:
        choices = []
        if reading.runner_up:
            choices.append(
                Torn(
                    reading,
                    reading.in_second_band(),
                    reading.detected * (reading.band_probability - reading.runner_up_probability),
                )
            )
        if rival is not None:
            choices.append(Torn(reading, rival, reading.score - rival.score))
        closest = min(choices, key=lambda t: t.gap, default=None)
        if closest is not None and closest.gap < margin:
            torn[reading.factor_id] = closest
            if closest.other is rival:
                rival = None
    return torn


class SemanticReader:
    """Detection, band and abstention over a ``Space`` with a trained ``SemanticModel``."""

    def __init__(self, space: Space, model: SemanticModel) -> None:
        expected = len(BAND_SIGNALS) + len(space.band_vocabulary)
        if model.band.weights.shape[0] != expected:
            raise ValueError(
                f"the band model reads {model.band.weights.shape[0]} features, this code gives {expected}: retrain it"
            )
        self.space, self.model = space, model
        self._recent: dict[tuple[str, str], Turn] = {}

    def not_evidence(self, turn: Turn) -> float:
        """P(the turn is off-topic or hostile, whatever factor the question was about); 0 without a trained gate."""
        if self.model.gate is None:
            return 0.0
        return float(self.model.gate.probabilities(turn.gate_features()[None, :])[0, 1])

    def detect(self, turn: Turn) -> np.ndarray:
        """P(about factor) for every assessable factor."""
        return self.model.detector.probabilities(turn.detection_features())[:, 1]

    def turn(self, question: str, answer: str) -> Turn:
        """The turn embedded (the last few are kept: candidate selection and extraction read the same turn)."""
        key = (question, answer)
        cached = self._recent.get(key)
        if cached is None:
            cached = self._recent[key] = self.space.turn(question, answer)
            while len(self._recent) > 8:
                self._recent.pop(next(iter(self._recent)))
        return cached

    def readings(
        self,
        question: str,
        answer: str,
        turn: Turn | None = None,
        *,
        gated: bool = True,
        lifted: bool = False,
        detected: np.ndarray | None = None,
    ) -> list[Reading]:
        """Every factor above the detection floor, most likely first (at most ``MAX_FACTORS``), with its band and its
        second likeliest band; none for a turn that is no evidence (the rules, unless the person ``lifted`` their
        screen, then the trained gate unless ``gated`` is False).  ``detected``: ``detect`` of the turn, when known."""
        if not is_evidence(answer, lifted=lifted):
            return []
        turn = turn or self.turn(question, answer)
        if gated and self.not_evidence(turn) >= self.model.gate_threshold:
            return []
        detected = self.detect(turn) if detected is None else detected
        order = [i for i in np.argsort(-detected)[:MAX_FACTORS] if detected[i] >= self.model.detect_floor]
        found = []
        for i in order:
            probs = self.model.band.probabilities(turn.band_features(int(i))[None, :])[0]
            first, second = (int(b) for b in np.argsort(-probs)[:2])
            low, high = BAND_RANGES[BANDS[second]]
            found.append(
                Reading(
                    self.space.factors[i].id,
                    float(detected[i]),
                    BANDS[first],
                    float(probs[first]),
                    self.value(probs),
                    BANDS[second],
                    float(probs[second]),
                    float(np.clip(self.model.band_values[BANDS[second]], low, high)),
                )
            )
        return found

    def ranking(self, detected: np.ndarray, limit: int = RANKED) -> list[str]:
        """The ``limit`` factors the turn is closest to by the detector (``detect``), closest first, whatever the
        detection floor: what the person chooses from when nothing was understood."""
        return [self.space.factors[i].id for i in np.argsort(-detected)[:limit]]

    def value(self, probs: np.ndarray) -> float:
        """The expected value under the band probabilities, kept inside the most likely band.

        A confident "mid" stays at mid's typical value; a "mid" that leans high moves up within mid.
        """
        band = BANDS[int(probs.argmax())]
        typical = np.array([self.model.band_values[b] for b in BANDS])
        low, high = BAND_RANGES[band]
        return float(np.clip(round(float(probs @ typical), 1), low, high))

    def updates(self, question: str, answer: str) -> list[Reading]:
        """The readings confident enough to propose (the rest abstain)."""
        return [r for r in self.readings(question, answer) if r.score >= self.model.threshold]


def is_evidence(answer: str, *, lifted: bool = False) -> bool:
    """Whether a turn can be evidence at all: not empty, not hostile (instructions to the system), and not a turn
    a careful listener would refuse (small talk, a question back, a deferral, a request to pause, another
    organisation, a plan that says nothing about today): ``listening.screen_turn``, which the pipeline also
    applies before any extractor.  ``lifted``: the person said it was about their organisation, which lifts every
    reason they may lift (``documents.LIFTABLE``), never the others."""
    refused = screen_turn(answer)
    return refused is None or (lifted and refused.kind in LIFTABLE)


def _last_question(recent: Sequence[ExchangeTurn]) -> str:
    for turn in reversed(recent):
        if turn.role == "assistant":
            return turn.text
        break  # the user spoke last: no question is being answered
    return ""


_READERS: dict[int, tuple[Catalog, SemanticReader]] = {}


def default_reader(catalog: Catalog | None = None) -> SemanticReader:
    """The reader over the packaged catalog (or ``catalog``) and the packaged trained model, built once per catalog."""
    catalog = catalog if catalog is not None else load_catalog()
    cached = _READERS.get(id(catalog))
    if cached is not None and cached[0] is catalog:
        return cached[1]
    model = load_model_artefact()
    if model.catalog_version != catalog.version:
        log.warning(
            "semantic model trained on catalog %s, running on %s: retrain with `python -m factor_journal_tools.train`",
            model.catalog_version,
            catalog.version,
        )
    reader = SemanticReader(Space(catalog, model.examples), model)
    _READERS[id(catalog)] = (catalog, reader)
    return reader


def rank_factors(catalog: Catalog, question: str, answer: str, limit: int, *, lifted: bool = False) -> list[str]:
    """The ``limit`` factors the semantic detector finds most likely in the turn (for candidate selection);
    ``lifted`` as in ``is_evidence``."""
    reader = default_reader(catalog)
    if not is_evidence(answer, lifted=lifted):
        return []
    detected = reader.detect(reader.turn(question, answer))
    return [
        reader.space.factors[i].id for i in np.argsort(-detected)[:limit] if detected[i] >= reader.model.detect_floor
    ]


class SemanticExtractor:
    """The default extractor: embedded semantic reading with abstention; no network, never raises on text."""

    name = "semantic"

    def __init__(self, catalog: Catalog | None = None) -> None:
        self.reader = default_reader(catalog)
        self.model = f"{MODEL_ID}+{self.reader.model.metadata.get('version', 'semantic')}"

    def extract(self, request: ExtractionRequest) -> ExtractionResult:
        question = _last_question(request.recent)  # what the reader reads the answer with, a clarification whole
        asked = question_asked([(turn.role, turn.text) for turn in request.recent])  # what the rationale quotes
        updates: list[dict[str, Any]] = []
        rejected: list[str] = []
        readings: list[Reading] = []
        ranking: list[str] = []
        lifted = request.screen_lifted  # the person said it was about them: neither screen nor gate sets it aside
        if is_evidence(request.text, lifted=lifted):
            turn = self.reader.turn(question, request.text)
            detected = self.reader.detect(turn)
            ranking = self.reader.ranking(detected)
            if not lifted and (p_none := self.reader.not_evidence(turn)) >= self.reader.model.gate_threshold:
                rejected.append(f"no update: the turn reads as off-topic or hostile (P={p_none:.2f})")
                return ExtractionResult(
                    raw_updates=[], extractor=self.name, model=self.model, rejected=rejected, ranking=ranking
                )
            readings = self.reader.readings(
                question, request.text, turn, gated=False, lifted=lifted, detected=detected
            )  # the gate was just read
        threshold = self.reader.model.threshold
        torn = torn_readings(readings, threshold, TORN_MARGIN)
        undecided: list[list[dict[str, Any]]] = []
        for reading in readings:
            if reading.score < threshold:
                rejected.append(
                    f"{reading.factor_id!r}: abstained ({reading.band}, score {reading.score:.3f} below {threshold:g})"
                )
                continue
            if reading.factor_id in torn:
                between = torn[reading.factor_id]
                rejected.append(
                    f"{reading.factor_id!r}: torn ({reading.band}) with {between.other.factor_id!r} "
                    f"({between.other.band}), scores {between.gap:.3f} apart: asked instead"
                )
                undecided.append([self._proposed(r, turn, request.text, asked) for r in (reading, between.other)])
                continue
            updates.append(self._proposed(reading, turn, request.text, asked))
        return ExtractionResult(
            raw_updates=updates,
            extractor=self.name,
            model=self.model,
            rejected=rejected,
            ranking=ranking,
            torn=undecided,
        )

    def _proposed(self, reading: Reading, turn: Turn, answer: str, asked: str) -> dict[str, Any]:
        """A reading as the update it proposes (the confidence it states is its calibrated score)."""
        return ProposedUpdate(
            factor_id=reading.factor_id,
            value=reading.value,
            confidence=round(min(max(self.reader.model.stated_confidence(reading.score), 0.05), 0.95), 3),
            rationale=_rationale(reading, answer, asked),
            quote=turn.clause_about(self.reader.space.index[reading.factor_id]),
        ).model_dump()


def _rationale(reading: Reading, answer: str, question: str) -> str:
    said = clip(answer, 160)
    asked = f' (answering "{clip(question, 100)}")' if question else ""
    return f'User said "{said}"{asked}: reads as {reading.band} (P={reading.band_probability:.2f}).'
