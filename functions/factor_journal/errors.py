"""Typed errors of the domain.  Each is raised before anything is written."""

from __future__ import annotations

from typing import Literal


class FactorJournalError(Exception):
    """Base of every error the domain raises on purpose; the message is meant for a person."""


class InvalidInputError(FactorJournalError, ValueError):
    """An argument is malformed (the message names the field and what was wrong)."""


class UnknownFactorError(InvalidInputError):
    def __init__(self, factor_id: str) -> None:
        super().__init__(f"unknown factor {factor_id!r}: it is not in the factor catalog")
        self.factor_id = factor_id


class ValueOutOfScaleError(InvalidInputError):
    def __init__(self, factor_id: str, value: float, minimum: float, maximum: float) -> None:
        super().__init__(f"value {value} for {factor_id!r} is off the scale {minimum:g}-{maximum:g}")
        self.factor_id, self.value = factor_id, value


class InvalidConfidenceError(InvalidInputError):
    def __init__(self, confidence: float) -> None:
        super().__init__(f"confidence {confidence} is outside 0-1 (it must lie between 0 and 1)")
        self.confidence = confidence


class MissingRationaleError(InvalidInputError):
    def __init__(self, what: str = "this change") -> None:
        super().__init__(f"a rationale is required for {what}")


class RationaleTooLongError(InvalidInputError):
    def __init__(self, what: str, length: int, limit: int) -> None:
        super().__init__(
            f"the reason for {what} is {length:,} characters, over the {limit:,}-character limit: "
            "please say it more briefly"
        )
        self.length, self.limit = length, limit


class DerivedFactorError(InvalidInputError):
    def __init__(self, factor_id: str) -> None:
        super().__init__(f"{factor_id!r} is a derived factor, computed from its components; change those instead")
        self.factor_id = factor_id


class UnknownOrganisationError(FactorJournalError, LookupError):
    """Raised, before anything is written, by a change that needs the organisation (its managers list) when no
    organisation of that id exists: a mistyped id never creates one."""

    def __init__(self, org_id: str) -> None:
        super().__init__(f"unknown organisation {org_id!r}: no such organisation exists")
        self.org_id = org_id


class UnknownUserError(FactorJournalError, LookupError):
    def __init__(self, user_id: str) -> None:
        super().__init__(f"unknown user {user_id!r}: no such user is registered")
        self.user_id = user_id


NotAssessedAction = Literal["confirm", "correct", "retract"]
_PLAIN_ACTION: dict[str, str] = {"confirm": "confirm", "correct": "correct", "retract": "withdraw"}


class NotAssessedError(FactorJournalError, LookupError):
    """A decision about a factor's value (``action``) when the factor has no value; the message says which."""

    def __init__(self, factor_id: str, action: NotAssessedAction) -> None:
        super().__init__(f"cannot {_PLAIN_ACTION[action]} the value of {factor_id!r}: it has no value yet")
        self.factor_id, self.action = factor_id, action


class NoConflictError(FactorJournalError, LookupError):
    def __init__(self, factor_id: str) -> None:
        super().__init__(f"{factor_id!r} has no open conflict to resolve")
        self.factor_id = factor_id


class ValueChangedError(FactorJournalError):
    """A person's decision about the value they were shown (``seen``) when the factor's value is no longer it
    (``now``: it changed elsewhere since, or was withdrawn); nothing is written, and the message says what it is
    now, so they can decide again about the value they then see."""

    def __init__(self, factor_id: str, seen: float, now: float | None) -> None:
        what = "has no value now" if now is None else f"is {now:g} now"
        super().__init__(
            f"the value of {factor_id!r} changed since it was shown as {seen:g}: it {what}, so nothing was saved; "
            "look at it again before deciding"
        )
        self.factor_id, self.seen, self.now = factor_id, seen, now


class AnswerNotFoundError(FactorJournalError, LookupError):
    """A decision about an answer (what it was about, or to read it again) when the answer no longer exists."""

    def __init__(self, turn_id: str) -> None:
        super().__init__(f"the answer {turn_id!r} no longer exists, so nothing was saved")
        self.turn_id = turn_id


class NotLiftableError(FactorJournalError):
    """A person asked to read an answer again without the screen that set it aside when it was not set aside for a
    reason they may lift (``documents.LIFTABLE``), or is already being read again; the message says which."""

    def __init__(self, turn_id: str, why: str) -> None:
        super().__init__(f"the answer {turn_id!r} cannot be read again: {why}")
        self.turn_id, self.why = turn_id, why
