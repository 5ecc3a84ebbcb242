"""The conversation says back what each answer told us, and the person confirms or corrects it there
(AppTest on the emulator; the answers are analysed by the real pipeline, only the model is scripted)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from test_app import open_app, texts

from dashboard.safe_text import md
from doubles import ReadingsByText, reading
from factor_journal.extraction.quotes import MAX_QUOTE_CHARS, shorten
from factor_journal.models import EntryKind, InferenceStatus, Source
from factor_journal.organisation import OrganisationDirectory
from factor_journal.pipeline import TurnProcessor
from factor_journal.sayback import NOTHING_UNDERSTOOD

BI_TEAM = "We have two data scientists in the BI team, no machine learning engineers, and our data is a mess."
SMALL_TALK = "What exactly do you mean by that?"
DEFERRAL = "I don't know, ask Sam in IT."
READINGS = {
    BI_TEAM: [
        reading("ml_expertise", 72, 0.6, quote="two data scientists in the BI team"),  # the misreading to fix
        reading("data_quality", 18, 0.7, quote="our data is a mess"),
    ],
    SMALL_TALK: [],
    DEFERRAL: [],
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


def catalog_name(factor_id: str) -> str:
    from factor_journal.catalog import load_catalog

    return load_catalog().factor(factor_id).name


def line_buttons(app, turn: str) -> dict[str, object]:
    return {b.key: b for b in app.button if b.key and turn in b.key}


def correct(app, turn: str, factor: str, level: str) -> None:
    """The person clicks "Not quite" on a line, chooses ``level`` and saves."""
    app.button(key=f"fix-{turn}-{factor}").click().run()
    app.radio(key=f"level-{turn}-{factor}").set_value(level)
    [save] = [b for b in app.button if b.label == "Save"]
    save.click().run()


def confirm_one_correct_the_other(app, turn: str) -> None:
    """That's right on data quality; Not quite on machine-learning expertise, which is low."""
    app.button(key=f"ok-{turn}-data_quality").click().run()
    correct(app, turn, "ml_expertise", "low")


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
    expertise = catalog.factor("ml_expertise").name
    assert buttons[f"ok-{turn}-ml_expertise"].label == f"That's right: {expertise} is high"  # each names its factor
    assert buttons[f"fix-{turn}-ml_expertise"].label == f"Not quite: {expertise}"
    assert buttons[f"ok-{turn}-data_quality"].label == "That's right: Data quality is low"


def test_confirm_one_line_and_correct_another_then_the_overview_shows_both_as_theirs(conversation, store, signer):
    user, session, turn, app = conversation
    confirm_one_correct_the_other(app, turn)
    assert not app.exception, app.exception

    quality, expertise = store.factor(user, "data_quality"), store.factor(user, "ml_expertise")
    assert quality.inference_status == InferenceStatus.confirmed and quality.current_confidence == 0.95
    assert (expertise.inference_status, expertise.current_value) == (InferenceStatus.user_provided, 20)
    [confirmation] = store.history(user, "data_quality", page_size=1).entries
    assert (confirmation.kind, confirmation.source) == (EntryKind.confirmed, Source.user)
    assert (confirmation.session_id, confirmation.turn_id) == (session, turn)  # where the person said so
    assert confirmation.conversation_excerpt == "our data is a mess"
    shown = texts(app)
    assert "✓ You confirmed it: Data quality is low." in shown
    assert f"✓ You corrected it: {catalog_name('ml_expertise')} is low." in shown
    assert f"ok-{turn}-data_quality" not in line_buttons(app, turn)  # nothing left to confirm on that line
    summary = store.summary(user)
    assert {u.factor_id for u in summary.unconfirmed_inferences}.isdisjoint({"data_quality", "ml_expertise"})

    overview = open_app(signer.issue(user))
    assert "· confirmed" in texts(overview) and "· yours" in texts(overview)


def test_doesnt_apply_withdraws_the_reading_and_undoing_it_restores_it(conversation, store, signer):
    user, _, turn, app = conversation
    correct(app, turn, "ml_expertise", "Doesn't apply to what I said")
    state = store.factor(user, "ml_expertise")
    assert state.inference_status == InferenceStatus.unassessed and state.current_value is None
    [withdrawal] = store.history(user, "ml_expertise", page_size=1).entries
    assert withdrawal.kind == EntryKind.retracted and withdrawal.turn_id == turn
    expertise = catalog_name("ml_expertise")
    assert f"✓ You took this reading back: {expertise} is not assessed yet." in texts(app)  # a retraction, said so
    assert [t.value for t in app.toast] == [f"Reading taken back: {expertise} is not assessed yet."]
    assert "does not apply" not in texts(app)  # never a statement about the company
    app.button(key=f"ok-{turn}-ml_expertise").click().run()  # changed their mind: "That's right" undoes it
    state = store.factor(user, "ml_expertise")
    assert (state.inference_status, state.current_value) == (InferenceStatus.user_provided, 72)
    [undone, _] = store.history(user, "ml_expertise", page_size=2).entries
    assert undone.kind == EntryKind.restored and undone.turn_id == turn  # brought back, not corrected
    assert f"✓ You confirmed it: {catalog_name('ml_expertise')} is high." in texts(app)
    assert [t.value for t in app.toast] == [f"Thanks: {catalog_name('ml_expertise')} brought back as high."]

    history = open_app(signer.issue(user), "history")  # opens on the factor changed last
    shown = texts(history)
    assert "restored by you" in shown and "corrected by you" not in shown
    assert "You restored what was understood from your answer" in shown


UNBROKEN = "Our data quality is poor: " + "ERP/CRM/MES/" * 120  # a run of 1,440 characters without a space


def confirmed_with_its_words(app, store, user: str, turn: str) -> str:
    """The person clicks "That's right" on data quality: it is theirs, journaled with the words it rests on."""
    app.button(key=f"ok-{turn}-data_quality").click().run()
    assert not app.exception, app.exception
    assert not app.error, [e.value for e in app.error]
    assert store.factor(user, "data_quality").inference_status == InferenceStatus.confirmed
    [confirmation] = store.history(user, "data_quality", page_size=1).entries
    assert confirmation.kind == EntryKind.confirmed and confirmation.turn_id == turn
    return confirmation.conversation_excerpt


def test_a_reading_quoting_a_long_run_without_spaces_is_confirmed(app_database, signer, store, make_user):
    user = make_user(store)
    extractor = ReadingsByText({UNBROKEN: [reading("data_quality", 18, 0.7, quote=UNBROKEN)]})
    session, [turn] = answered(store, user, UNBROKEN, extractor=extractor)
    app = open_app(signer.issue(user, session), "conversation")
    words = confirmed_with_its_words(app, store, user, turn)
    assert words.startswith("Our data quality is poor: ERP/CRM/MES/") and len(words) <= MAX_QUOTE_CHARS


def test_a_reading_stored_with_an_over_long_quote_is_still_confirmed(app_database, signer, store, make_user):
    """A quote stored before quotes were bounded by characters (older data) is shown and decided bounded."""
    user = make_user(store)
    session, [turn] = answered(store, user, BI_TEAM)
    document = store.client.document(f"users/{user}/conversations/{session}/turns/{turn}")
    readings = document.get().to_dict()["extraction"]["readings"]
    stored = "我们的数据质量很差" * 200  # 1,800 characters, no space
    readings = [{**r, "quote": stored} if r["factor_id"] == "data_quality" else r for r in readings]
    document.update({"extraction.readings": readings})
    app = open_app(signer.issue(user, session), "conversation")
    assert f"**Data quality**: low — ‘{shorten(stored)}’" in texts(app)
    assert confirmed_with_its_words(app, store, user, turn) == shorten(stored)


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
    assert "✓ You corrected it: Data quality is mid." in texts(app)


def test_analysing_the_turn_again_never_undoes_the_persons_decision(conversation, store, signer):
    user, session, turn, app = conversation
    confirm_one_correct_the_other(app, turn)
    outcome = TurnProcessor(store, ReadingsByText(READINGS)).process(user, session, turn, force=True)
    assert outcome.status in ("processed", "no_update", "duplicate")
    assert store.factor(user, "data_quality").inference_status == InferenceStatus.confirmed
    expertise = store.factor(user, "ml_expertise")
    assert (expertise.inference_status, expertise.current_value) == (InferenceStatus.user_provided, 20)
    again = open_app(signer.issue(user, session), "conversation")
    assert "✓ You confirmed it: Data quality is low." in texts(again)
    assert f"You corrected it: {catalog_name('ml_expertise')} is low" in texts(again)


def test_the_next_question_follows_from_what_was_understood(conversation, store, catalog):
    user, session, turn, app = conversation
    [*_, (_, question)] = store.session_turns(user, session)
    assert question["role"] == "assistant"
    settled = {q for fid in ("data_quality", "ml_expertise") for q in catalog.factor(fid).elicitation_questions}
    assert question["text"] not in settled


def suggested(app) -> list[str]:
    """The overview's next best questions, as listed (each question in bold, then its factor and why)."""
    return [m.value.split("**")[1] for m in app.markdown if m.value.startswith("- **") and "  \n  _" in m.value]


def test_the_overview_suggests_what_the_conversation_asks_next_and_nothing_it_asked_or_heard(
    app_database, signer, store, make_user, catalog
):
    """The overview's first next best question is the one the conversation then asks; once asked, it is listed
    first as asked, and neither page brings back what the session asked about or an answer spoke to."""
    user = make_user(store, display_name="Anna Berg")
    session = store.start_session(user)
    question = catalog.factor("it_integration").elicitation_questions[0]
    _asked_about(store, user, session, "it_integration", question, DEFERRAL, datetime.now(UTC) - timedelta(minutes=9))
    store.add_turn(user, session, "assistant", "Tell me about your data team.", about="ml_expertise")
    turn = store.add_turn(user, session, "user", BI_TEAM)
    assert TurnProcessor(store, ReadingsByText(READINGS)).process(user, session, turn).status == "processed"
    link = signer.issue(user, session)
    covered = {"it_integration", "ml_expertise", "data_quality"}
    said_before = {q for fid in covered for q in catalog.factor(fid).elicitation_questions}

    before = suggested(open_app(link))
    assert before and said_before.isdisjoint(before)
    open_app(link, "conversation")
    [*_, (_, asked)] = store.session_turns(user, session)
    assert asked["role"] == "assistant" and asked["about"] not in covered
    assert asked["text"] == before[0]  # what the overview said comes next is what the conversation asked

    after = suggested(open_app(link))
    assert after[0] == asked["text"] and after.count(asked["text"]) == 1  # waiting for the answer: listed first
    again = set(catalog.factor(asked["about"]).elicitation_questions)
    assert said_before.isdisjoint(after) and again.isdisjoint(after[1:])


def _asked_about(store, user: str, session: str, factor: str, question: str, answer: str, at: datetime) -> str:
    """The assistant asks ``question`` about ``factor`` and the person answers ``answer`` (analysed); the turn id."""
    store.add_turn(user, session, "assistant", question, created_at=at, about=factor)
    turn = store.add_turn(user, session, "user", answer, created_at=at + timedelta(seconds=30))
    assert TurnProcessor(store, ReadingsByText(READINGS)).process(user, session, turn).status == "no_update"
    return turn


def test_an_answer_that_settles_nothing_does_not_bring_the_same_factor_back_in_other_words(
    app_database, signer, store, make_user, catalog
):
    """The assistant asked about machine-learning expertise and the answer changed nothing (the person does not
    know): the next question is about another factor, and it records which, so the session never circles back."""
    user = make_user(store)
    session = store.start_session(user)
    question = catalog.factor("ml_expertise").elicitation_questions[0]
    _asked_about(store, user, session, "ml_expertise", question, DEFERRAL, datetime.now(UTC) - timedelta(minutes=5))

    open_app(signer.issue(user, session), "conversation")

    [*_, (_, following)] = store.session_turns(user, session)
    assert following["role"] == "assistant" and following["about"] != "ml_expertise"
    assert following["text"] not in catalog.factor("ml_expertise").elicitation_questions
    assert following["text"] in catalog.factor(following["about"]).elicitation_questions


def test_a_question_back_is_answered_by_explaining_the_question_once_then_the_interview_moves_on(
    app_database, signer, store, make_user, catalog
):
    """ "What do you mean by that?" to the question about machine-learning expertise: the assistant says what it
    means, in the catalog's words, and asks it again in other words; asked back again, it moves on."""
    user = make_user(store)
    session = store.start_session(user)
    factor = catalog.factor("ml_expertise")
    asked = datetime.now(UTC) - timedelta(minutes=5)
    _asked_about(store, user, session, "ml_expertise", factor.elicitation_questions[0], SMALL_TALK, asked)

    app = open_app(signer.issue(user, session), "conversation")

    [*_, (_, explained)] = store.session_turns(user, session)
    assert explained["role"] == "assistant" and explained["about"] == "ml_expertise"
    assert "people who can build, evaluate and maintain" in explained["text"]
    assert factor.rubric.low.rstrip(".") in explained["text"]
    assert explained["text"].endswith(factor.elicitation_questions[1])
    assert explained["text"] in texts(app)

    again = store.add_turn(user, session, "user", SMALL_TALK)
    assert TurnProcessor(store, ReadingsByText(READINGS)).process(user, session, again).status == "no_update"
    open_app(signer.issue(user, session), "conversation")
    [*_, (_, following)] = store.session_turns(user, session)
    assert following["role"] == "assistant" and following["about"] != "ml_expertise"


def test_an_answer_typed_while_another_window_moved_on_is_not_saved_against_an_unseen_question(
    app_database, signer, store, make_user
):
    user = make_user(store)
    session, _ = answered(store, user, SMALL_TALK)
    app = open_app(signer.issue(user, session), "conversation")  # this window shows the next question
    before = store.session_turns(user, session)
    other = store.add_turn(user, session, "user", "Our data is a mess")  # answered in another window…
    store.add_turn(user, session, "assistant", "Who looks after your data?")  # …which asked the next question

    app.chat_input[0].set_value("Retraining is done by hand by the consultancy.").run()

    after = [(t, d["text"]) for t, d in store.session_turns(user, session)]
    assert len(after) == len(before) + 2 and after[len(before)][0] == other  # nothing of this window's answer
    assert not [text for _, text in after if text.startswith("Retraining")]
    shown = texts(app)
    assert "moved on in another window" in shown and "Retraining is done by hand by the consultancy." in shown
    app.chat_input[0].set_value("Two people in IT.").run()  # sent again, now that the question is seen
    assert [d["text"] for _, d in store.session_turns(user, session)][-1] == "Two people in IT."


def test_after_a_request_to_pause_the_assistant_waits_to_be_asked_for_the_next_question(
    app_database, signer, store, make_user
):
    user = make_user(store)
    session = store.start_session(user)
    asked = datetime.now(UTC) - timedelta(hours=2)  # paused two hours ago: a return, not a reload
    store.add_turn(user, session, "assistant", "Where does your data live today?", created_at=asked)
    pause = store.add_turn(user, session, "user", "Can we pause for a moment?", created_at=asked + timedelta(seconds=9))
    outcome = TurnProcessor(store, ReadingsByText(READINGS)).process(user, session, pause)
    assert outcome.status == "no_update"

    app = open_app(signer.issue(user, session), "conversation")  # back after the pause: told where they left off

    assert [d["role"] for _, d in store.session_turns(user, session)][-1] == "user"  # no question asked yet
    assert f"Welcome back. You asked to pause on {asked:%d %b %Y}" in texts(app)
    assert "take your time" not in texts(app) and "Next question" in [b.label for b in app.button]
    app.button(key="conversation_resume").click().run()
    [*_, (_, question)] = store.session_turns(user, session)
    assert question["role"] == "assistant" and question["text"] != "Where does your data live today?"
    assert not [b for b in app.button if b.key == "conversation_resume"]


PAUSE = "Can we pause for a moment?"


def _paused_on(store, user: str, session: str, factor: str, question: str, at: datetime) -> None:
    """The assistant asks ``question`` about ``factor`` and the person asks to pause (analysed as a pause)."""
    store.add_turn(user, session, "assistant", question, created_at=at, about=factor)
    pause = store.add_turn(user, session, "user", PAUSE, created_at=at + timedelta(seconds=9))
    assert TurnProcessor(store, ReadingsByText(READINGS)).process(user, session, pause).status == "no_update"


def _answers(store, user: str, session: str, text: str) -> None:
    turn = store.add_turn(user, session, "user", text)
    assert TurnProcessor(store, ReadingsByText(READINGS)).process(user, session, turn).status == "no_update"


def test_a_question_paused_on_comes_back_after_another_question_and_only_once(
    app_database, signer, store, make_user, catalog
):
    user = make_user(store)
    session = store.start_session(user)
    question = catalog.factor("ml_expertise").elicitation_questions[0]
    _paused_on(store, user, session, "ml_expertise", question, datetime.now(UTC) - timedelta(minutes=5))

    app = open_app(signer.issue(user, session), "conversation")  # paused in this visit: no welcome back
    assert f"“Next question” asks another one first; “{md(question)}” comes back later." in texts(app)
    app.button(key="conversation_resume").click().run()
    [*_, (_, other)] = store.session_turns(user, session)
    assert other["role"] == "assistant" and other["about"] != "ml_expertise"  # never straight away
    assert question not in other["text"]

    _answers(store, user, session, DEFERRAL)  # the person answers the other question
    app.run()
    [*_, (_, back)] = store.session_turns(user, session)
    assert (back["about"], back["text"]) == ("ml_expertise", f"Coming back to the question you paused on: {question}")
    assert back["text"] in texts(app)

    _answers(store, user, session, DEFERRAL)  # still nothing to say about it: the interview moves on for good
    app.run()
    [*_, (_, following)] = store.session_turns(user, session)
    assert following["role"] == "assistant" and following["about"] not in ("ml_expertise", other["about"])


def test_a_person_who_paused_and_comes_back_is_told_the_question_next_question_brings_back(
    app_database, signer, store, make_user, catalog
):
    user = make_user(store)
    session = store.start_session(user)
    question = catalog.factor("data_quality").elicitation_questions[0]
    paused = datetime.now(UTC) - timedelta(days=2)
    _paused_on(store, user, session, "data_quality", question, paused)

    app = open_app(signer.issue(user, session), "conversation")

    shown = texts(app)
    assert f"Welcome back. You asked to pause on {paused:%d %b %Y}" in shown
    assert f"“Next question” comes back to “{md(question)}” when you are ready." in shown
    app.button(key="conversation_resume").click().run()
    [*_, (_, back)] = store.session_turns(user, session)
    assert (back["about"], back["text"]) == ("data_quality", f"Coming back to the question you paused on: {question}")


def test_a_person_who_comes_back_is_told_when_they_last_answered_and_a_pause_in_this_visit_is_not_a_return(
    app_database, signer, store, make_user
):
    user = make_user(store)
    session = store.start_session(user)
    days_ago = datetime.now(UTC) - timedelta(days=3)
    store.add_turn(user, session, "assistant", "Where does your data live today?", created_at=days_ago)
    answer = store.add_turn(user, session, "user", SMALL_TALK, created_at=days_ago + timedelta(seconds=20))
    TurnProcessor(store, ReadingsByText(READINGS)).process(user, session, answer)

    app = open_app(signer.issue(user, session), "conversation")
    assert f"Welcome back. You last answered on {days_ago:%d %b %Y}" in texts(app)

    pause = store.add_turn(user, session, "user", "Can we pause for a moment?")  # said during this visit
    TurnProcessor(store, ReadingsByText(READINGS)).process(user, session, pause)
    app.run()
    shown = texts(app)
    assert "Welcome back" not in shown and "take your time" in shown


def test_earlier_answers_and_their_say_back_are_one_click_away(app_database, signer, store, make_user):
    user = make_user(store)
    session, [first, *_] = answered(store, user, BI_TEAM, *[SMALL_TALK] * 7)
    app = open_app(signer.issue(user, session), "conversation")
    assert f"ok-{first}-data_quality" not in {b.key for b in app.button}  # the first answer is not on the page
    app.button(key="conversation_earlier").click().run()
    assert f"ok-{first}-data_quality" in {b.key for b in app.button}  # now it is, with its say-back
    assert BI_TEAM in texts(app)


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
