"""The few words of an answer a reading rests on: what the conversation page says back to the person.

Pure text functions.  A quote is always the person's own words, copied from the answer: an extractor's
proposed quote is kept only when it stands in the answer (case, spacing and typographic quotes aside);
otherwise the clause of the answer that shares the most words with the factor is taken.  Either way it is
shortened to a few words and a bounded number of characters (``shorten``), so a line under the answer reads
"Data quality: low — ‘numbers never match’", and an answer without spaces (a long URL or path, Chinese or
Japanese text) never makes a quote longer than ``MAX_QUOTE_CHARS``.
"""

from __future__ import annotations

import re
from typing import Final

from factor_journal.catalog import Factor
from factor_journal.extraction.signals import clauses
from factor_journal.vocabulary import content_words

MAX_QUOTE_WORDS: Final = 12
MAX_QUOTE_CHARS: Final = 160
"""The most characters a quote has, its "…" included: twelve long words fit, and a quote stays one line under
the answer; far inside the 1,200 a person's decision may carry as its words (``models.SaidIn``)."""
ELLIPSIS: Final = "…"
_TYPOGRAPHIC: Final = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"', "–": "-", "—": "-"})
_EDGE_PUNCTUATION: Final = " \t\n\"'“”‘’.,;:!?()[]-–—"


def _comparable(text: str) -> str:
    return " ".join(text.translate(_TYPOGRAPHIC).lower().split())


def verbatim(quote: str, answer: str) -> str | None:
    """``quote`` as it stands in ``answer`` (the answer's own characters), or None when the answer does not hold
    it.  Case, runs of whitespace and typographic quotes and dashes do not count as differences."""
    wanted = _comparable(quote).strip(_EDGE_PUNCTUATION)
    if len(wanted) < 2:
        return None
    # Map each character of the comparable answer back to its place in the original answer.
    places: list[int] = []
    comparable: list[str] = []
    previous_space = True
    for index, char in enumerate(answer.translate(_TYPOGRAPHIC).lower()):
        if char.isspace():
            if previous_space:
                continue
            char, previous_space = " ", True
        else:
            previous_space = False
        comparable.append(char)
        places.append(index)
    start = "".join(comparable).find(wanted)
    if start < 0:
        return None
    return answer[places[start] : places[start + len(wanted) - 1] + 1]


def shorten(text: str, max_words: int = MAX_QUOTE_WORDS, max_chars: int = MAX_QUOTE_CHARS) -> str:
    """``text`` without its edge punctuation, cut to at most ``max_words`` words and ``max_chars`` characters
    (``max_chars`` ≥ 2), marked with "…" when cut (the "…" counts in ``max_chars``).

    A cut by characters falls between words when that keeps at least half of the room; otherwise (a long URL,
    a path, text written without spaces) it falls between characters.  ``shorten`` of its own result changes
    nothing, so text already shortened (or stored by an older version) can be shortened again safely.

    For a quote: a person's own few words, shown inside the page's quote marks or kept as the words a decision
    was given with.  ``vocabulary.clip`` cuts a line of prose instead (a rationale, an excerpt, a reason that
    quotes the answer): it keeps the text's own punctuation, bounds no words, closes the quote marks and
    parentheses it cut open and may run over its limit by them and its "…".  Here the edge punctuation goes (the
    page adds its own marks), the words are bounded too, ``max_chars`` is never exceeded, and a mark cut open is
    left as it is."""
    words = text.strip(_EDGE_PUNCTUATION).split()
    kept = " ".join(words[:max_words])
    if len(words) <= max_words and len(kept) <= max_chars:
        return kept
    room = max_chars - len(ELLIPSIS)
    if len(kept) > room:
        cut_inside_a_word = kept[room] != " "
        kept = kept[:room]
        head, space, _ = kept.rpartition(" ")
        if cut_inside_a_word and space and len(head) >= len(kept) // 2:
            kept = head
    return kept.rstrip(_EDGE_PUNCTUATION) + ELLIPSIS


def factor_words(factor: Factor) -> set[str]:
    """The words a factor is spoken of with: its name, description, rubric and cue phrases."""
    rubric = factor.rubric
    texts = [factor.name, factor.description, rubric.low, rubric.mid, rubric.high, *(c.phrase for c in factor.cues)]
    return set().union(*(content_words(text) for text in texts))


def clause_about(answer: str, factor: Factor) -> str:
    """The clause of ``answer`` that shares the most words (and word stems) with the factor; the first clause
    when none shares any."""
    vocabulary = factor_words(factor)
    stems = {word[:5] for word in vocabulary}

    def overlap(clause: str) -> tuple[int, int]:
        words = content_words(clause)
        return len(words & vocabulary), len({word[:5] for word in words} & stems)

    parts = clauses(answer)
    return max(parts, key=overlap)  # max keeps the first of equals


_PHRASE_BREAK: Final = re.compile(r"[,;:]\s+|\s+(?:and|but|so|because)\s+", re.I)
NARROW_FROM_WORDS: Final = 7  # a quote this long is narrowed to its phrase most about the factor


def narrowed(text: str, factor: Factor) -> str:
    """``text`` narrowed to its phrase (between commas and joining words) that shares the most words with the
    factor, when one shares any and ``text`` is long enough to need it; ``text`` otherwise."""
    if len(text.split()) < NARROW_FROM_WORDS:
        return text
    vocabulary = factor_words(factor)
    phrases = [phrase for phrase in _PHRASE_BREAK.split(text) if len(phrase.split()) >= 3]
    scored = [(len(content_words(phrase) & vocabulary), -index, phrase) for index, phrase in enumerate(phrases)]
    if not scored or max(scored)[0] == 0:
        return text
    return max(scored)[2]


def quote_for(answer: str, proposed: str, factor: Factor) -> str:
    """The few words of ``answer`` a reading of ``factor`` rests on: the extractor's ``proposed`` quote when the
    answer holds it, otherwise the answer's clause most about the factor; narrowed to its phrase most about the
    factor and shortened either way (at most ``MAX_QUOTE_WORDS`` words and ``MAX_QUOTE_CHARS`` characters), never
    empty for an answer with words in it."""
    found = verbatim(proposed, answer) if proposed.strip() else None
    return shorten(narrowed(found if found is not None else clause_about(answer, factor), factor))
