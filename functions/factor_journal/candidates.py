"""Which factors a turn may speak to: the short list sent to the LLM instead of the whole catalog.

First the factors the embedded semantic detector finds likely in the turn and the
question it answers (``extraction.semantic.rank_factors``: meaning, not cue words;
skipped with a warning if the bundled model cannot load), then lexical matches:
factors whose cue phrases or name words appear in the user's turn or in the
assistant question, then the session's last topic, then the dependencies of the
best matches.  The prompt stays a few factors long whatever the size of the
catalog or the length of the session.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from factor_journal.catalog import Catalog, Factor
from factor_journal.extraction.base import CandidateFactor
from factor_journal.graph import FactorGraph
from factor_journal.models import FactorState
from factor_journal.vocabulary import content_words, word_score

log = logging.getLogger(__name__)

MAX_CANDIDATES = 8
SEMANTIC_CANDIDATES = 4  # at least the semantic extractor's MAX_FACTORS


def describe(factor: Factor) -> str:
    """The factor's description with its boundaries: what belongs to which neighbour instead."""
    if not factor.boundaries:
        return factor.description
    elsewhere = "; ".join(f"{text} is {neighbour}" for neighbour, text in factor.boundaries.items())
    return f"{factor.description} Not this factor: {elsewhere}."


def candidate_view(catalog: Catalog, factor_id: str, state: FactorState | None) -> CandidateFactor:
    factor = catalog.factor(factor_id)
    return CandidateFactor(
        factor_id=factor.id,
        name=factor.name,
        category=factor.category,
        description=describe(factor),
        rubric_low=factor.rubric.low,
        rubric_mid=factor.rubric.mid,
        rubric_high=factor.rubric.high,
        scale_min=factor.scale.min,
        scale_max=factor.scale.max,
        current_value=state.current_value if state else None,
        current_confidence=state.current_confidence if state else 0.0,
        inference_status=str(state.inference_status) if state else "unassessed",
    )


def select_candidates(
    catalog: Catalog,
    graph: FactorGraph,
    text: str,
    previous_question: str,
    states: Mapping[str, FactorState],
    last_topic: str | None = None,
    limit: int = MAX_CANDIDATES,
    *,
    lifted: bool = False,
) -> list[CandidateFactor]:
    """At most ``limit`` candidate factors for a turn, best first, with their current state; ``lifted``: the person
    lifted the screen that had set the turn aside (the semantic ranking reads it all the same)."""
    context = f"{previous_question}\n{text}".lower()
    words = content_words(context)
    scored = sorted(
        (
            (score, factor.id)
            for factor in catalog.assessable_factors
            if (score := word_score(factor, context, words)) > 0
        ),
        key=lambda item: (-item[0], item[1]),
    )
    chosen: list[str] = _semantic(catalog, text, previous_question, lifted)
    chosen += [fid for _, fid in scored if fid not in chosen][: max(limit - len(chosen), 0)]
    if last_topic and catalog.has_factor(last_topic) and last_topic not in chosen:
        chosen.append(last_topic)
    for fid in list(chosen[:3]):
        chosen.extend(dep for dep in graph.depends_on(fid) if dep not in chosen)
    chosen = [fid for fid in chosen if not catalog.factor(fid).is_composite][:limit]
    return [candidate_view(catalog, fid, states.get(fid)) for fid in chosen]


def _semantic(catalog: Catalog, text: str, previous_question: str, lifted: bool = False) -> list[str]:
    """The semantic detector's likeliest factors for the turn; [] when the embedded model is unavailable."""
    try:
        from factor_journal.extraction.semantic import rank_factors

        return rank_factors(catalog, previous_question, text, SEMANTIC_CANDIDATES, lifted=lifted)
    except Exception as error:  # candidates must never fail a turn: fall back to lexical matching
        log.warning("semantic candidate ranking unavailable (%s: %s); lexical only", type(error).__name__, error)
        return []
