"""One check of a factor reading against the catalog, for people's input and extractor output alike.

``checked_reading`` raises a typed error from ``factor_journal.errors`` naming the
problem; the store lets it propagate (nothing is written), screening turns it
into a readable reason for dropping that one reading.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from factor_journal.catalog import Catalog
from factor_journal.errors import (
    DerivedFactorError,
    InvalidConfidenceError,
    InvalidInputError,
    MissingRationaleError,
    UnknownFactorError,
    ValueOutOfScaleError,
)


def assessable(catalog: Catalog, factor_id: Any) -> str:
    """The factor id when it names a catalog factor people and extractors may set."""
    if not isinstance(factor_id, str) or not catalog.has_factor(factor_id):
        raise UnknownFactorError(str(factor_id)[:64])
    if catalog.factor(factor_id).is_composite:
        raise DerivedFactorError(factor_id)
    return factor_id


def value_on_scale(catalog: Catalog, factor_id: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        raise InvalidInputError(f"value for {factor_id!r} must be a number, got {value!r}")
    scale = catalog.factor(factor_id).scale
    if not scale.contains(value):
        raise ValueOutOfScaleError(factor_id, value, scale.min, scale.max)
    return float(value)


def confidence_in_range(confidence: Any) -> float:
    if isinstance(confidence, bool) or not isinstance(confidence, int | float) or not 0 <= confidence <= 1:
        raise InvalidConfidenceError(confidence)
    return float(confidence)


def rationale_given(rationale: Any, what: str) -> str:
    if not isinstance(rationale, str) or not rationale.strip():
        raise MissingRationaleError(what)
    return rationale.strip()


def checked_reading(
    catalog: Catalog, factor_id: Any, value: Any, confidence: Any, rationale: Any, inferred_from: Iterable[Any] = ()
) -> tuple[str, float, float, str, list[str]]:
    """(factor id, value, confidence, rationale, inferred-from ids) of a valid reading, or a typed error.

    Inferred-from ids must name catalog factors; the factor itself is dropped from them.
    """
    fid = assessable(catalog, factor_id)
    checked_value = value_on_scale(catalog, fid, value)
    checked_confidence = confidence_in_range(confidence)
    reason = rationale_given(rationale, f"the update of {fid!r}")
    sources = []
    for source in inferred_from:
        if not isinstance(source, str) or not catalog.has_factor(source):
            raise UnknownFactorError(str(source)[:64])
        if source != fid:
            sources.append(source)
    return fid, checked_value, checked_confidence, reason, sorted(set(sources))
