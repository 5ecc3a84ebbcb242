"""Every page of the Streamlit app through ``AppTest``, against the Firestore emulator.

The app reads the emulator's ``fj-tests`` database here (set through
FJ_FIRESTORE_DATABASE), except the conversation test, which uses the default
database so the real trigger analyses the answer.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import unquote

import pytest
import streamlit as st
from google.cloud.firestore_v1.base_query import FieldFilter
from streamlit.testing.v1 import AppTest

from factor_journal import runtime
from factor_journal.links import LinkSigner
from factor_journal.models import InferredUpdate, UserProfile
from factor_journal.organisation import OrganisationDirectory
from factor_journal.page_models import shown_value
from factor_journal.repositories.links import LinkRecords
from factor_journal.store import FactorJournalStore
from waiting import wait_for_analysis

APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "app.py")


def _reset_caches() -> None:
    runtime.reset()  # clients, store, processor and the settings they were made from
    st.cache_resource.clear()
    st.cache_data.clear()  # the team's rows kept a minute (dashboard/views/manager.py)


@pytest.fixture
def app_database(monkeypatch) -> Iterator[str]:
    monkeypatch.setenv("FJ_FIRESTORE_DATABASE", "fj-tests")
    _reset_caches()
    yield "fj-tests"
    _reset_caches()


@pytest.fixture
def signer(firestore_client) -> LinkSigner:
    return LinkSigner(LinkRecords(firestore_client))


def open_app(token: str | None, page: str | None = None) -> AppTest:
    app = AppTest.from_file(APP, default_timeout=60)
    if token is not None:
        app.query_params["t"] = token
    app.run()
    if page is not None:
        app.switch_page(f"screens/{page}.py").run()
    assert not app.exception, app.exception
    return app


def texts(app: AppTest) -> str:
    parts = [e.value for e in (*app.title, *app.header, *app.subheader, *app.markdown, *app.caption)]
    parts += [e.value for e in (*app.info, *app.warning, *app.success, *app.error)]
    parts += [e.value for e in app.text]
    parts += [e.proto.label for e in app.get("page_link")]
    parts += [f"{m.label} {m.value} {m.delta or ''}" for m in app.metric]
    return "\n".join(str(p) for p in parts)


def infer(store: FactorJournalStore, user: str, factor: str, value: float, confidence: float, days_ago: float, **extra):
    store.record_inference(
        user,
        InferredUpdate(
            factor_id=factor,
            value=value,
            confidence=confidence,
            rationale=extra.pop("rationale", f"User described {factor.replace('_', ' ')}"),
            conversation_excerpt=extra.pop("excerpt", "User: our data is all over the place, 5 different systems"),
            session_id="kickoff",
            observed_at=datetime.now(UTC) - timedelta(days=days_ago),
            **extra,
        ),
    )


@pytest.fixture
def assessed_user(store, make_user) -> str:
    user = make_user(store, display_name="Anna Berg", email="anna@example.com")
    infer(store, user, "data_governance", 15, 0.7, 20, rationale="No data catalog and nobody owns the data")
    infer(
        store,
        user,
        "data_quality",
        20,
        0.75,
        19,
        inferred_from=["data_governance"],
        rationale="Data scattered across 5 systems",
    )
    infer(store, user, "sensor_data", 60, 0.8, 18, rationale="Telemetry from the newest presses")
    infer(store, user, "ml_expertise", 50, 0.7, 17, rationale="Two data scientists in BI")
    infer(store, user, "data_infrastructure", 35, 0.7, 16, rationale="Spreadsheets and an ERP")
    return user


def test_without_a_link_nothing_is_shown(app_database):
    app = open_app(None)
    assert "through the link in your email" in texts(app)
    assert not app.metric


def test_bad_links_show_a_clear_message_and_no_data(app_database, signer, store, assessed_user):
    good = signer.issue(assessed_user)
    tampered = good[:-3] + ("AAA" if not good.endswith("AAA") else "BBB")
    revoked = signer.issue(assessed_user)
    signer.revoke(revoked)
    expired = signer.issue(assessed_user, ttl=timedelta(seconds=1))
    time.sleep(1.5)
    for token, message in [
        (tampered, "not valid"),
        ("garbage", "not valid"),
        (revoked, "withdrawn"),
        (expired, "expired"),
    ]:
        app = open_app(token)
        shown = texts(app)
        assert message in shown, (message, shown)
        assert "Anna" not in shown and not app.metric


def test_an_expired_link_has_a_new_one_mailed_to_its_owner_which_opens_their_pages(
    app_database, signer, store, assessed_user
):
    expired = signer.issue(assessed_user, ttl=timedelta(seconds=1))
    revoked = signer.issue(assessed_user)
    signer.revoke(revoked)
    time.sleep(1.5)
    assert not open_app(revoked).button  # a withdrawn link stays withdrawn: nothing to ask for
    app = open_app(expired)
    assert "A new one can be sent to the email address it came to" in texts(app) and "Anna" not in texts(app)
    app.button(key="renew_link").click().run()
    assert "A new link is on its way to the email address this one was sent to" in texts(app)
    assert "Anna" not in texts(app) and "?t=" not in texts(app)  # the new link goes to the mailbox, not the page
    theirs = store.client.collection("mail").where(filter=FieldFilter("user_id", "==", assessed_user))
    mails = [snapshot.to_dict() for snapshot in theirs.stream()]
    [mail] = [mail for mail in mails if mail["kind"] == "new_link"]
    assert mail["to"] == ["anna@example.com"]
    app.button(key="renew_link").click().run()
    assert "sent to your email address within the last hour" in texts(app)
    new_token = unquote(re.search(r"\?t=([^\"&]+)", mail["message"]["html"]).group(1))
    assert "Anna" in texts(open_app(new_token))


def category_bars(app) -> tuple[list[str], list[str], list[str]]:
    """The overview's category chart (HTML bars) as read: category names, mapped labels, confidence labels."""
    [chart] = [html.proto.body for html in app.get("html") if "fj-bars" in html.proto.body]
    labels = re.findall(r"<span>([^<]+)</span>", chart)
    return re.findall(r'class="fj-name">([^<]+)<', chart), labels[0::2], labels[1::2]


def test_overview_shows_progress_tier_where_we_were_and_next_questions(app_database, signer, store, assessed_user):
    app = open_app(signer.issue(assessed_user))
    shown = texts(app)
    summary = store.summary(assessed_user)
    assert "Where are we" in shown
    assert f"{summary.overall.completeness:.0%}" in shown
    [bar] = app.get("progress")  # the bar says what it measures, as the metric rounds it (was cut: 11 beside 12%)
    assert (bar.proto.value, bar.proto.text) == (
        round(summary.overall.completeness * 100),
        f"{summary.overall.completeness:.0%} of the factors mapped",
    )
    assert summary.overall.decision_tier_name in shown
    assert "To unlock" in shown  # exactly what the next tier needs
    assert "Data infrastructure" in shown and "5 different systems" in shown  # the where-were-we card
    assert "You: our data is all over the place" in shown and "User:" not in shown  # the person's own words
    assert "Next best questions" in shown and "helps unlock" in shown
    [evaluable] = [m for m in app.metric if m.label == "Can evaluate"]  # one value, not "1" over "project types"
    count = len(summary.capabilities.can_evaluate)
    assert evaluable.value == f"{count} project type{'' if count == 1 else 's'}" and not evaluable.delta
    assert not app.get("plotly_chart")  # the page a link opens first loads no plotly (dashboard/bars.py)
    names, mapped, sure = category_bars(app)
    # the chart as text: each category's bar figures, in the chart's order, in a table a screen reader reads
    [table] = app.table
    rows = table.value.to_dict("records")
    assert [row["Category"] for row in rows] == names
    assert [row["Confidence"] for row in rows] == sure
    assert [row["Mapped"].split(" (")[0].replace(" of ", "/") for row in rows] == mapped
    counted = {c.name: f"{c.factor_count} of {c.total_factors}" for c in summary.categories.values()}
    assert {row["Category"]: row["Mapped"].split(" (")[0] for row in rows} == counted
    assert any(not row["Mapped"].startswith("0 of") for row in rows)


def test_overview_reads_the_summary_and_the_conversation_its_questions_come_from(
    app_database, signer, store, assessed_user
):
    """The summary; and, for the next best questions (what the person's conversation asks next), the turns of the
    session it continues: with none yet, one (empty) query for it."""
    app = open_app(signer.issue(assessed_user))
    runtime.store().stats.reset()
    app.run()
    assert runtime.store().stats.reads == 1 + 1  # the summary, no session
    session = store.start_session(assessed_user)
    store.add_turn(assessed_user, session, "assistant", "Where does your data live?", about="data_infrastructure")
    store.add_turn(assessed_user, session, "user", "In SAP.")
    app = open_app(signer.issue(assessed_user))
    runtime.store().stats.reset()
    app.run()
    assert runtime.store().stats.reads == 1 + 1 + 2  # the summary, the person's one session, its two turns


def test_empty_state_for_a_new_user(app_database, signer, store, make_user):
    user = make_user(store, display_name="New Person")
    app = open_app(signer.issue(user))
    shown = texts(app)
    assert "Nothing has been assessed yet" in shown
    assert "We have not talked yet" in shown
    for page in ("capabilities", "history", "review"):
        shown = texts(open_app(signer.issue(user), page))
        assert "Traceback" not in shown
    assert "No factor has a history yet" in texts(open_app(signer.issue(user), "history"))
    assert "Nothing to review" in texts(open_app(signer.issue(user), "review"))


def test_capabilities_rank_unlocks_with_their_gaps(app_database, signer, store, assessed_user):
    app = open_app(signer.issue(assessed_user), "capabilities")
    shown = texts(app)
    summary = store.summary(assessed_user)
    first = summary.capabilities.cannot_evaluate_yet[0]
    assert f"1. {first.name}" in [e.label.split(" —")[0] for e in app.expander][0]
    blocker = first.blockers[0]
    assert blocker.factor_name in shown and f"needs ≥ {blocker.min_value:g}" in shown
    assert len(app.get("plotly_chart")) >= 2


def test_factor_history_shows_entries_evidence_and_as_of(app_database, signer, store, assessed_user):
    infer(store, assessed_user, "data_quality", 35, 0.8, 2, rationale="They started deduplicating customers")
    app = open_app(signer.issue(assessed_user), "history")
    app.selectbox(key="history_factor").select("data_quality").run()
    shown = texts(app)
    assert "They started deduplicating customers" in shown and "Data scattered across 5 systems" in shown
    assert "20 → 35" in shown.replace(".0", "")
    assert "Data governance" in shown  # the inferred-from link
    app.date_input(key="as_of_date").set_value((datetime.now(UTC) - timedelta(days=10)).date()).run()
    app.button(key="as_of_go").click().run()
    assert "5/" in texts(app)  # five factors had been assessed ten days ago
    assert not app.exception


def test_review_confirms_and_corrects_through_the_store(app_database, signer, store, assessed_user):
    token = signer.issue(assessed_user)
    app = open_app(token, "review")
    before = len(store.summary(assessed_user).unconfirmed_inferences)
    app.button(key="confirm-sensor_data").click().run()
    assert "Confirmed Sensor" in texts(app)
    assert store.factor(assessed_user, "sensor_data").inference_status == "confirmed"
    assert len(store.summary(assessed_user).unconfirmed_inferences) == before - 1

    app.slider(key="value-data_quality").set_value(45)
    app.text_input(key="reason-data_quality").input("We cleaned the customer master last month")
    app.button(key="save-data_quality").click().run()
    state = store.factor(assessed_user, "data_quality")
    assert (state.current_value, state.inference_status) == (45, "user_provided")
    assert store.history(assessed_user, "data_quality").entries[0].change_rationale.startswith("We cleaned")


def test_review_keeps_the_value_as_read_when_a_correction_is_saved_without_moving_the_slider(
    app_database, signer, store, make_user
):
    user = make_user(store, display_name="Dora Decimal")
    infer(store, user, "data_quality", 20.7, 0.7, 3)
    app = open_app(signer.issue(user), "review")
    slider = app.slider(key="value-data_quality")
    assert slider.value == 20.7 and "20.7" in texts(app)  # the value every page shows, not 21 (nor 20)
    app.text_input(key="reason-data_quality").input("That is about right, and it is my answer")
    app.button(key="save-data_quality").click().run()
    state = store.factor(user, "data_quality")
    assert (state.current_value, state.inference_status) == (20.7, "user_provided")


def test_review_saves_nothing_over_a_value_that_changed_since_the_slider_was_drawn_and_shows_the_new_one(
    app_database, signer, store, make_user
):
    """The page was drawn for 20.7 (the slider at 20.7); a new answer moved the value before Save: the save is for
    the value the person saw, so nothing is written, the page says so and the slider starts again at the new
    value, from which a second Save does correct."""
    user = make_user(store, display_name="Dora Decimal")
    infer(store, user, "data_quality", 20.7, 0.7, 3)
    app = open_app(signer.issue(user), "review")
    assert app.slider(key="value-data_quality").value == 20.7
    infer(store, user, "data_quality", 35, 0.8, 1, rationale="They started deduplicating customers")  # elsewhere
    newer = store.factor(user, "data_quality").current_value
    assert round(newer, 1) != 20.7
    entries = len(store.history(user, "data_quality").entries)

    app.text_input(key="reason-data_quality").input("That is about right, and it is my answer")
    app.button(key="save-data_quality").click().run()
    state = store.factor(user, "data_quality")
    assert (state.current_value, state.inference_status) == (newer, "unconfirmed")  # nothing overwritten
    assert len(store.history(user, "data_quality").entries) == entries
    assert "changed since" in texts(app) and "nothing was saved" in texts(app)
    assert app.slider(key="value-data_quality").value == shown_value(newer)  # the value now, not the one before

    app.button(key="save-data_quality").click().run()  # seen now: saved
    state = store.factor(user, "data_quality")
    assert (state.current_value, state.inference_status) == (newer, "user_provided")


def test_review_confirms_only_the_value_the_person_saw(app_database, signer, store, make_user):
    """A new answer moved the value after the page was drawn: Confirm confirms nothing it did not show, says so and
    shows the value now; confirming again then confirms that one."""
    user = make_user(store, display_name="Dora Decimal")
    infer(store, user, "data_quality", 20, 0.7, 3)
    app = open_app(signer.issue(user), "review")
    infer(store, user, "data_quality", 35, 0.8, 1, rationale="They started deduplicating customers")  # elsewhere
    newer = store.factor(user, "data_quality").current_value
    assert newer != 20

    app.button(key="confirm-data_quality").click().run()
    assert store.factor(user, "data_quality").inference_status == "unconfirmed"
    assert "changed since" in texts(app) and f"{newer:g}/100" in texts(app)
    app.button(key="confirm-data_quality").click().run()
    state = store.factor(user, "data_quality")
    assert (state.current_value, state.inference_status) == (newer, "confirmed")


def test_review_refuses_a_correction_without_a_reason(app_database, signer, store, assessed_user):
    app = open_app(signer.issue(assessed_user), "review")
    app.slider(key="value-data_quality").set_value(45)
    app.button(key="save-data_quality").click().run()
    assert "rationale is required" in texts(app)
    assert store.factor(assessed_user, "data_quality").current_value == 20


def test_review_names_each_control_for_its_factor_under_a_heading_per_factor(
    app_database, signer, store, assessed_user
):
    """A control's accessible name is its label: five "Confirm" buttons would read alike to a screen reader."""
    app = open_app(signer.issue(assessed_user), "review")
    unconfirmed = store.summary(assessed_user).unconfirmed_inferences
    assert [h.value for h in app.header] == ["To confirm or correct"]  # the page's section, an h2 under the title
    assert [h.value for h in app.subheader] == [item.factor_name for item in unconfirmed]  # one heading per item
    for item in unconfirmed:
        name, fid = item.factor_name, item.factor_id
        assert app.button(key=f"confirm-{fid}").label == f"Confirm {name}"
        assert app.slider(key=f"value-{fid}").label == f"Correct value for {name}"
        assert app.text_input(key=f"reason-{fid}").label == f"Why correct {name}? (a short reason)"
        assert app.button(key=f"save-{fid}").label == f"Save correction to {name}"
    names = [b.label for b in app.button if b.key != "review_more"]
    assert len(names) == len(set(names)) == 2 * len(unconfirmed)


def test_ask_why_answers_with_dated_evidence_or_says_there_is_none(app_database, signer, store, assessed_user):
    app = open_app(signer.issue(assessed_user), "ask")
    app.text_input(key="ask_question").input("Why can't we do predictive maintenance?").run()
    shown = texts(app)
    assert "Predictive maintenance" in shown and "blocked by" in shown
    assert "Evidence" in shown and "Data scattered across 5 systems" in shown
    app.text_input(key="ask_question").input("Why is our IT security so low?").run()
    shown = texts(app)
    assert "IT security" in shown and "not assessed yet" in shown and "no journal evidence" in shown
    app.text_input(key="ask_question").input("Why is the weather so bad?").run()
    assert "could not tell which factor" in texts(app) and "no journal evidence" in texts(app)
    app.text_input(key="ask_question").input("why are we stuck?").run()  # the whole, in everyday words
    shown = texts(app)
    assert "Your decision tier is" in shown and "blocked by" in shown and "could not tell" not in shown


def test_an_example_question_is_asked_when_chosen_and_the_persons_own_words_replace_it(
    app_database, signer, store, assessed_user
):
    app = open_app(signer.issue(assessed_user), "ask")
    app.pills(key="ask_example").set_value("Why can't we do predictive maintenance?").run()
    assert app.text_input(key="ask_question").value == "Why can't we do predictive maintenance?"
    assert "Predictive maintenance" in texts(app) and "blocked by" in texts(app)
    read_out = [element.proto.body for element in app.get("html") if "fj-announcement" in element.proto.body]
    assert len(read_out) == 1 and "Answer: " in read_out[0] and "maintenance" in read_out[0].lower(), read_out
    app.text_input(key="ask_question").input("Why is our IT security so low?").run()
    assert "IT security" in texts(app) and app.pills(key="ask_example").value is None  # the example let go
    app.pills(key="ask_example").set_value("What should we fix first?").run()
    assert app.text_input(key="ask_question").value == "What should we fix first?"


def test_a_manager_sees_the_team_and_a_member_read_only_but_never_another_organisation(
    app_database, signer, store, make_user, assessed_user
):
    directory = OrganisationDirectory(store)
    org = f"org-{assessed_user}"
    directory.create(org, "Test Org")
    store.register_user(store.get_user(assessed_user).model_copy(update={"org_id": org}))
    infer(store, assessed_user, "data_quality", 25, 0.75, 1)  # refresh the member's roll-up row
    manager = make_user(store, org_id=org, display_name="Maria Manager")
    directory.assign_manager(org, manager)
    outsider = make_user(store, org_id="another-org", display_name="Outsider Otto")

    token = signer.issue(manager, kind="manager", org_id=org)
    app = open_app(token)
    shown = texts(app)
    assert "Test Org: team progress" in shown and "Anna Berg" in str(app.dataframe[0].value)
    assert "Outsider" not in str(app.dataframe[0].value)
    assert app.get("download_button")

    app.session_state["drill_user"] = outsider  # a crafted drill-down into another organisation
    app.switch_page("screens/overview.py").run()
    assert "Outsider" not in texts(app) and "Choose a person" in texts(app)

    app.session_state["drill_user"] = assessed_user
    app.switch_page("screens/overview.py").run()
    assert "Anna Berg · Where are we" in texts(app)
    app.switch_page("screens/blockers.py").run()
    assert "Invest here first" in texts(app) and [h.value for h in app.header] == ["Invest here first"]
    blocked = json.loads(app.get("plotly_chart")[0].proto.spec)["data"][0]  # its figures as text too
    table = app.table[0].value
    assert list(table["Factor"]) == blocked["y"] and list(table.iloc[:, 1]) == [f"{n:,}" for n in blocked["x"]]


def test_a_resume_link_cannot_open_manager_pages(app_database, signer, store, assessed_user):
    app = open_app(signer.issue(assessed_user))
    with pytest.raises(ValueError):
        app.switch_page("screens/team.py").run()


def test_continuing_the_conversation_goes_through_the_real_trigger(monkeypatch, trigger_client, catalog):
    """The answer is written where the deployed trigger listens; the other pages show its result."""
    monkeypatch.setenv("FJ_FIRESTORE_DATABASE", "(default)")
    _reset_caches()
    try:
        live = FactorJournalStore(trigger_client, catalog)
        user = f"conv-{datetime.now(UTC):%H%M%S%f}"
        live.register_user(UserProfile(user_id=user, display_name="Chat Person"))
        session = live.start_session(user)
        app = open_app(LinkSigner(LinkRecords(trigger_client)).issue(user, session), "conversation")
        [question] = [m.value for m in app.chat_message[0].text]  # people's and assistant's words: plain text
        assert question in {q for f in catalog.assessable_factors for q in f.elicitation_questions}
        app.chat_input[0].set_value("Honestly, our data is all over the place, 5 different systems.").run()

        [answer] = [tid for tid, d in live.session_turns(user, session) if d["role"] == "user"]
        wait_for_analysis(live, user, session, answer)  # the trigger's, or the sweep's when its delivery was lost

        def said_back() -> list[str]:
            return [b.key for b in app.button if b.key and b.key.startswith("ok-")]

        if not said_back():  # a cold trigger outlasted the page's wait:
            app.button(key="conversation_refresh").click().run()  # the person checks again
        agreeing = [b.label for b in app.button if b.label.startswith("That's right: ")]  # each names its factor
        assert said_back() and agreeing  # what was understood, said back
        assert live.summary(user).overall.total_factors_assessed >= 1
        turns = live.session_turns(user, session)
        assert [d["role"] for _, d in turns][:2] == ["assistant", "user"]
        assert turns[1][1]["extraction"]["status"] == "processed"
        overview = open_app(LinkSigner(LinkRecords(trigger_client)).issue(user, session))
        assessed = live.summary(user).overall.total_factors_assessed
        assert f"{assessed}/{len(catalog.assessable_factors)} factors" in texts(overview)
    finally:
        _reset_caches()
