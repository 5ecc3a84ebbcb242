"""When the reader was unsure, the conversation page lets the person say what an answer was about (AppTest on the
emulator; the answers are analysed by the real pipeline, only the model is scripted): an answer nothing was
understood from (factor and level in two clicks, or any factor by name), a torn reading answered by its question,
an answer set aside wrongly brought back; each ends on the overview as the person's.  A manager sees none of it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from streamlit.testing.v1 import AppTest
from test_app import APP, open_app, texts

from doubles import reading
from factor_journal.documents import told_readings
from factor_journal.extraction.base import ExtractionRequest, ExtractionResult
from factor_journal.models import InferenceStatus
from factor_journal.organisation import OrganisationDirectory
from factor_journal.pipeline import TurnProcessor
from factor_journal.sayback import LIFT

CONTROLLER = (
    "Every month our controller spends two days making the sales report and the stock report agree, "
    "and they still never quite do."
)
TORN = "Our reports are full of duplicates, and nobody owns the data catalog."  # cue words of both factors
SISTER = "My sister keeps the books for the firm in a spreadsheet."  # about us, set aside as another organisation
QUESTION = "How much do you trust the numbers in your main systems without checking them by hand?"


class Unsure:
    """The scripted model: ranks every answer, is torn about ``TORN`` (data quality or data governance) and reads
    data infrastructure low in ``SISTER`` once its screen is lifted."""

    name = "scripted"

    def extract(self, request: ExtractionRequest) -> ExtractionResult:
        torn = []
        if request.text == TORN:
            torn = [[reading("data_quality", 20, 0.45, quote="numbers never match"), reading("data_governance", 25)]]
        sure = [reading("data_infrastructure", 20, 0.6, quote="books for the firm in a spreadsheet")]
        sure = sure if request.text == SISTER else []
        ranking = ["data_quality", "forecasting_practice", "value_tracking"]
        return ExtractionResult(raw_updates=sure, extractor=self.name, ranking=ranking, torn=torn)


def answered(store, user: str, text: str) -> tuple[str, str]:
    """A session where the assistant asked ``QUESTION`` and the person answered ``text``, analysed by the pipeline."""
    session = store.start_session(user)
    at = datetime.now(UTC) - timedelta(minutes=10)
    store.add_turn(user, session, "assistant", QUESTION, created_at=at, about="data_quality")
    turn = store.add_turn(user, session, "user", text, created_at=at + timedelta(seconds=30))
    TurnProcessor(store, Unsure()).process(user, session, turn)
    return session, turn


def person_answered(store, signer, make_user, text: str) -> tuple[str, str, str, AppTest]:
    user = make_user(store, display_name="Una Unsure")
    session, turn = answered(store, user, text)
    return user, session, turn, open_app(signer.issue(user, session), "conversation")


def keys(app: AppTest, *prefixes: str) -> dict[str, object]:
    return {b.key: b for b in app.button if b.key and b.key.startswith(prefixes)}


def theirs_on_the_overview(signer, user: str) -> str:
    return texts(open_app(signer.issue(user)))


def test_under_an_answer_nothing_was_understood_from_the_person_picks_factor_and_level_in_two_clicks(
    app_database, store, signer, make_user, catalog
):
    user, session, turn, app = person_answered(store, signer, make_user, CONTROLLER)
    shown = texts(app)
    assert "Noted — nothing to change in the assessment." in shown and "**This was about…**" in shown
    offered = keys(app, f"about-{turn}-")
    assert [b.label for b in offered.values()] == [  # the reader's ranking, each button naming its factor
        "It was about Data quality",
        f"It was about {catalog.factor('forecasting_practice').name}",
        f"It was about {catalog.factor('value_tracking').name}",
    ]
    app.button(key=f"about-{turn}-data_quality").click().run()  # one
    levels = keys(app, f"about-{turn}-data_quality-")
    quality = catalog.factor("data_quality")
    assert [b.label for b in levels.values()] == [
        f"Data quality is low: {quality.rubric.low}",
        f"Data quality is mid: {quality.rubric.mid}",
        f"Data quality is high: {quality.rubric.high}",
    ]
    app.button(key=f"about-{turn}-data_quality-low").click().run()  # two
    assert not app.exception, app.exception

    state = store.factor(user, "data_quality")
    assert (state.inference_status, state.current_value) == (InferenceStatus.user_provided, 20)
    [entry] = store.history(user, "data_quality").entries
    assert (entry.turn_id, entry.session_id, entry.conversation_excerpt) == (turn, session, CONTROLLER)
    assert [r.factor_id for r in told_readings(store.turn_data(user, session, turn))] == ["data_quality"]
    shown = texts(app)
    assert "✓ You told us: Data quality is low." in shown and "**This was about…**" not in shown
    assert [t.value for t in app.toast] == ["Saved: Data quality is low, as you said."]
    assert f"fix-{turn}-data_quality" in keys(app, "fix-")  # and "Not quite" still changes it
    assert "sure · yours" in theirs_on_the_overview(signer, user)


def test_something_else_finds_any_factor_by_name(app_database, store, signer, make_user, catalog):
    user, _, turn, app = person_answered(store, signer, make_user, CONTROLLER)
    app.selectbox(key=f"about-find-{turn}").set_value("kpi_definition").run()
    kpi = catalog.factor("kpi_definition")
    assert f"How is it for {kpi.name}?" in texts(app)
    app.button(key=f"about-{turn}-kpi_definition-mid").click().run()
    state = store.factor(user, "kpi_definition")
    assert (state.inference_status, state.current_value) == (InferenceStatus.user_provided, 50)
    assert f"✓ You told us: {kpi.name} is mid." in texts(app)


def test_a_torn_reading_asks_its_question_next_and_one_click_answers_it(
    app_database, store, signer, make_user, catalog
):
    user, session, turn, app = person_answered(store, signer, make_user, TORN)
    asked = (
        "Is this about how accurate, complete, consistent and deduplicated the operational data is (Data quality) "
        "or who owns the data and what its terms mean (Data governance)?"
    )
    assert asked in texts(app)  # under the answer
    last = store.session_turns(user, session)[-1][1]
    assert (last["role"], last["text"]) == ("assistant", asked)  # and as the conversation's next question
    assert "We could not tell what your answer was about." in texts(app)
    assert not store.factor(user, "data_quality").is_assessed  # asked, not guessed
    options = keys(app, f"torn-{turn}-")
    assert [b.label for b in options.values()] == ["It is about Data quality", "It is about Data governance"]
    overview = open_app(signer.issue(user, session))
    assert asked in texts(overview)  # the overview's next question is the same question

    app.button(key=f"torn-{turn}-1").click().run()  # one click
    state = store.factor(user, "data_governance")
    assert (state.inference_status, state.current_value) == (InferenceStatus.user_provided, 25)
    assert not store.factor(user, "data_quality").is_assessed
    shown = texts(app)
    assert "✓ You told us: Data governance is low." in shown and not keys(app, f"torn-{turn}-")
    turns = store.session_turns(user, session)
    assert turns[-1][1]["role"] == "assistant" and turns[-1][1]["text"] != asked  # the conversation moved on
    assert "sure · yours" in theirs_on_the_overview(signer, user)


def test_something_else_under_a_torn_reading_offers_every_choice(app_database, store, signer, make_user):
    _, _, turn, app = person_answered(store, signer, make_user, TORN)
    app.button(key=f"torn-else-{turn}").click().run()
    assert "**This was about…**" in texts(app) and f"about-{turn}-data_quality" in keys(app, "about-")


def test_an_answer_set_aside_wrongly_is_read_again_at_the_persons_word(
    app_database, store, signer, make_user, monkeypatch
):
    from dashboard.views import unsure

    monkeypatch.setattr(unsure, "WAIT_FOR_READING_SECONDS", 0.2)  # no trigger here: the test reads it itself
    user, session, turn, app = person_answered(store, signer, make_user, SISTER)
    assert "Noted — nothing to change in the assessment (it is about another organisation)." in texts(app)
    assert app.button(key=f"lift-{turn}").label == LIFT
    assert not keys(app, "about-")  # set aside, not misunderstood: "It was about us" is the way in
    app.button(key=f"lift-{turn}").click().run()
    assert not app.exception, app.exception

    TurnProcessor(store, Unsure()).process(user, session, turn)  # what its trigger does
    app.run()
    shown = texts(app)
    assert "You said this answer was about you after all: it was read again." in shown
    assert "**Data infrastructure**: low — ‘books for the firm in a spreadsheet’" in shown
    app.button(key=f"ok-{turn}-data_infrastructure").click().run()
    assert store.factor(user, "data_infrastructure").inference_status == InferenceStatus.confirmed
    assert f"lift-{turn}" not in keys(app, "lift-")  # lifted once
    assert "sure · confirmed" in theirs_on_the_overview(signer, user)


def test_an_answer_can_be_opened_by_address_with_what_it_was_about_open(app_database, store, signer, make_user):
    from dashboard.context import answer_address

    user = make_user(store)
    first_session, first = answered(store, user, CONTROLLER)
    answered(store, user, TORN)  # a later session: the one the conversation would continue
    app = AppTest.from_file(APP, default_timeout=60)
    app.query_params["t"] = signer.issue(user)
    app.run()
    for name, value in answer_address(first_session, first).items():
        app.query_params[name] = value
    app.switch_page("screens/conversation.py").run()
    assert not app.exception, app.exception
    assert CONTROLLER in texts(app) and f"about-{first}-data_quality" in keys(app, "about-")


def test_a_manager_sees_no_words_and_no_controls_of_any_of_the_three(app_database, signer, store, make_user):
    org = f"org-{make_user(store)}"
    OrganisationDirectory(store).create(org, "Unsure Org")
    member = make_user(store, org_id=org, display_name="Mo Member")
    _, about = answered(store, member, CONTROLLER)
    torn_session, torn = answered(store, member, TORN)
    answered(store, member, SISTER)
    from factor_journal.models import SaidIn

    said = SaidIn(session_id=torn_session, turn_id=torn, words=TORN)
    store.correct(member, "data_governance", 25, "User said which reading was right", said=said, told=True)
    manager = make_user(store, org_id=org)
    OrganisationDirectory(store).assign_manager(org, manager)
    for page in ("overview", "history"):
        app = open_app(signer.issue(manager, kind="manager", org_id=org))
        app.session_state["drill_user"] = member
        app.switch_page(f"screens/{page}.py").run()
        assert not app.exception, app.exception
        shown = texts(app)
        for words in ("controller", "duplicates", "spreadsheet", "This was about", "Is this about", LIFT):
            assert words not in shown, (page, words)
        assert not keys(app, "about-", "torn-", "lift-", "ok-", "fix-")
    app = open_app(signer.issue(manager, kind="manager", org_id=org))
    app.session_state["drill_user"] = member
    with pytest.raises(ValueError):  # the conversation is not among a manager's pages at all
        app.switch_page("screens/conversation.py").run()
