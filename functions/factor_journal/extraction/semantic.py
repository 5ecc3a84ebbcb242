"""The embedded semantic extractor (the default): meaning, not cue words, without the network.

A turn is read in four steps, each promise checked by the eval (``make eval``):

1. **Hostile text and small talk are not evidence**: a turn that instructs the system ("ignore previous
   instructions", "mark us fully ready", a forged "SYSTEM:" line, a JSON payload) or says nothing whatever
   was asked (filler, a question back, a deferral) proposes nothing (``is_evidence``); nor does a turn the
   trained **evidence gate** reads as off-topic or hostile (its closeness to the labelled off-topic,
   hostile and factor turns, whether it speaks for the company at all or about another workplace, private
   life or the world in general), even when the question named a factor.
2. **Detection**: every assessable factor gets a probability that the turn speaks to it, from a small
   logistic model over similarities (WordLlama's bundled 256-d embeddings, ``embeddings.py``) of the
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

The three models are trained on the eval corpus's dev split only (``python -m factor_journal.extraction.train``)
and ship as ``extraction/models/semantic.json`` (package data, versioned with the catalog version it
was trained against).
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Final

import numpy as np

from factor_journal.catalog.models import BAND_FLOORS, Catalog, Factor, Level, band_of, load_catalog
from factor_journal.extraction import signals
from factor_journal.extraction.base import ExchangeTurn, ExtractionRequest, ExtractionResult, ProposedUpdate
from factor_journal.extraction.embeddings import MODEL_ID, embed
from factor_journal.extraction.lexical import LexicalIndex
from factor_journal.extraction.linear import Calibration, Classifier, Ridge

log = logging.getLogger(__name__)

ARTEFACT: Final = Path(__file__).with_name("models") / "semantic.json"
BANDS: Final = ("low", "mid", "high")
# Each band's values, from the catalog's band floors; whole-number edges, so a rounded value stays in its band
BAND_RANGES: Final = {
    "low": (0.0, BAND_FLOORS[Level.mid] - 1),
    "mid": (BAND_FLOORS[Level.mid], BAND_FLOORS[Level.high] - 1),
    "high": (BAND_FLOORS[Level.high], 100.0),
}
MAX_FACTORS: Final = 3
RIDGE_L2: Final = 3.0  # regularisation of the per-factor linear reading of the turn (chosen by leave-one-out on dev)
BAND_TERM_MIN_TURNS: Final = 5  # a word or word pair joins the band bag-of-words once this many labelled turns use it
SHORT_ANSWER_WORDS: Final = 6


# Labelled examples -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Example:
    """One labelled turn: the question it answers, the answer, the factors it is about with values."""

    question: str
    answer: str
    expected: dict[str, float]  # factor id -> value; empty for off-topic and hostile turns
    kind: str = "factor"

    @staticmethod
    def from_record(record: dict[str, Any]) -> Example:
        return Example(
            question=str(record.get("question") or ""),
            answer=str(record["answer"]),
            expected={str(e["factor_id"]): float(e["value"]) for e in record.get("expected") or []},
            kind=str(record.get("kind") or "factor"),
        )


def _qa(question: str, answer: str) -> str:
    return f"{question} {answer}".strip()


# Features ----------------------------------------------------------------------------------------

DETECT_FEATURES: Final = (
    "answer_description", "answer_rubric", "answer_rubric_mean", "question_questions", "question_description",
    "answer_examples", "exchange_examples", "answer_margin", "answer_z", "question_z", "examples_z",
    "none_similarity", "short_answer", "short_x_question_z", "lexical_answer", "lexical_question", "answer_rank1",
    "question_rank1", "rules_fired", "rules_confidence", "answer_best", "yes_no", "small_talk",
    "asks_back", "knn_answer_vote", "knn_exchange_vote", "knn_question_vote", "ridge", "ridge_z",
    "clause_catalog", "clause_examples", "clause_vote", "clause_z", "clause_rank1", "several_clauses",
    "several_x_clause_z", "several_x_clause_vote", "tfidf_vote", "tfidf_closest", "tfidf_z", "clause_tfidf_vote",
    "clause_tfidf_closest", "several_x_clause_tfidf_vote", "question_tfidf_vote",
)  # fmt: skip
GATE_FEATURES: Final = (
    "off_topic_max", "off_topic_top5", "hostile_max", "hostile_top5", "factor_max", "factor_top5", "none_vote",
    "catalog_max", "company_voice", "words", "number", "small_talk", "asks_back", "question_mark", "you_words",
    "has_question", "elsewhere", "generality",
)  # fmt: skip
CLAUSE_BAND_SIGNALS: Final = (  # the band signals of the clause most about the factor (``Turn._clause_band``)
    "clause_rubric_low", "clause_rubric_mid", "clause_rubric_high", "clause_knn_low", "clause_knn_mid",
    "clause_knn_high", "clause_negations", "clause_negated_negative", "clause_negated_positive", "several_clauses",
)  # fmt: skip
BAND_SIGNALS: Final = (
    "rubric_low", "rubric_mid", "rubric_high", "exchange_rubric_low", "exchange_rubric_mid", "exchange_rubric_high",
    "knn_factor_low", "knn_factor_mid", "knn_factor_high", "knn_all_low", "knn_all_mid", "knn_all_high",
    "negations", "hedges", "negated_negative", "negated_positive", "polarity", "number", "short_answer",
    "low_share", "mid_share", "high_share", "low_markers", "mid_markers", "high_markers",
    "rules_low", "rules_mid", "rules_high", "problem_question", "polarity_x_problem_question",
    *CLAUSE_BAND_SIGNALS, "tfidf_knn_low", "tfidf_knn_mid", "tfidf_knn_high",
)  # fmt: skip


@dataclass(frozen=True)
class WordSimilarities:
    """A turn's word-overlap (TF-IDF) similarities to the labelled examples."""

    answers: np.ndarray  # (texts read × examples): the whole answer first, then each clause of a longer one
    question: np.ndarray  # (examples,): the assistant's question to each example's question; 0 without one


class Space:
    """The catalog and the labelled examples embedded once: everything the features compare a turn with."""

    def __init__(self, catalog: Catalog, examples: Sequence[Example]) -> None:
        self.catalog = catalog
        self.factors: list[Factor] = list(catalog.assessable_factors)
        self.index = {factor.id: i for i, factor in enumerate(self.factors)}
        self.description = embed([f"{f.name}. {f.description}" for f in self.factors])
        self.rubric = embed([getattr(f.rubric, band) for f in self.factors for band in BANDS]).reshape(
            len(self.factors), 3, -1
        )
        questions = [(i, q) for i, f in enumerate(self.factors) for q in f.elicitation_questions]
        self.question_owner = np.array([i for i, _ in questions])
        self.questions = embed([q for _, q in questions])
        self._vocabulary = [_vocabulary(f) for f in self.factors]
        from factor_journal.extraction.offline import OfflineExtractor

        self.rules = OfflineExtractor(catalog)  # the keyword rules' reading is one more feature
        self.set_examples(examples)

    def set_examples(self, examples: Sequence[Example]) -> None:
        self.examples = [e for e in examples if all(fid in self.index for fid in e.expected)]
        self.example_answer = embed([e.answer for e in self.examples])
        self.example_exchange = embed([_qa(e.question, e.answer) for e in self.examples])
        self.example_question = embed([e.question for e in self.examples])
        self.example_question[[not e.question.strip() for e in self.examples]] = 0.0  # no question: no vote
        self._ridges: dict[bytes | None, Ridge] = {}
        self._word_indexes: dict[bytes | None, tuple[np.ndarray, LexicalIndex, LexicalIndex]] = {}
        n, m = len(self.examples), len(self.factors)
        self.example_factors = np.zeros((n, m), dtype=bool)
        self.example_bands = np.full((n, m), -1, dtype=int)
        for row, example in enumerate(self.examples):
            for fid, value in example.expected.items():
                self.example_factors[row, self.index[fid]] = True
                self.example_bands[row, self.index[fid]] = BANDS.index(band_of(value))
        self.example_none = np.array([not e.expected for e in self.examples], dtype=bool)
        self.example_kind = np.array([e.kind for e in self.examples])
        counts = Counter(term for e in self.examples if e.expected for term in signals.band_terms(e.answer))
        self.band_vocabulary = {
            term: i for i, term in enumerate(sorted(t for t, n in counts.items() if n >= BAND_TERM_MIN_TURNS))
        }

    def ridge(self, pool: np.ndarray | None) -> Ridge:
        """The per-factor ridge regression over the examples in ``pool`` (all when None), fitted once per pool."""
        key = None if pool is None else np.packbits(pool).tobytes()
        if key not in self._ridges:
            rows = np.arange(len(self.examples)) if pool is None else np.flatnonzero(pool)
            self._ridges[key] = Ridge.fit(
                _ridge_inputs(self.example_answer, self.example_question, self.example_exchange),
                self.example_factors.astype(np.float64), rows, RIDGE_L2,
            )  # fmt: skip
        return self._ridges[key]

    def word_similarities(self, answers: Sequence[str], question: str, pool: np.ndarray | None) -> WordSimilarities:
        """TF-IDF similarities of each of ``answers`` to every example's answer and of ``question`` to every
        example's question (``lexical.py``), counting words over the examples in ``pool`` only (all when None,
        so a cross-validation fold's index never learns a word from the turns it is scored on); examples
        outside ``pool`` get 0."""
        key = None if pool is None else np.packbits(pool).tobytes()
        if key not in self._word_indexes:
            rows = np.arange(len(self.examples)) if pool is None else np.flatnonzero(pool)
            self._word_indexes[key] = (
                rows,
                LexicalIndex([self.examples[i].answer for i in rows]),
                LexicalIndex([self.examples[i].question for i in rows], min_texts=1),
            )
        rows, answer_index, question_index = self._word_indexes[key]
        n = len(self.examples)
        by_answer = np.zeros((len(answers), n), dtype=np.float32)
        for a, answer in enumerate(answers):
            by_answer[a, rows] = answer_index.similarities(answer)
        by_question = np.zeros(n, dtype=np.float32)
        if question.strip():
            by_question[rows] = question_index.similarities(question)
        return WordSimilarities(by_answer, by_question)

    # One turn ------------------------------------------------------------------------------------

    def turn(self, question: str, answer: str, exclude: int | None = None, pool: np.ndarray | None = None) -> Turn:
        """The turn's embeddings and similarities; ``exclude``/``pool`` hide examples (training only).

        The question is the answer's context unless the answer sets it aside ("Couldn't tell you about owners.
        What I do know is…"): then the turn is read on its own, as if nothing had been asked."""
        if signals.sets_question_aside(answer):
            question = ""
        vectors = embed([answer, question, _qa(question, answer)])
        return Turn(self, question, answer, vectors[0], vectors[1], vectors[2], exclude, pool)


def _ridge_inputs(answer: np.ndarray, question: np.ndarray, exchange: np.ndarray) -> np.ndarray:
    answer, question, exchange = (np.atleast_2d(v).astype(np.float64) for v in (answer, question, exchange))
    return np.hstack([answer, question, exchange, np.ones((len(answer), 1))])


def _vocabulary(factor: Factor) -> tuple[frozenset[str], tuple[str, ...]]:
    from factor_journal.candidates import _factor_vocabulary

    return _factor_vocabulary(factor)


def _lexical(space: Space, text: str) -> np.ndarray:
    from factor_journal.candidates import _words

    lowered = text.lower()
    words = _words(lowered)
    scores = np.zeros(len(space.factors), dtype=np.float32)
    for i, (vocabulary, phrases) in enumerate(space._vocabulary):
        scores[i] = 3.0 * sum(1 for phrase in phrases if phrase in lowered) + 0.5 * len(vocabulary & words)
    return np.minimum(scores, 6.0) / 6.0


def _closest_owned(owned: np.ndarray, sims: np.ndarray) -> np.ndarray:
    """Per factor, the highest similarity (floored at 0) among the examples about it; ``owned`` is (examples ×
    factors), ``sims`` the same examples' similarities to the text read."""
    return np.where(owned, sims[:, None], -1.0).max(axis=0).clip(0, None)


def _z(values: np.ndarray) -> np.ndarray:
    spread = float(values.std())
    return (values - values.mean()) / (spread if spread > 1e-6 else 1.0)


def _margin(values: np.ndarray) -> np.ndarray:
    order = np.argsort(-values)
    best, second = values[order[0]], values[order[1]] if len(values) > 1 else values[order[0]]
    return values - np.where(np.arange(len(values)) == order[0], second, best)


class Turn:
    """A turn embedded against a ``Space``: detection features per factor, band features on demand."""

    def __init__(
        self, space: Space, question: str, answer: str, answer_vec: np.ndarray, question_vec: np.ndarray,
        exchange_vec: np.ndarray, exclude: int | None, pool: np.ndarray | None,
    ) -> None:  # fmt: skip
        self.space, self.question, self.answer = space, question, answer
        self.answer_vec, self.question_vec, self.exchange_vec = answer_vec, question_vec, exchange_vec
        visible = np.ones(len(space.examples), dtype=bool) if pool is None else pool.copy()
        if exclude is not None:
            visible[exclude] = False
        self.visible = visible
        self.answer_sims = space.example_answer @ answer_vec
        self.exchange_sims = space.example_exchange @ exchange_vec
        self.question_sims = space.example_question @ question_vec if question.strip() else None
        ridge = space.ridge(pool)
        if exclude is not None and exclude in ridge.loo:
            self.ridge = ridge.loo[exclude].astype(np.float32)
        else:
            inputs = _ridge_inputs(answer_vec, question_vec if question.strip() else 0 * question_vec, exchange_vec)
            self.ridge = (inputs @ ridge.weights)[0].astype(np.float32)
        self.clauses = signals.clauses(answer)
        self.several_clauses = float(len(self.clauses) > 1)
        self.clause_vecs = embed(self.clauses) if len(self.clauses) > 1 else answer_vec[None, :]
        words = space.word_similarities([answer, *self.clauses] if len(self.clauses) > 1 else [answer], question, pool)
        self.word_sims, self.question_word_sims = words.answers[0], words.question
        self.clause_word_sims = words.answers[1:]  # (clauses × examples); none for a one-clause turn
        self.answer_description = space.description @ answer_vec  # (m,)
        self.answer_rubric = space.rubric @ answer_vec  # (m, 3)
        self.short = float(signals.word_count(answer) <= SHORT_ANSWER_WORDS)
        self.band_terms = np.zeros(len(space.band_vocabulary), dtype=np.float32)
        for term in signals.band_terms(answer):
            if (column := space.band_vocabulary.get(term)) is not None:
                self.band_terms[column] = 1.0
        recent = [ExchangeTurn(role="assistant", text=question)] if question.strip() else []
        m = len(space.factors)
        self.rules_level = np.zeros((m, 3), dtype=np.float32)
        self.rules_confidence = np.zeros(m, dtype=np.float32)
        for update in space.rules.read(answer, recent):
            if update.factor_id in space.index:
                i = space.index[update.factor_id]
                self.rules_level[i, BANDS.index(band_of(update.value))] = 1.0
                self.rules_confidence[i] = update.confidence

    def detection_features(self) -> np.ndarray:
        """(factors × DETECT_FEATURES) for this turn."""
        space, m = self.space, len(self.space.factors)
        has_question = bool(self.question.strip())
        answer_description, rubric = self.answer_description, self.answer_rubric
        answer_rubric, answer_rubric_mean = rubric.max(axis=1), rubric.mean(axis=1)
        question_questions = np.zeros(m, dtype=np.float32)
        question_description = np.zeros(m, dtype=np.float32)
        if has_question:
            np.maximum.at(question_questions, space.question_owner, space.questions @ self.question_vec)
            question_description = space.description @ self.question_vec
        answer_examples = np.zeros(m, dtype=np.float32)
        exchange_examples = np.zeros(m, dtype=np.float32)
        rows = np.flatnonzero(self.visible)
        if len(rows):
            owned = space.example_factors[rows]  # (r, m)
            answer_examples = _closest_owned(owned, self.answer_sims[rows])
            exchange_examples = _closest_owned(owned, self.exchange_sims[rows])
        none_rows = rows[space.example_none[rows]] if len(rows) else rows
        none_similarity = float(self.answer_sims[none_rows].max()) if len(none_rows) else 0.0
        answer_side = answer_description + answer_rubric + answer_examples
        question_z = _z(question_questions + question_description) if has_question else np.zeros(m)
        lexical_answer, lexical_question = _lexical(space, self.answer), _lexical(space, self.question)
        answer_rank1 = (answer_side >= answer_side.max()).astype(np.float32)
        question_rank1 = (
            (question_questions >= question_questions.max()).astype(np.float32) if has_question else 0 * answer_rank1
        )
        columns = [
            answer_description, answer_rubric, answer_rubric_mean, question_questions, question_description,
            answer_examples, exchange_examples, _margin(answer_side), _z(answer_side), question_z,
            _z(exchange_examples + answer_examples), np.full(m, none_similarity), np.full(m, self.short),
            self.short * question_z, lexical_answer, lexical_question, answer_rank1, question_rank1,
            self.rules_level.max(axis=1), self.rules_confidence, np.full(m, answer_side.max()),
            np.full(m, float(signals.answer_polarity(self.answer) != 0)),
            np.full(m, min(signals.small_talk_count(self.answer), 3) / 3),
            np.full(m, float(signals.asks_back(self.answer))),
            self._vote(self.answer_sims, rows), self._vote(self.exchange_sims, rows),
            self._vote(self.question_sims, rows) if self.question_sims is not None else np.zeros(m),
            self.ridge, _z(self.ridge), *self._clause_detection(rows), *self._word_detection(rows, has_question),
        ]  # fmt: skip
        return np.stack([np.asarray(c, dtype=np.float32) for c in columns], axis=1)

    def _clause_detection(self, rows: np.ndarray) -> list[np.ndarray]:
        """Per factor, the best of the turn's clauses: a turn about two factors says each in its own clause,
        and the whole turn's embedding averages them away."""
        space, m, several = self.space, len(self.space.factors), self.several_clauses
        vecs = self.clause_vecs  # (c, d)
        catalog = vecs @ space.description.T + np.einsum("fbd,cd->cfb", space.rubric, vecs).max(axis=2)  # (c, m)
        examples = np.zeros_like(catalog)
        votes = np.zeros_like(catalog)
        if len(rows):
            owned = space.example_factors[rows]  # (r, m)
            sims = np.zeros((len(vecs), len(space.examples)), dtype=np.float32)  # (c, n), filled for ``rows`` only
            sims[:, rows] = vecs @ space.example_answer[rows].T
            for c, clause_sims in enumerate(sims):
                examples[c] = _closest_owned(owned, clause_sims[rows])
                votes[c] = self._vote(clause_sims, rows)
        score = catalog + examples
        z = np.stack([_z(row) for row in score])
        rank1 = (score >= score.max(axis=1, keepdims=True)).any(axis=0)
        return [
            catalog.max(axis=0), examples.max(axis=0), votes.max(axis=0), z.max(axis=0), rank1.astype(np.float32),
            np.full(m, several), several * z.max(axis=0), several * votes.max(axis=0),
        ]  # fmt: skip

    def _word_detection(self, rows: np.ndarray, has_question: bool) -> list[np.ndarray]:
        """The neighbour readings again by shared rare words (TF-IDF) instead of embeddings, for the whole answer,
        its best clause and the question: a telling word the embedding's average drowns still finds its examples."""
        m = len(self.space.factors)
        owned = self.space.example_factors[rows]
        vote, closest = self._vote(self.word_sims, rows), _closest_owned(owned, self.word_sims[rows])
        clause_vote, clause_closest = vote, closest  # a one-clause turn's only clause is the answer
        if self.several_clauses:
            clause_vote = np.max([self._vote(sims, rows) for sims in self.clause_word_sims], axis=0)
            clause_closest = np.max([_closest_owned(owned, sims[rows]) for sims in self.clause_word_sims], axis=0)
        question_vote = self._vote(self.question_word_sims, rows) if has_question else np.zeros(m, dtype=np.float32)
        return [vote, closest, _z(closest), clause_vote, clause_closest, self.several_clauses * clause_vote,
                question_vote]  # fmt: skip

    def gate_features(self) -> np.ndarray:
        """GATE_FEATURES: how much the turn reads like the labelled off-topic, hostile and factor turns, and
        whether it says anything in the company's voice at all (whatever the question was about)."""
        space, rows, text = self.space, np.flatnonzero(self.visible), self.answer
        closeness = []
        for kind in ("off_topic", "hostile", "factor"):
            sims = np.sort(self.answer_sims[rows[space.example_kind[rows] == kind]])[::-1]
            closeness += [float(sims[0]), float(sims[:5].mean())] if len(sims) else [0.0, 0.0]
        nearest = rows[np.argsort(-self.answer_sims[rows])[:10]] if len(rows) else rows
        none_vote = float(space.example_none[nearest].mean()) if len(nearest) else 0.0
        catalog = float((self.answer_description + self.answer_rubric.max(axis=1)).max())
        features = [
            *closeness, none_vote, catalog, float(signals.speaks_for_the_company(text)),
            np.log1p(signals.word_count(text)) / 4, float(signals.has_number(text)),
            min(signals.small_talk_count(text), 3) / 3, float(signals.asks_back(text)), float("?" in text),
            min(signals.you_count(text), 3) / 3, float(bool(self.question.strip())),
            float(signals.talks_about_elsewhere(text)), float(signals.generalises(text)),
        ]  # fmt: skip
        return np.asarray(features, dtype=np.float32)

    def _vote(self, sims: np.ndarray, rows: np.ndarray, k: int = 10) -> np.ndarray:
        """Per factor, the similarity-weighted share of the ``k`` nearest labelled turns (among ``rows``) about it."""
        votes = np.zeros(len(self.space.factors), dtype=np.float32)
        if not len(rows):
            return votes
        nearest = rows[np.argsort(-sims[rows])[:k]]
        weights = np.clip(sims[nearest], 0.0, None) ** 2
        if weights.sum() <= 0:
            return votes
        return (weights[:, None] * self.space.example_factors[nearest]).sum(axis=0) / weights.sum()

    def band_features(self, factor_index: int) -> np.ndarray:
        """BAND_SIGNALS for one factor, then the band bag-of-words (the raw embedding overfits: measured, left out)."""
        space = self.space
        rubric = space.rubric[factor_index] @ self.answer_vec
        exchange_rubric = space.rubric[factor_index] @ self.exchange_vec
        rows = np.flatnonzero(self.visible)
        labelled = rows[space.example_bands[rows, factor_index] >= 0]  # the examples that give this factor a band
        knn_factor = self._knn(labelled, factor_index, k=5)
        knn_all = self._knn(rows[(space.example_bands[rows] >= 0).any(axis=1)], None, k=10)
        text = self.answer
        problem = float(signals.problem_question(self.question))
        signal = [
            *(rubric - rubric.mean()), *(exchange_rubric - exchange_rubric.mean()), *knn_factor, *knn_all,
            min(signals.negation_count(text), 3) / 3, min(signals.hedge_count(text), 3) / 3,
            float(signals.negated_negative(text)), float(signals.negated_positive(text)),
            float(signals.answer_polarity(text)), float(signals.has_number(text)), self.short,
            *signals.maturity_markers(text), *self.rules_level[factor_index],
            problem, problem * float(signals.answer_polarity(text)), *self._clause_band(factor_index, rows),
            *self._knn(labelled, factor_index, k=5, sims=self.word_sims),
        ]  # fmt: skip
        return np.concatenate([np.asarray(signal, dtype=np.float32), self.band_terms])

    def _clause_band(self, factor_index: int, rows: np.ndarray) -> list[float]:
        """The band signals of the clause most about the factor (zero for a one-clause turn, which the whole-turn
        signals already describe): in "the dashboards are great, but the numbers are a mess" each factor's band
        is in its own clause."""
        if not self.several_clauses:
            return [0.0] * len(CLAUSE_BAND_SIGNALS)
        space = self.space
        about = self.clause_vecs @ space.description[factor_index] + (
            self.clause_vecs @ space.rubric[factor_index].T
        ).max(axis=1)
        best = int(np.argmax(about))
        vec, text = self.clause_vecs[best], self.clauses[best]
        rubric = space.rubric[factor_index] @ vec
        labelled = rows[space.example_bands[rows, factor_index] >= 0]
        sims = np.zeros(len(space.examples), dtype=np.float32)  # filled for ``labelled`` only
        sims[labelled] = space.example_answer[labelled] @ vec
        votes = self._knn(labelled, factor_index, k=5, sims=sims)
        return [
            *(rubric - rubric.mean()), *votes, min(signals.negation_count(text), 3) / 3,
            float(signals.negated_negative(text)), float(signals.negated_positive(text)), 1.0,
        ]  # fmt: skip

    def _knn(self, rows: np.ndarray, factor_index: int | None, k: int, sims: np.ndarray | None = None) -> np.ndarray:
        """Similarity-weighted band distribution of the ``k`` nearest labelled answers among ``rows``, by ``sims``
        (every example's similarity to the text read; the whole answer's when None)."""
        sims = self.answer_sims if sims is None else sims
        votes = np.zeros(3, dtype=np.float32)
        if not len(rows):
            return votes + 1 / 3
        nearest = rows[np.argsort(-sims[rows])[:k]]
        for row in nearest:
            bands = self.space.example_bands[row]
            band = bands[factor_index] if factor_index is not None else bands[bands >= 0][0]
            votes[band] += max(float(sims[row]), 0.0) ** 2
        total = votes.sum()
        return votes / total if total > 0 else votes + 1 / 3


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
            "band_signals_version": 5,
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
            ],  # fmt: skip
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> SemanticModel:
        versions = (data.get("detect_features"), data.get("band_signals"), data.get("gate_features"))
        if versions != (list(DETECT_FEATURES), list(BAND_SIGNALS), list(GATE_FEATURES)):
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

    @property
    def score(self) -> float:
        """P(detected) × P(band): what abstention compares with the threshold (``SemanticModel.stated_confidence``
        turns it into the confidence an update states)."""
        return self.detected * self.band_probability


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

    def readings(self, question: str, answer: str, turn: Turn | None = None, *, gated: bool = True) -> list[Reading]:
        """Every factor above the detection floor, most likely first (at most ``MAX_FACTORS``), with its band;
        none for a turn that is no evidence (the rules, then the trained gate unless ``gated`` is False)."""
        if not is_evidence(answer):
            return []
        turn = turn or self.turn(question, answer)
        if gated and self.not_evidence(turn) >= self.model.gate_threshold:
            return []
        detected = self.detect(turn)
        order = [i for i in np.argsort(-detected)[:MAX_FACTORS] if detected[i] >= self.model.detect_floor]
        found = []
        for i in order:
            probs = self.model.band.probabilities(turn.band_features(int(i))[None, :])[0]
            band = BANDS[int(probs.argmax())]
            found.append(
                Reading(self.space.factors[i].id, float(detected[i]), band, float(probs.max()), self.value(probs))
            )
        return found

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


def is_evidence(answer: str) -> bool:
    """Whether a turn can be evidence at all: not empty, not hostile (instructions to the system), and not
    small talk that says nothing whatever was asked (filler, a question back, a deferral)."""
    return bool(answer.strip()) and not signals.is_hostile(answer) and not signals.is_non_evidence(answer)


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
            "semantic model trained on catalog %s, running on %s: retrain with "
            "`python -m factor_journal.extraction.train`", model.catalog_version, catalog.version,
        )  # fmt: skip
    reader = SemanticReader(Space(catalog, model.examples), model)
    _READERS[id(catalog)] = (catalog, reader)
    return reader


def rank_factors(catalog: Catalog, question: str, answer: str, limit: int) -> list[str]:
    """The ``limit`` factors the semantic detector finds most likely in the turn (for candidate selection)."""
    reader = default_reader(catalog)
    if not is_evidence(answer):
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
        question = _last_question(request.recent)
        updates: list[dict[str, Any]] = []
        rejected: list[str] = []
        readings: list[Reading] = []
        if is_evidence(request.text):
            turn = self.reader.turn(question, request.text)
            if (p_none := self.reader.not_evidence(turn)) >= self.reader.model.gate_threshold:
                rejected.append(f"no update: the turn reads as off-topic or hostile (P={p_none:.2f})")
                return ExtractionResult(raw_updates=[], extractor=self.name, model=self.model, rejected=rejected)
            readings = self.reader.readings(question, request.text, turn, gated=False)  # the gate was just read
        for reading in readings:
            if reading.score < self.reader.model.threshold:
                rejected.append(
                    f"{reading.factor_id!r}: abstained ({reading.band}, score {reading.score:.3f} "
                    f"below {self.reader.model.threshold:g})"
                )
                continue
            updates.append(
                ProposedUpdate(
                    factor_id=reading.factor_id,
                    value=reading.value,
                    confidence=round(min(max(self.reader.model.stated_confidence(reading.score), 0.05), 0.95), 3),
                    rationale=_rationale(reading, request.text, question),
                ).model_dump()
            )
        return ExtractionResult(raw_updates=updates, extractor=self.name, model=self.model, rejected=rejected)


def _rationale(reading: Reading, answer: str, question: str) -> str:
    said = " ".join(answer.split())
    said = said if len(said) <= 160 else said[:159].rstrip() + "…"
    asked = f' (answering "{" ".join(question.split())[:100]}")' if question else ""
    return f'User said "{said}"{asked}: reads as {reading.band} (P={reading.band_probability:.2f}).'
