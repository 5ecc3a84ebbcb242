"""Answering "why?" questions from the journal ("Ask why"; docs/ask.md), in three stages, a module each:

1. ``intent``: what kind of question it is, which factors and archetypes it names, whether it needs history and
   dependencies, and from when (pure); or, with ``FJ_EXTRACTOR=gemini``, ``routing``: a model reads that, against
   the catalog and the person's journal index (its output checked; the embedded rules when its call fails).
2. ``context``: the evidence. When the question names no factor, which factors it is about (the whole assessment,
   a time's changes, or by meaning: the catalog ranked against the question and the person's own journal searched
   by similarity); then their state, latest change, history and dependencies within a token budget, and the dated
   citations.
3. ``composing``: the answer laid out from the context (by Gemini in production, a deterministic composer
   offline), and ``answer_question``, which runs the three.

The names callers use are re-exported here.
"""

from factor_journal.questions.composing import (
    Answer,
    AnswerComposer,
    AnswerLine,
    OfflineComposer,
    Phrase,
    Writer,
    answer_question,
    plain_text,
)
from factor_journal.questions.context import Citation, FactorContext, QuestionContext, Standing
from factor_journal.questions.intent import QuestionIntent, analyse_intent
from factor_journal.questions.routing import IntentRouter

__all__ = [
    "Answer",
    "AnswerComposer",
    "AnswerLine",
    "Citation",
    "FactorContext",
    "IntentRouter",
    "OfflineComposer",
    "Phrase",
    "QuestionContext",
    "QuestionIntent",
    "Standing",
    "Writer",
    "analyse_intent",
    "answer_question",
    "plain_text",
]
