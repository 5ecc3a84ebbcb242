"""The offline rules' text handling (pure)."""

from __future__ import annotations

from factor_journal.extraction.rules_text import QUOTE_CHARS, _shorten


def test_a_short_text_is_kept_whole_on_one_line():
    assert _shorten("We re-key\n  every order.") == "We re-key every order."
    assert _shorten("x" * QUOTE_CHARS) == "x" * QUOTE_CHARS  # exactly the bound: not cut


def test_a_long_text_is_cut_between_words_and_marked():
    text = "Finance reconciles the monthly numbers by hand " * 6
    short = _shorten(text)
    assert short.endswith("…") and len(short) <= QUOTE_CHARS
    kept = short.removesuffix("…").split()
    assert kept == text.split()[: len(kept)]  # whole words of the text, none cut in half
