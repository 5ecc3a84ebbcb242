"""The words a text and a factor are spoken with: one lexical vocabulary shared by candidate selection, the
semantic reader's lexical features and the say-back's quotes (pure; it sits below all three)."""

from __future__ import annotations

import re

from factor_journal.catalog import Factor

WORD = re.compile(r"[a-z][a-z0-9]+")
STOP_WORDS = frozenset(
    [
        "the",
        "and",
        "for",
        "with",
        "our",
        "are",
        "was",
        "were",
        "have",
        "has",
        "had",
        "you",
        "your",
        "that",
        "this",
        "what",
        "how",
        "who",
        "data",
        "about",
        "any",
        "from",
        "not",
        "use",
        "used",
        "using",
        "into",
        "over",
        "more",
        "less",
        "than",
        "them",
        "they",
        "their",
        "there",
        "its",
        "it's",
        "does",
        "did",
        "can",
        "could",
        "would",
        "should",
    ]
)


def content_words(text: str) -> set[str]:
    """The words of ``text`` that can say what it is about: lower-cased, three letters or more, no stop word."""
    return {word for word in WORD.findall(text.lower()) if word not in STOP_WORDS and len(word) > 2}


_VOCABULARY: dict[int, tuple[Factor, frozenset[str], tuple[str, ...]]] = {}


def factor_vocabulary(factor: Factor) -> tuple[frozenset[str], tuple[str, ...]]:
    """A factor's name words and cue phrases (lower-cased), and the content words of both; cached per factor."""
    cached = _VOCABULARY.get(id(factor))
    if cached is not None and cached[0] is factor:
        return cached[1], cached[2]
    phrases = tuple(cue.phrase.lower() for cue in factor.cues) + tuple(
        noun.lower() for numeric in factor.numeric_cues for noun in numeric.nouns
    )
    words = frozenset(content_words(factor.name) | {w for phrase in phrases for w in content_words(phrase)})
    _VOCABULARY[id(factor)] = (factor, words, phrases)
    return words, phrases


def word_score(factor: Factor, text: str, words: set[str]) -> float:
    """How much ``text`` (lower-cased, with its ``content_words``) speaks of a factor in the factor's own words:
    3 for each of its cue phrases in the text, 0.5 for each of its name and cue words among ``words``."""
    vocabulary, phrases = factor_vocabulary(factor)
    return 3.0 * sum(1 for phrase in phrases if phrase in text) + 0.5 * len(vocabulary & words)


_CLOSERS = {'"': '"', "“": "”", "(": ")"}


def clip(text: str, limit: int) -> str:
    """``text`` (runs of whitespace made one space), whole when it has at most ``limit`` characters; otherwise at
    most ``limit`` of its characters, cut at a word boundary when that keeps more than half of them (else between
    characters) and without trailing commas, colons, semicolons or dashes, then marked with "…" and every quote
    mark or parenthesis opened in what is kept closed after it (so the result may run over ``limit`` by the "…"
    and those closers).

    For a line of prose that may quote or parenthesise (a rationale, an excerpt, a reason quoting the answer):
    its own punctuation stays and what it quotes still reads as a quote.  A person's few words shown inside the
    page's own quote marks are ``extraction.quotes.shorten``'s instead: edge punctuation stripped, words bounded
    as well as characters, the character bound never exceeded, and shortening again changes nothing."""
    flat = " ".join((text or "").split())
    if len(flat) <= limit:
        return flat
    kept = flat[: limit + 1]
    cut = kept.rfind(" ")
    kept = (kept[:cut] if cut > limit // 2 else flat[:limit]).rstrip(" ,;:-–—")
    opened: list[str] = []
    for char in kept:
        if char == '"' and opened and opened[-1] == '"':
            opened.pop()
        elif char in _CLOSERS:
            opened.append(char)
        elif opened and char == _CLOSERS[opened[-1]] and char != '"':
            opened.pop()
    return kept + "…" + "".join(_CLOSERS[char] for char in reversed(opened))
