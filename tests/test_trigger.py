"""End to end through the Firebase Emulator Suite: a client writes turns, the deployed
trigger (running in the Functions emulator) updates factors, journal, summary and session."""

from __future__ import annotations

import time
import uuid

import pytest

from factor_journal.models import UserProfile
from factor_journal.store import FactorJournalStore
from waiting import wait_for_analysis

pytestmark = pytest.mark.functions


@pytest.fixture
def live_store(trigger_client, catalog) -> FactorJournalStore:
    return FactorJournalStore(trigger_client, catalog)


def test_written_turns_are_analysed_by_the_deployed_trigger(live_store):
    user = f"e2e-{uuid.uuid4().hex[:8]}"
    live_store.register_user(UserProfile(user_id=user, display_name="E2E", org_id="org-e2e"))
    session = live_store.start_session(user)
    live_store.add_turn(
        user, session, "assistant", "Where does your data live today, and how many separate systems hold it?"
    )
    first = live_store.add_turn(user, session, "user", "Our data is all over the place, 5 different systems")
    outcome = wait_for_analysis(live_store, user, session, first)
    assert outcome["status"] == "processed", outcome
    assert outcome["extractor"] == "semantic"  # the default extractor (FJ_EXTRACTOR unset)

    live_store.add_turn(user, session, "assistant", "Would you say you have a data catalog?")
    second = live_store.add_turn(user, session, "user", "No, nothing like that yet")
    outcome = wait_for_analysis(live_store, user, session, second)
    assert outcome["status"] == "processed", outcome

    summary = live_store.summary(user)
    assert summary.factors["data_governance"].current_value <= 35
    assert summary.factors["data_infrastructure"].is_assessed  # "5 different systems": where the data lives
    assert summary.last_conversation.factor_id == "data_governance"
    [entry] = live_store.history(user, "data_governance").entries
    assert entry.turn_id == second and "data catalog" in entry.conversation_excerpt
    session_doc = live_store.session_data(user, session)
    assert session_doc["last_topic_factor_id"] == "data_governance" and session_doc["last_turn_id"] == second


def test_bad_turn_written_by_a_client_is_marked_invalid(live_store):
    user = f"e2e-{uuid.uuid4().hex[:8]}"
    live_store.register_user(UserProfile(user_id=user))
    session = live_store.start_session(user)
    ref = live_store.turns(user, session).document()
    # awaiting_analysis, as the rules require of every client's turn: the sweep finds it if its delivery is lost
    ref.set({"role": "user", "text": {"rich": "content"}, "created_at": time.time(), "awaiting_analysis": True})
    outcome = wait_for_analysis(live_store, user, session, ref.id)
    assert outcome["status"] == "invalid" and "text is a dict" in outcome["error"]
    assert live_store.summary(user).overall.total_factors_assessed == 0


def test_an_answer_set_aside_wrongly_is_read_again_by_the_deployed_trigger_once_its_person_lifts_the_screen(
    live_store,
):
    from factor_journal.store import TurnRef

    user = f"e2e-{uuid.uuid4().hex[:8]}"
    live_store.register_user(UserProfile(user_id=user))
    session = live_store.start_session(user)
    live_store.add_turn(user, session, "assistant", "How do you keep track of your figures?")
    turn = live_store.add_turn(user, session, "user", "My sister keeps the books for the firm in a spreadsheet.")
    outcome = wait_for_analysis(live_store, user, session, turn)
    assert outcome["status"] == "no_update" and outcome["screened"]["kind"] == "other_organisation", outcome

    live_store.ledger.lift_screen(TurnRef(user, session, turn))  # "It was about us"
    outcome = wait_for_analysis(live_store, user, session, turn)  # read again by on_screen_lifted
    assert outcome["status"] in ("processed", "no_update") and outcome["screened"] is None, outcome
    assert outcome["lifted"] == "other_organisation" and outcome["extractor"] == "semantic"
    assert live_store.turn_data(user, session, turn)["screen_lifted"]["kind"] == "other_organisation"
