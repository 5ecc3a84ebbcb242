"""The embedded sentence model: WordLlama's 256-d static embeddings, shipped inside the ``wordllama`` wheel.

Loaded from the installed package folder with downloads disabled (``WordLlama.load``'s default
lookup misses the bundled tokenizer and would try the network): nothing is fetched at run time.
One model per process (~130 MB resident, ~0.2 s to load from a warm disk); embedding a sentence
takes well under a millisecond.
"""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from wordllama import WordLlama

MODEL_ID = "wordllama-l2_supercat-256"
DIMENSIONS = 256


class EmbeddingModelError(RuntimeError):
    """The bundled embedding model could not be loaded (package missing or incomplete)."""


def package_dir() -> Path:
    """The installed ``wordllama`` package folder (which holds ``weights/`` and ``tokenizers/``)."""
    spec = importlib.util.find_spec("wordllama")
    if spec is None or spec.origin is None:
        raise EmbeddingModelError("the wordllama package is not installed (see pyproject.toml)")
    return Path(spec.origin).parent


@lru_cache(maxsize=1)
def load_model() -> WordLlama:
    """The bundled model, loaded offline once per process; ``EmbeddingModelError`` if it cannot be."""
    from wordllama import WordLlama

    folder = package_dir()
    try:
        return WordLlama.load(config="l2_supercat", dim=DIMENSIONS, cache_dir=folder, disable_download=True)
    except Exception as error:  # a missing file must say so, never fall back to a download
        raise EmbeddingModelError(f"cannot load the bundled wordllama model from {folder}: {error}") from error


def embed(texts: list[str]) -> np.ndarray:
    """Unit-length float32 embeddings, one row per text (an empty text embeds as zeros)."""
    if not texts:
        return np.zeros((0, DIMENSIONS), dtype=np.float32)
    cleaned = [text if text.strip() else "." for text in texts]
    vectors = np.asarray(load_model().embed(cleaned, norm=True), dtype=np.float32)
    for index, text in enumerate(texts):
        if not text.strip():
            vectors[index] = 0.0
    return vectors
