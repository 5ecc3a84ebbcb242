"""Cutting a text short for the page: at a word boundary, marked, and every quote it opened closed (pure)."""

from __future__ import annotations

import pytest

from factor_journal.vocabulary import clip

RATIONALE = (
    'User said "We have four separate systems" (answering "How much do you trust the numbers in your monthly '
    'reports today?"): reads as low (P=0.81).'
)
PUNCTUATION = '"():?.'


def test_a_short_text_is_kept_whole_with_its_spacing_made_plain():
    assert clip("  We have\nfour   systems ", 40) == "We have four systems"


def test_a_quote_cut_short_ends_on_a_whole_word_and_is_closed():
    cut = clip(RATIONALE, 90)
    assert cut == 'User said "We have four separate systems" (answering "How much do you trust the numbers in…")'
    assert len(cut) <= 90 + 3


@pytest.mark.parametrize("limit", range(12, len(RATIONALE)))
def test_whatever_the_limit_quotes_and_parentheses_are_balanced_and_words_whole(limit):
    cut = clip(RATIONALE, limit)
    assert cut.count('"') % 2 == 0 and cut.count("(") == cut.count(")")
    kept = cut.split("…")[0]
    assert RATIONALE.startswith(kept)
    assert kept.split()[-1].strip(PUNCTUATION) in {word.strip(PUNCTUATION) for word in RATIONALE.split()}


def test_one_long_word_is_cut_where_it_must_be():
    assert clip("x" * 50, 10) == "x" * 10 + "…"


def test_a_line_keeps_its_own_punctuation_and_runs_over_its_limit_only_by_the_marks_it_adds():
    line = 'User said "We have four separate systems" (roughly).'
    assert clip(line, 60) == line  # whole: its quote marks, parentheses and full stop stay (unlike a quote's)
    assert clip(line, 18) == 'User said "We have…"'  # 18 of its own characters, then the "…" and the closer
