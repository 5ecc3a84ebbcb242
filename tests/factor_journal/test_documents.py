"""Server-owned documents read back from Firestore (pure: no emulator needed)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from factor_journal.documents import SessionDocument, TokenUsage


def test_a_session_keeps_what_still_reads_and_names_what_does_not():
    started = datetime(2026, 11, 2, 9, 30, tzinfo=UTC)
    stored = {
        "started_at": started,
        "last_topic": "Data quality",
        "last_active": "yesterday",
        "analysed_turns": "many",
        "usage": {"prompt_tokens": "lots", "response_tokens": 12},
    }
    session, dropped = SessionDocument.salvaged("s1", stored)
    assert dropped == ("analysed_turns", "last_active", "usage")
    assert (session.session_id, session.started_at, session.last_topic) == ("s1", started, "Data quality")
    assert (session.last_active, session.analysed_turns, session.usage) == (None, 0, TokenUsage())
    with pytest.raises(ValidationError):
        SessionDocument.of("s1", stored)  # the strict read still refuses it


def test_a_sound_session_is_read_as_stored_and_its_id_is_the_documents():
    session, dropped = SessionDocument.salvaged("s2", {"session_id": "forged", "analysed_turns": 3})
    assert dropped == () and session.session_id == "s2" and session.analysed_turns == 3
    assert SessionDocument.salvaged("s3", None) == (SessionDocument(session_id="s3"), ())
