"""The conversation says back what each answer told us, and the person confirms or corrects it there
(AppTest on the emulator; the answers are analysed by the real pipeline, only the model is scripted)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from test_app import open_app, texts

from doubles import ReadingsByText, reading
from factor_journal.models import EntryKind, InferenceStatus, Source
from factor_journal.organisation import OrganisationDirectory
from factor_journal.pipeline import TurnProcessor
from factor_journal.sayback import NOTHING_UNDERSTOOD

BI_TEAM = "We have two data scientists in the BI team, no machine learning engineers, and our data is a mess."
SMALL_TALK = "What exactly do you mean by that?"
READINGS = {
    BI_TEAM: [
        reading("ml_expertise", 72, 0.6, quote="two data scientists in the BI team"),  # the misreading to fix
        reading("data_quality", 18, 0.7, quote="our data is a mess"),
    ],
    SMALL_TALK: [],
}


def answered(store, user: str, *answers: str, extractor=None) -> tuple[str, list[str]]:
    """A session where the assistant asked and the person answered each of ``answers``, each analysed by the
    pipeline (the scripted model reads ``READINGS``); the session id and the answers' turn ids."""
    session = store.start_session(user)
    start = datetime.now(UTC) - timedelta(minutes=10)
    processor = TurnProcessor(store, extractor or ReadingsByText(READINGS))
    ids = []
    for index, text in enumerate(answers):
        asked = start + timedelta(minutes=2 * index)
        store.add_turn(user, session, "assistant", "Tell me about your data team.", created_at=asked)
        turn = store.add_turn(user, session, "user", text, created_at=asked + timedelta(seconds=30))
        assert processor.process(user, session, turn).status in ("processed", "no_update")
        ids.append(turn)
    return session, ids


def line_buttons(app, turn: str) -> dict[str, object]:
    return {b.key: b for b in app.button if b.key and turn in b.key}


@pytest.fixture
def conversation(app_database, signer, store, make_user):
    user = make_user(store, display_name="Cora Chat")
    session, [turn] = answered(store, user, BI_TEAM)
    return user, session, turn, open_app(signer.issue(user, session), "conversation")


def test_each_reading_is_said_back_under_the_answer_in_plain_words(conversation, catalog):
    _, _, turn, app = conversation
    shown = texts(app)
    assert "**Machine learning expertise**: high — ‘two data scientists in the BI team’" in shown
    assert "**Data quality**: low — ‘our data is a mess’" in shown
    assert f"Low means: {catalog.factor('data_quality').rubric.low}" in shown  # the factor's own level words
    buttons = line_buttons(app, turn)
    assert {f"ok-{turn}-ml_expertise", f"fix-{turn}-ml_expertise", f"ok-{turn}-data_quality"} <= buttons.keys()


def test_confirm_one_line_and_correct_another_then_the_overview_shows_both_as_theirs(conversation, store, signer):
    user, session, turn, app = conversation
    app.button(key=f"ok-{turn}-data_quality").click().run()
    app.button(key=f"fix-{turn}-ml_expertise").click().run()
    app.radio(key=f"level-{turn}-ml_expertise").set_value("low")
    [save] = [b for b in app.button if b.label == "Save"]
    save.click().run()
    assert not app.exception, app.exception

    quality, expertise = store.factor(user, "data_quality"), store.factor(user, "ml_expertise")
    assert quality.inference_status == InferenceStatus.confirmed and quality.current_confidence == 0.95
    assert (expertise.inference_status, expertise.current_value) == (InferenceStatus.user_provided, 20)
    [confirmation] = store.history(user, "data_quality", page_size=1).entries
    assert (confirmation.kind, confirmation.source) == (EntryKind.confirmed, Source.user)
    assert (confirmation.session_id, confirmation.turn_id) == (session, turn)  # where the person said so
    assert confirmation.conversation_excerpt == "our data is a mess"
    shown = texts(app)
    assert "✓ Confirmed by you." in shown and "✓ Corrected by you: low." in shown
    assert f"ok-{turn}-data_quality" not in line_buttons(app, turn)  # nothing left to confirm on that line
    summary = store.summary(user)
    assert {u.factor_id for u in summary.unconfirmed_inferences}.isdisjoint({"data_quality", "ml_expertise"})

    overview = open_app(signer.issue(user))
    assert "· confirmed" in texts(overview) and "· yours" in texts(overview)


def test_doesnt_apply_withdraws_the_reading(conversation, store):
    user, _, turn, app = conversation
    app.button(key=f"fix-{turn}-ml_expertise").click().run()
    app.radio(key=f"level-{turn}-ml_expertise").set_value("Doesn't apply")
    [save] = [b for b in app.button if b.label == "Save"]
    save.click().run()
    state = store.factor(user, "ml_expertise")
    assert state.inference_status == InferenceStatus.unassessed and state.current_value is None
    [withdrawal] = store.history(user, "ml_expertise", page_size=1).entries
    assert withdrawal.kind == EntryKind.retracted and withdrawal.turn_id == turn
    assert "✓ You said this does not apply." in texts(app)
    assert not {key for key in line_buttons(app, turn) if "ml_expertise" in key}


def test_saving_without_a_choice_asks_for_one_and_changes_nothing(conversation, store):
    user, _, turn, app = conversation
    app.button(key=f"fix-{turn}-ml_expertise").click().run()
    [save] = [b for b in app.button if b.label == "Save"]
    save.click().run()
    assert "Choose a level" in texts(app)
    assert store.factor(user, "ml_expertise").inference_status == InferenceStatus.unconfirmed


def test_an_answer_with_nothing_understood_says_so(app_database, signer, store, make_user):
    user = make_user(store)
    session, _ = answered(store, user, SMALL_TALK)
    app = open_app(signer.issue(user, session), "conversation")
    shown = texts(app)
    assert NOTHING_UNDERSTOOD.removesuffix(".") in shown
    assert f"{NOTHING_UNDERSTOOD.removesuffix('.')} (it is a question for us)." in shown  # set aside: says why
    assert not [b for b in app.button if b.key and b.key.startswith(("ok-", "fix-"))]


def test_a_decision_made_elsewhere_shows_as_such(app_database, signer, store, make_user):
    user = make_user(store)
    session, [turn] = answered(store, user, BI_TEAM)
    store.correct(user, "data_quality", 50, "Review: it is usable after cleaning")  # on the Review page
    app = open_app(signer.issue(user, session), "conversation")
    assert "✓ Corrected by you: mid." in texts(app)


def test_analysing_the_turn_again_never_undoes_the_persons_decision(conversation, store, signer):
    user, session, turn, app = conversation
    app.button(key=f"ok-{turn}-data_quality").click().run()
    app.button(key=f"fix-{turn}-ml_expertise").click().run()
    app.radio(key=f"level-{turn}-ml_expertise").set_value("low")
    [save] = [b for b in app.button if b.label == "Save"]
    save.click().run()
    outcome = TurnProcessor(store, ReadingsByText(READINGS)).process(user, session, turn, force=True)
    assert outcome.status in ("processed", "no_update", "duplicate")
    assert store.factor(user, "data_quality").inference_status == InferenceStatus.confirmed
    expertise = store.factor(user, "ml_expertise")
    assert (expertise.inference_status, expertise.current_value) == (InferenceStatus.user_provided, 20)
    again = open_app(signer.issue(user, session), "conversation")
    assert "✓ Confirmed by you." in texts(again) and "Corrected by you: low" in texts(again)


def test_the_next_question_follows_from_what_was_understood(conversation, store, catalog):
    user, session, turn, app = conversation
    [*_, (_, question)] = store.session_turns(user, session)
    assert question["role"] == "assistant"
    settled = {q for fid in ("data_quality", "ml_expertise") for q in catalog.factor(fid).elicitation_questions}
    assert question["text"] not in settled


def test_a_manager_sees_no_words_and_no_buttons_of_a_member(app_database, signer, store, make_user):
    org = f"org-{make_user(store)}"
    OrganisationDirectory(store).create(org, "Say-back Org")
    member = make_user(store, org_id=org, display_name="Mo Member")
    answered(store, member, BI_TEAM)
    manager = make_user(store, org_id=org)
    OrganisationDirectory(store).assign_manager(org, manager)
    app = open_app(signer.issue(manager, kind="manager", org_id=org))
    app.session_state["drill_user"] = member
    with pytest.raises(ValueError):  # the conversation is not among a manager's pages at all
        app.switch_page("screens/conversation.py").run()
    app = open_app(signer.issue(manager, kind="manager", org_id=org))
    app.session_state["drill_user"] = member
    app.switch_page("screens/overview.py").run()
    shown = texts(app)
    assert "a mess" not in shown and "data scientists" not in shown
    assert not [b for b in app.button if b.key and b.key.startswith(("ok-", "fix-"))]
