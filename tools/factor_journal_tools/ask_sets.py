"""The own-words Ask sets (``tests/fixtures/ask_own_words*.json``; docs/ask.md) and how a set's journal is seeded.

Each set is one company's journal (answers, each with the question asked and the factor a careful reader gives it)
and questions that name no factor: ``questions`` (each with the factor its answer should cite), and in some sets
``standing`` (about the whole assessment) and ``off_topic`` (nothing the journal can answer).  The Ask tests
(``tests/factor_journal/test_ask_own_words.py``) and the seat's intent requests (``seat_ask``) seed them the same
way (``seed``).
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from factor_journal.conversation import Turn, format_excerpt
from factor_journal.models import InferredUpdate, UserProfile
from factor_journal.store import FactorJournalStore, TurnContext
from factor_journal_tools.corpus import REPO

FIXTURES = REPO / "tests" / "fixtures"
ASK_SETS = {
    "wholesale": "ask_own_words.json",  # issue 33's set, written before the retrieval was tuned
    "clinics": "ask_own_words_clinics.json",  # the development set of the journal-and-catalog weighing
    "coaches": "ask_own_words_coaches.json",
    "housing": "ask_own_words_housing.json",
    "bakery": "ask_own_words_bakery.json",
    "lawfirm": "ask_own_words_lawfirm.json",
}
"""Each set by name, its fixture; docs/ask.md says how each was written and what it measured."""
VALUES = {"low": 25.0, "mid": 55.0}


def load_set(name: str) -> dict[str, Any]:
    """The set ``name`` (a key of ``ASK_SETS``) as its fixture holds it."""
    return json.loads((FIXTURES / ASK_SETS[name]).read_text(encoding="utf-8"))


def semantic_rationale(said: str, asked: str) -> str:
    """A rationale in the semantic extractor's form (``extraction/semantic.py``)."""
    said = said if len(said) <= 160 else said[:159].rstrip() + "…"
    return f'User said "{said}" (answering "{asked[:100]}"): reads as low (P=0.80).'


def seed(store: FactorJournalStore, items: list[dict[str, Any]], user: str | None = None) -> tuple[str, dict[str, str]]:
    """A person whose conversation holds ``items`` (asked, said, expected): each answer is a turn, settled as the
    pipeline settles it with an extractor's reading of it as the expected factor (its excerpt, session, turn and
    time; the turn's outcome and the answer's vector); returns (user id, entry id by what was said)."""
    user = user or f"u-{uuid.uuid4().hex[:12]}"
    store.register_user(UserProfile(user_id=user))
    session = store.start_session(user)
    at = datetime.now(UTC) - timedelta(days=20)
    entries = {}
    for index, item in enumerate(items):
        asked_at, said_at = at + timedelta(hours=index, minutes=1), at + timedelta(hours=index, minutes=2)
        store.add_turn(user, session, "assistant", item["asked"], created_at=asked_at)
        turn = store.add_turn(user, session, "user", item["said"], created_at=said_at)
        excerpt = format_excerpt(
            [
                Turn(turn_id="a", role="assistant", text=item["asked"], created_at=asked_at),
                Turn(turn_id=turn, role="user", text=item["said"], created_at=said_at),
            ]
        )
        update = InferredUpdate(
            factor_id=item["expected"],
            value=VALUES["low"],
            confidence=0.7,
            rationale=semantic_rationale(item["said"], item["asked"]),
            conversation_excerpt=excerpt,
            session_id=session,
            turn_id=turn,
            observed_at=said_at,
        )
        settled = TurnContext(session_id=session, turn_id=turn, observed_at=said_at, answer=item["said"])
        change = store.record_inferences(user, [update], turn=settled, idempotency_key=f"{session}/{turn}", weigh=True)
        [entry] = [e for e in change.entries if e.factor_id == item["expected"]]  # (a composite may be derived too)
        entries[item["said"]] = entry.entry_id
    return user, entries
