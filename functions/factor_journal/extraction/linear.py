"""Small linear models the semantic extractor learns from the labelled corpus, in numpy alone.

Everything here is pure and deterministic: feature scaling, a multinomial logistic regression (with its
JSON form, so a trained model ships as package data), a multi-output ridge regression that also gives
each training row's leave-one-out prediction, and a monotone calibration of a score into the chance of being right.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class Standardised:
    """Feature scaling learnt with a model: (x - mean) / scale."""

    mean: np.ndarray
    scale: np.ndarray

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return (x - self.mean) / self.scale

    @staticmethod
    def fit(x: np.ndarray, keep: int = 0) -> Standardised:
        """Scaling for ``x``'s columns; the first ``keep`` columns (unit embeddings) are left as they are."""
        mean, scale = x.mean(axis=0), x.std(axis=0)
        scale = np.where(scale > 1e-6, scale, 1.0)
        mean[:keep], scale[:keep] = 0.0, 1.0
        return Standardised(mean, scale)


def softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max(axis=-1, keepdims=True)
    exp = np.exp(shifted)
    return exp / exp.sum(axis=-1, keepdims=True)


def fit_logistic(
    x: np.ndarray, y: np.ndarray, l2: float, classes: int, steps: int = 400
) -> tuple[np.ndarray, np.ndarray]:
    """Multinomial logistic regression (``classes`` ≥ 2) by full-batch gradient descent with Adam; (W, b)."""
    n, d = x.shape
    weights, bias = np.zeros((d, classes)), np.zeros(classes)
    onehot = np.eye(classes)[y]
    m_w, v_w, m_b, v_b = (np.zeros_like(weights), np.zeros_like(weights), np.zeros_like(bias), np.zeros_like(bias))
    rate, beta1, beta2 = 0.05, 0.9, 0.999
    for step in range(1, steps + 1):
        error = softmax(x @ weights + bias) - onehot
        grad_w = x.T @ error / n + l2 * weights
        grad_b = error.mean(axis=0)
        m_w, v_w = beta1 * m_w + (1 - beta1) * grad_w, beta2 * v_w + (1 - beta2) * grad_w**2
        m_b, v_b = beta1 * m_b + (1 - beta1) * grad_b, beta2 * v_b + (1 - beta2) * grad_b**2
        correction1, correction2 = 1 - beta1**step, 1 - beta2**step
        weights -= rate * (m_w / correction1) / (np.sqrt(v_w / correction2) + 1e-8)
        bias -= rate * (m_b / correction1) / (np.sqrt(v_b / correction2) + 1e-8)
    return weights, bias


@dataclass
class Classifier:
    """A trained softmax classifier with its feature scaling."""

    scaling: Standardised
    weights: np.ndarray
    bias: np.ndarray

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        return softmax(self.scaling(x) @ self.weights + self.bias)

    def to_json(self) -> dict[str, Any]:
        return {
            "mean": np.round(self.scaling.mean, 5).tolist(),
            "scale": np.round(self.scaling.scale, 5).tolist(),
            "weights": np.round(self.weights, 5).tolist(),
            "bias": np.round(self.bias, 5).tolist(),
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> Classifier:
        return Classifier(
            Standardised(np.asarray(data["mean"], dtype=np.float32), np.asarray(data["scale"], dtype=np.float32)),
            np.asarray(data["weights"], dtype=np.float32),
            np.asarray(data["bias"], dtype=np.float32),
        )


@dataclass
class Ridge:
    """Multi-output ridge regression from a turn's embeddings to the factors it is about, with exact
    leave-one-out predictions for the rows it was fitted on (so training never scores a turn with itself)."""

    weights: np.ndarray  # (inputs, factors)
    loo: dict[int, np.ndarray]  # example row -> its prediction from a fit without it

    @staticmethod
    def fit(x: np.ndarray, y: np.ndarray, rows: np.ndarray, l2: float) -> Ridge:
        xs, ys = x[rows], y[rows]
        inverse = np.linalg.inv(xs.T @ xs + l2 * np.eye(x.shape[1]))
        weights = inverse @ (xs.T @ ys)
        leverage = np.einsum("ij,jk,ik->i", xs, inverse, xs)
        loo = (xs @ weights - leverage[:, None] * ys) / (1.0 - leverage[:, None])
        return Ridge(weights, {int(row): loo[k] for k, row in enumerate(rows)})


@dataclass
class Calibration:
    """A non-decreasing map from a model's score to the observed chance that a reading with that score is right
    (isotonic regression), linear between its knots and flat beyond them."""

    scores: np.ndarray  # knots, increasing
    chances: np.ndarray  # the chance of being right at each knot, non-decreasing

    def __call__(self, score: float) -> float:
        return float(np.interp(score, self.scores, self.chances))

    @staticmethod
    def fit(scores: np.ndarray, right: np.ndarray) -> Calibration:
        """Isotonic regression of ``right`` (0/1) on ``scores`` by pooling adjacent violators; each pooled block
        becomes a knot at its mean score, its chance shrunk towards one half by one right and one wrong reading
        (so a small block at either end never claims certainty). Needs at least one reading."""
        order = np.argsort(scores, kind="stable")
        scores, right = np.asarray(scores, dtype=np.float64)[order], np.asarray(right, dtype=np.float64)[order]
        ordered = zip(scores, right, strict=True)
        blocks: list[list[float]] = []  # [sum of scores, sum of right, count]
        for score, hit in ordered:
            blocks.append([score, hit, 1.0])
            while len(blocks) > 1 and blocks[-2][1] / blocks[-2][2] >= blocks[-1][1] / blocks[-1][2]:
                last = blocks.pop()
                blocks[-1] = [a + b for a, b in zip(blocks[-1], last, strict=True)]
        chances = np.maximum.accumulate(np.array([(b[1] + 1.0) / (b[2] + 2.0) for b in blocks]))
        return Calibration(np.array([b[0] / b[2] for b in blocks]), chances)

    def to_json(self) -> dict[str, Any]:
        return {"scores": np.round(self.scores, 5).tolist(), "chances": np.round(self.chances, 5).tolist()}

    @staticmethod
    def from_json(data: dict[str, Any]) -> Calibration:
        return Calibration(np.asarray(data["scores"], dtype=np.float64), np.asarray(data["chances"], dtype=np.float64))
