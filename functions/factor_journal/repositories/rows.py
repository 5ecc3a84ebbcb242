"""Roll-up rows and the figures that count them, written together.

Every writer of a row goes through ``put_row``: the row document (``organisations/{org}/people/{uid}``) and
the increments that move the organisation's figures by what changed (``figures.delta``), on the person's
figures shard, in the caller's transaction or batch.  The old row is what the caller read in that transaction
(``read_row``): the figures then never disagree with the rows, whatever runs at the same time.  A stored row
that no longer reads counts as none and is rewritten; what it held is set aside (``factor_journal.setaside``) by
the transaction that found it, and its share of the figures is set right by the nightly check (logged).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from google.cloud import firestore
from pydantic import ValidationError

from factor_journal.figures import Counters, delta
from factor_journal.repositories.paths import Paths
from factor_journal.rollup import PersonRow, shard_of, validated_row
from factor_journal.setaside import DocumentKind, SetAside, set_aside

log = logging.getLogger(__name__)

Writer = firestore.Transaction | firestore.WriteBatch


def row_from(
    snapshot: firestore.DocumentSnapshot, org_id: str, found: list[SetAside] | None = None
) -> PersonRow | None:
    """The stored row (None when there is none, or when it no longer reads: logged, and its record appended to
    ``found`` for the caller to set aside)."""
    if not snapshot.exists:
        return None
    try:
        return validated_row(snapshot.to_dict())
    except ValidationError as damage:
        log.warning(
            "roll-up row of %s in %s is damaged (%s): rewritten; the nightly check sets its figures right",
            snapshot.id,
            org_id,
            damage.errors()[0]["loc"],
        )
        if found is not None:
            stored = snapshot.to_dict()
            now = datetime.now(UTC)
            found.append(set_aside(snapshot.id, DocumentKind.rollup_row, snapshot.reference.path, stored, damage, now))
        return None


def read_row(
    paths: Paths,
    org_id: str,
    user_id: str,
    transaction: firestore.Transaction | None = None,
    found: list[SetAside] | None = None,
) -> PersonRow | None:
    """The person's stored row in ``org_id`` (one read, in ``transaction`` when given); a damaged one reads as
    None and is appended to ``found``."""
    return row_from(paths.person_row(org_id, user_id).get(transaction=transaction), org_id, found)


def move_figures(writer: Writer, paths: Paths, org_id: str, user_id: str, change: Counters) -> None:
    """Add ``change`` to the figures shard of ``user_id`` (server-side increments: a blind write)."""
    move_shard(writer, paths, org_id, shard_of(user_id), change)


def move_shard(writer: Writer, paths: Paths, org_id: str, shard: str, change: Counters) -> None:
    """Add ``change`` to the figures shard ``shard``."""
    if change:
        fields = {key: firestore.Increment(value) for key, value in change.items()}
        writer.set(paths.figures_shard(org_id, shard), {"c": fields}, merge=True)


def put_row(
    writer: Writer, paths: Paths, org_id: str, user_id: str, old: PersonRow | None, new: PersonRow | None
) -> None:
    """Replace the row ``old`` (as read in the same transaction; None: none) by ``new`` (None: delete it), and
    move the figures by the difference."""
    reference = paths.person_row(org_id, user_id)
    if new is None:
        writer.delete(reference)
    else:
        writer.set(reference, new.to_document())
    move_figures(writer, paths, org_id, user_id, delta(old, new))


def update_row(writer: Writer, paths: Paths, org_id: str, old: PersonRow, **fields: Any) -> PersonRow:
    """Change fields of a stored row that its aged fields and keys do not depend on (attention, listed)."""
    new = old.model_copy(update=fields)
    put_row(writer, paths, org_id, old.user_id, old, new)
    return new
