"""Damaged documents are set aside, never deleted, and never jam a person (pure: decisions, no Firestore).

A document the server keeps that no longer reads as its model (a bad write, a hand edit, a test's seed, an old
shape: missing fields, wrong types) must not make every later turn of its person fail.  What happens to each:

* **a journal entry** (the record itself, which nothing can rebuild) stays where it is, **marked** with
  ``set_aside`` (when and why), and the factor is folded without it: the change that finds it (a refold of its
  factor, a composite derived again along its timeline) writes the mark in its own transaction, and every later
  read passes over a marked entry without listing it again (``read_journal``);
* **a factor document, the summary, a session** (derived documents) are rebuilt from what they derive from and
  rewritten, as before (``planner``, ``folding.refold_damaged``, ``SessionDocument.salvaged``); what they held is
  kept in the record, so the rewrite loses nothing;
* **a turn** that does not read as a turn is settled ``invalid`` (never analysed, no longer context) and marked; a
  turn whose analysis record does not read needs attention (``documents.ExtractionOutcome.read``);
* **a roll-up row** (``organisations/{org}/people/{uid}``) counts as none where it is read (a change's
  transaction, the team page, the nightly job) and is rewritten from the person's profile and summary; the nightly
  check sets the figures right for what it held.

Each is **listed where the team looks**: a record ``users/{uid}/set_aside/{id}`` (``SetAside``: the path, the kind,
the validation error, when it was found and a copy of what it held), its path on the person's profile
(``set_aside``, beside ``attention_turns``), written in the transaction that found it, and
``python -m factor_journal set-aside`` lists them all.  A record's id follows the path and what it held, so finding
the same damage again rewrites the same record.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import Field, ValidationError

from factor_journal.models import DocumentModel, JournalEntry

MARK = "set_aside"  # the field a journal entry or turn set aside in place carries: {"at": …, "error": …}
SHOWN_PROBLEMS = 4  # the problems a record's error names one by one (the count says how many in all)


class DocumentKind(StrEnum):
    journal_entry = "journal_entry"
    factor = "factor"
    summary = "summary"
    session = "session"
    turn = "turn"
    rollup_row = "rollup_row"


class SetAside(DocumentModel):
    """``users/{uid}/set_aside/{record_id}``: a damaged document set aside, and what it held."""

    user_id: str
    kind: DocumentKind
    path: str  # the document's path
    error: str  # what does not read (``describe``)
    found_at: datetime  # when it was (last) found
    stored: dict[str, Any] = Field(default_factory=dict)  # a copy of what it held when it was found

    @property
    def record_id(self) -> str:
        """The record's id: the same for the same damage at the same place (so finding it again writes the same
        record), another for other damage there later."""
        held = json.dumps(self.stored, sort_keys=True, default=str)
        return hashlib.sha256(f"{self.path}\n{held}".encode()).hexdigest()[:24]

    @property
    def marked_in_place(self) -> bool:
        """A journal entry or a turn stays where it is and carries the mark; the others are rewritten."""
        return self.kind in (DocumentKind.journal_entry, DocumentKind.turn)

    def mark(self) -> dict[str, Any]:
        """The ``set_aside`` mark a document set aside in place carries."""
        return {"at": self.found_at, "error": self.error}


def describe(error: ValidationError) -> str:
    """What does not read, for a person: ``15 invalid field(s) of JournalEntry: entry_id (Field required); …``."""
    problems = [
        f"{'.'.join(str(part) for part in problem['loc']) or 'the document'} ({problem['msg']})"
        for problem in error.errors()
    ]
    more = f"; and {len(problems) - SHOWN_PROBLEMS} more" if len(problems) > SHOWN_PROBLEMS else ""
    return f"{error.error_count()} invalid field(s) of {error.title}: {'; '.join(problems[:SHOWN_PROBLEMS])}{more}"


def set_aside(
    user_id: str,
    kind: DocumentKind,
    path: str,
    stored: Any,
    error: ValidationError | str,
    found_at: datetime,
) -> SetAside:
    """The record of a damaged document found at ``found_at``: ``stored`` is what it held
    (a value that is not even a map is kept as ``{"value": …}``), its mark taken off the copy."""
    if stored is not None and not isinstance(stored, Mapping):
        stored = {"value": stored}
    held = {str(key): value for key, value in (stored or {}).items() if key != MARK}
    reason = describe(error) if isinstance(error, ValidationError) else error
    return SetAside(user_id=user_id, kind=kind, path=path, error=reason, found_at=found_at, stored=held)


@dataclass(frozen=True)
class JournalRead:
    """A factor's journal as read: the entries that read, and those found damaged now (to be set aside)."""

    entries: list[JournalEntry]
    found: list[SetAside] = dataclass_field(default_factory=list)
    passed_over: int = 0  # damaged entries already set aside (marked): left out, not listed again


def read_journal(
    user_id: str, documents: Iterable[tuple[str, Mapping[str, Any] | None]], found_at: datetime
) -> JournalRead:
    """A journal read from its documents (``(path, data)``): every entry that reads (a mended entry still carrying
    its mark reads again), a damaged entry not yet marked found for setting aside, a marked one passed over."""
    entries: list[JournalEntry] = []
    found: list[SetAside] = []
    passed_over = 0
    for path, data in documents:
        try:
            entries.append(JournalEntry.model_validate(data))
        except ValidationError as error:
            if isinstance(data, Mapping) and MARK in data:
                passed_over += 1
            else:
                found.append(set_aside(user_id, DocumentKind.journal_entry, path, data, error, found_at))
    return JournalRead(entries, found, passed_over)


def distinct(found: Iterable[SetAside]) -> list[SetAside]:
    """Each damaged document once (the same one may be found by two reads of one change), in the order found."""
    return list({record.path: record for record in found}.values())


def listed_after(listed: Iterable[str], found: Iterable[SetAside]) -> list[str]:
    """The person's list of documents set aside once ``found`` is listed (each place once, oldest first)."""
    return list(dict.fromkeys([*listed, *(record.path for record in found)]))
