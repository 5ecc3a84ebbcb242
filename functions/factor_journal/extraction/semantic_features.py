"""What the semantic extractor reads in a turn: the catalog and the labelled examples embedded once
(``Space``) and one turn's features against them (``Turn``).

Three sets of features, each a fixed, named list so a trained artefact can tell whether it matches this
code: ``DETECT_FEATURES`` (per factor: is the turn about it?), ``BAND_SIGNALS`` plus the band
bag-of-words (per factor the turn is about: low, mid or high?) and ``GATE_FEATURES`` (per turn: is it
evidence at all?).  ``semantic.py`` turns them into readings with the trained models; ``train.py`` computes
them for every dev turn with the turn itself hidden from the examples.  Pure and deterministic: no
Firestore, no network (the embeddings load from the installed ``wordllama`` wheel).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from factor_journal.catalog.models import Catalog, Factor, band_of
from factor_journal.extraction import signals
from factor_journal.extraction.base import ExchangeTurn
from factor_journal.extraction.lexical import LexicalIndex
from factor_journal.extraction.linear import Ridge
from factor_journal.extraction.semantic_feature_names import (
    CLAUSE_BAND_SIGNALS,
)
from factor_journal.extraction.sentence_model import embed
from factor_journal.vocabulary import content_words, factor_vocabulary

BANDS: Final = ("low", "mid", "high")
RIDGE_L2: Final = 3.0  # regularisation of the per-factor linear reading of the turn (chosen by leave-one-out on dev)
BAND_TERM_MIN_TURNS: Final = 5  # a word or word pair joins the band bag-of-words once this many labelled turns use it
SHORT_ANSWER_WORDS: Final = 6
# How the band signals are computed: raised when a signal's meaning changes under the same name, so an artefact
# trained on the old meaning refuses to load (``SemanticModel.from_json``)
BAND_SIGNALS_VERSION: Final = 5

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
        self._word_indexes: dict[bytes | None, tuple[LexicalIndex, LexicalIndex]] = {}
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

    def _pool(self, pool: np.ndarray | None) -> tuple[bytes | None, np.ndarray]:
        """The cache key of a pool of visible examples (None: all of them) and the example rows it holds."""
        if pool is None:
            return None, np.arange(len(self.examples))
        return np.packbits(pool).tobytes(), np.flatnonzero(pool)

    def ridge(self, pool: np.ndarray | None) -> Ridge:
        """The per-factor ridge regression over the examples in ``pool`` (all when None), fitted once per pool."""
        key, rows = self._pool(pool)
        if key not in self._ridges:
            self._ridges[key] = Ridge.fit(
                _ridge_inputs(self.example_answer, self.example_question, self.example_exchange),
                self.example_factors.astype(np.float64),
                rows,
                RIDGE_L2,
            )
        return self._ridges[key]

    def word_similarities(self, answers: Sequence[str], question: str, pool: np.ndarray | None) -> WordSimilarities:
        """TF-IDF similarities of each of ``answers`` to every example's answer and of ``question`` to every
        example's question (``lexical.py``), counting words over the examples in ``pool`` only (all when None,
        so a cross-validation fold's index never learns a word from the turns it is scored on); examples
        outside ``pool`` get 0."""
        key, rows = self._pool(pool)
        if key not in self._word_indexes:
            self._word_indexes[key] = (
                LexicalIndex([self.examples[i].answer for i in rows]),
                LexicalIndex([self.examples[i].question for i in rows], min_texts=1),
            )
        answer_index, question_index = self._word_indexes[key]
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
    return factor_vocabulary(factor)


def _lexical(space: Space, text: str) -> np.ndarray:
    lowered = text.lower()
    words = content_words(lowered)
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
        self,
        space: Space,
        question: str,
        answer: str,
        answer_vec: np.ndarray,
        question_vec: np.ndarray,
        exchange_vec: np.ndarray,
        exclude: int | None,
        pool: np.ndarray | None,
    ) -> None:
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
        answer_vote = self._vote(self.answer_sims, rows)
        question_z = _z(question_questions + question_description) if has_question else np.zeros(m)
        lexical_answer, lexical_question = _lexical(space, self.answer), _lexical(space, self.question)
        answer_rank1 = (answer_side >= answer_side.max()).astype(np.float32)
        question_rank1 = (
            (question_questions >= question_questions.max()).astype(np.float32) if has_question else 0 * answer_rank1
        )
        columns = [
            answer_description,
            answer_rubric,
            answer_rubric_mean,
            question_questions,
            question_description,
            answer_examples,
            exchange_examples,
            _margin(answer_side),
            _z(answer_side),
            question_z,
            _z(exchange_examples + answer_examples),
            np.full(m, none_similarity),
            np.full(m, self.short),
            self.short * question_z,
            lexical_answer,
            lexical_question,
            answer_rank1,
            question_rank1,
            self.rules_level.max(axis=1),
            self.rules_confidence,
            np.full(m, answer_side.max()),
            np.full(m, float(signals.answer_polarity(self.answer) != 0)),
            np.full(m, min(signals.small_talk_count(self.answer), 3) / 3),
            np.full(m, float(signals.asks_back(self.answer))),
            answer_vote,
            self._vote(self.exchange_sims, rows),
            self._vote(self.question_sims, rows) if self.question_sims is not None else np.zeros(m),
            self.ridge,
            _z(self.ridge),
            *self._clause_detection(rows, answer_examples, answer_vote),
            *self._word_detection(rows, has_question),
        ]
        return np.stack([np.asarray(c, dtype=np.float32) for c in columns], axis=1)

    def _clause_detection(
        self, rows: np.ndarray, answer_examples: np.ndarray, answer_vote: np.ndarray
    ) -> list[np.ndarray]:
        """Per factor, the best of the turn's clauses: a turn about two factors says each in its own clause,
        and the whole turn's embedding averages them away.  A one-clause turn's only clause is the answer,
        whose closest examples and neighbour vote (``answer_examples``, ``answer_vote``) are already read."""
        space, m, several = self.space, len(self.space.factors), self.several_clauses
        vecs = self.clause_vecs  # (c, d)
        catalog = vecs @ space.description.T + np.einsum("fbd,cd->cfb", space.rubric, vecs).max(axis=2)  # (c, m)
        examples = np.zeros_like(catalog)
        votes = np.zeros_like(catalog)
        if len(rows):
            if several:
                owned = space.example_factors[rows]  # (r, m)
                sims = np.zeros((len(vecs), len(space.examples)), dtype=np.float32)  # (c, n), filled for ``rows`` only
                sims[:, rows] = vecs @ space.example_answer[rows].T
                for c, clause_sims in enumerate(sims):
                    examples[c] = _closest_owned(owned, clause_sims[rows])
                    votes[c] = self._vote(clause_sims, rows)
            else:
                examples[0], votes[0] = answer_examples, answer_vote
        score = catalog + examples
        z = np.stack([_z(row) for row in score])
        rank1 = (score >= score.max(axis=1, keepdims=True)).any(axis=0)
        return [
            catalog.max(axis=0),
            examples.max(axis=0),
            votes.max(axis=0),
            z.max(axis=0),
            rank1.astype(np.float32),
            np.full(m, several),
            several * z.max(axis=0),
            several * votes.max(axis=0),
        ]

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
        return [
            vote,
            closest,
            _z(closest),
            clause_vote,
            clause_closest,
            self.several_clauses * clause_vote,
            question_vote,
        ]

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
            *closeness,
            none_vote,
            catalog,
            float(signals.speaks_for_the_company(text)),
            np.log1p(signals.word_count(text)) / 4,
            float(signals.has_number(text)),
            min(signals.small_talk_count(text), 3) / 3,
            float(signals.asks_back(text)),
            float("?" in text),
            min(signals.you_count(text), 3) / 3,
            float(bool(self.question.strip())),
            float(signals.talks_about_elsewhere(text)),
            float(signals.generalises(text)),
        ]
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
            *(rubric - rubric.mean()),
            *(exchange_rubric - exchange_rubric.mean()),
            *knn_factor,
            *knn_all,
            min(signals.negation_count(text), 3) / 3,
            min(signals.hedge_count(text), 3) / 3,
            float(signals.negated_negative(text)),
            float(signals.negated_positive(text)),
            float(signals.answer_polarity(text)),
            float(signals.has_number(text)),
            self.short,
            *signals.maturity_markers(text),
            *self.rules_level[factor_index],
            problem,
            problem * float(signals.answer_polarity(text)),
            *self._clause_band(factor_index, rows),
            *self._knn(labelled, factor_index, k=5, sims=self.word_sims),
        ]
        return np.concatenate([np.asarray(signal, dtype=np.float32), self.band_terms])

    def _clause_band(self, factor_index: int, rows: np.ndarray) -> list[float]:
        """The band signals of the clause most about the factor (zero for a one-clause turn, which the whole-turn
        signals already describe): in "the dashboards are great, but the numbers are a mess" each factor's band
        is in its own clause."""
        if not self.several_clauses:
            return [0.0] * len(CLAUSE_BAND_SIGNALS)
        space = self.space
        best = self._clause_most_about(factor_index)
        vec, text = self.clause_vecs[best], self.clauses[best]
        rubric = space.rubric[factor_index] @ vec
        labelled = rows[space.example_bands[rows, factor_index] >= 0]
        sims = np.zeros(len(space.examples), dtype=np.float32)  # filled for ``labelled`` only
        sims[labelled] = space.example_answer[labelled] @ vec
        votes = self._knn(labelled, factor_index, k=5, sims=sims)
        return [
            *(rubric - rubric.mean()),
            *votes,
            min(signals.negation_count(text), 3) / 3,
            float(signals.negated_negative(text)),
            float(signals.negated_positive(text)),
            1.0,
        ]

    def _clause_most_about(self, factor_index: int) -> int:
        """The index of the clause closest to the factor's description and to one of its rubric levels."""
        space = self.space
        about = self.clause_vecs @ space.description[factor_index] + (
            self.clause_vecs @ space.rubric[factor_index].T
        ).max(axis=1)
        return int(np.argmax(about))

    def clause_about(self, factor_index: int) -> str:
        """The clause of the answer most about the factor (the whole answer when it is one clause): the words a
        reading of that factor rests on."""
        return self.clauses[self._clause_most_about(factor_index)] if self.several_clauses else self.answer

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
