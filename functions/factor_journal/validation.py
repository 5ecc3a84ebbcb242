"""One check of a factor reading against the catalog, for people's input and extractor output alike.

``checked_reading`` raises a typed error from ``factor_journal.errors`` naming the
problem; the store lets it propagate (nothing is written), screening turns it
into a readable reason for dropping that one reading.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from factor_journal.catalog import Catalog
from factor_journal.conversation import text_length
from factor_journal.errors import (
    DerivedFactorError,
    InvalidConfidenceError,
    InvalidInputError,
    MissingRationaleError,
    RationaleTooLongError,
    UnknownFactorError,
    ValueChangedError,
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


def still_as_seen(factor_id: str, current: float | None, seen: float | None) -> None:
    """Nothing when no value was ``seen`` (a decision not tied to a value shown) or the factor's ``current`` value
    is still the one seen, to the last digit; ``ValueChangedError`` when it changed since it was shown."""
    if seen is not None and current != seen:
        raise ValueChangedError(factor_id, seen, current)


def confidence_in_range(confidence: Any) -> float:
    if isinstance(confidence, bool) or not isinstance(confidence, int | float) or not 0 <= confidence <= 1:
        raise InvalidConfidenceError(confidence)
    return float(confidence)


MAX_RATIONALE_CHARS = 2000
"""The most characters a rationale may have (the reason a person gives with a correction, a retraction or a
conflict resolution, and an extractor's reason for a reading), counted as ``MAX_TURN_TEXT_CHARS`` is: UTF-16
code units (``conversation.text_length``), the unit of a browser's ``max_chars``.

A reason is a sentence or two: 2,000 characters is about 300 words, half of the longest answer a turn may be, so
no one giving a reason in good faith comes near it.  Unbounded, a reason was stored as given, and one of about a
million characters made the write exceed Firestore's 1 MiB document limit and fail as a raw error instead of a
sentence for the person.  The extractors' reasons are one sentence (the rules' at most 600 characters, the
semantic extractor's under 400); a model's reading with a longer one is dropped by screening like any other
reading the checks refuse.  The app's inputs that take a reason carry the same number as ``max_chars``."""


def rationale_given(rationale: Any, what: str) -> str:
    """The rationale for ``what`` without its edge whitespace; ``MissingRationaleError`` when there is none,
    ``RationaleTooLongError`` when it is over ``MAX_RATIONALE_CHARS`` characters."""
    if not isinstance(rationale, str) or not rationale.strip():
        raise MissingRationaleError(what)
    reason = rationale.strip()
    if text_length(reason) > MAX_RATIONALE_CHARS:
        raise RationaleTooLongError(what, text_length(reason), MAX_RATIONALE_CHARS)
    return reason


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
