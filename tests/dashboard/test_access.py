"""Access that holds under change, through the app (AppTest against the Firestore emulator).

An open session is re-checked on every run: a revoked link, a removed manager and an erased
person lose access on the next interaction (the app's clock is moved past the few seconds a
check is cached; nothing sleeps).  Links may name any page, and the token leaves the address.
People's words are shown as text, never rendered as Markdown, and a manager never sees them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta

import pytest
from streamlit.testing.v1 import AppTest
from test_app import APP, _reset_caches, infer, open_app, texts

from dashboard import context
from doubles import Clock
from factor_journal.conversation import MAX_TURN_TEXT_CHARS
from factor_journal.links import RECORD_TTL, LinkSigner
from factor_journal.organisation import OrganisationDirectory
from factor_journal.privacy import PersonalData
from factor_journal.repositories.links import LinkRecords
from factor_journal.validation import MAX_RATIONALE_CHARS

PIXEL = "![p](https://example.invalid/pixel.png)"
LINK = "[click me](https://example.invalid/phish)"
ANCHOR = '<a href="https://example.invalid/phish">Session expired: sign in again</a>'  # live in a Plotly label
HOSTILE = f"Our data is fine {PIXEL} really, see {LINK} or {ANCHOR} and $x^2$ :red[alarm]"


@pytest.fixture
def app_clock(monkeypatch) -> Iterator[Clock]:
    """The app's (fj-tests) link clock, moved by the test."""
    monkeypatch.setenv("FJ_FIRESTORE_DATABASE", "fj-tests")
    _reset_caches()
    clock = Clock()
    context.signer().clock = clock
    yield clock
    _reset_caches()


@pytest.fixture
def signer(firestore_client) -> LinkSigner:
    return LinkSigner(LinkRecords(firestore_client))


@pytest.fixture
def org(store, make_user):
    """An organisation with a manager and one assessed member whose words are hostile Markdown and HTML,
    said about data quality on two days (so its history page draws the timeline chart)."""
    directory = OrganisationDirectory(store)
    org_id = f"org-{make_user(store)}"
    directory.create(org_id, "Access Org")
    member = make_user(store, org_id=org_id, display_name="Mia Member")
    infer(store, member, "data_quality", 30, 0.7, 6, rationale=f'User said "{HOSTILE}"', excerpt=f"User: {HOSTILE}")
    infer(store, member, "data_quality", 20, 0.75, 3, rationale=f'User said "{HOSTILE}"', excerpt=f"User: {HOSTILE}")
    infer(store, member, "ml_expertise", 50, 0.7, 2)
    manager = make_user(store, org_id=org_id, display_name="Maria Manager")
    directory.assign_manager(org_id, manager)
    return directory, org_id, member, manager


def rendered_markdown(app: AppTest) -> list[str]:
    """Every string the app handed to a Markdown renderer."""
    elements = [*app.title, *app.header, *app.subheader, *app.markdown, *app.caption]
    elements += [*app.info, *app.warning, *app.success, *app.error]
    return [str(e.value) for e in elements] + [str(e.label) for e in app.expander]


def plain_text(app: AppTest) -> str:
    return "\n".join(str(e.value) for e in app.text)


def chart_text(app: AppTest) -> str:
    """Every label and hover text of the page's charts, as the browser receives them."""
    traces = [trace for chart in app.get("plotly_chart") for trace in json.loads(chart.proto.spec)["data"]]
    labels = [t for trace in traces for key in ("text", "hovertext", "name") for t in _listed(trace.get(key))]
    return "\n".join(str(label) for label in labels)


def _listed(value: object) -> list[object]:
    return [] if value is None else list(value) if isinstance(value, list) else [value]


def assert_no_live_markup(app: AppTest) -> None:
    for body in rendered_markdown(app):
        assert "](https://example.invalid" not in body, body
        assert "$x^2$" not in body and ":red[" not in body, body
    assert "<a href" not in chart_text(app)  # Plotly renders <a>, <span style>, <br> in labels


# --- Re-checked on every run -----------------------------------------------------------------------


def test_a_revoked_link_stops_working_on_the_next_interaction(app_clock, signer, store, org):
    _, _, member, _ = org
    token = signer.issue(member)
    app = open_app(token)
    assert app.metric
    signer.revoke(token)  # elsewhere: the CLI, another process
    app_clock.advance(RECORD_TTL)
    app.run()
    assert "withdrawn" in texts(app) and not app.metric and "Mia" not in texts(app)
    app.run()  # and it stays closed
    assert "withdrawn" in texts(app) and not app.metric


def test_an_expired_record_ends_an_open_session(app_clock, signer, store, firestore_client, org):
    _, _, member, _ = org
    token = signer.issue(member)
    app = open_app(token)
    link_id = context.signer().verify(token).link_id
    firestore_client.collection("resume_links").document(link_id).update(
        {"expires_at": app_clock() + timedelta(minutes=1)}
    )
    app_clock.advance(timedelta(minutes=1))
    app.run()
    assert "expired" in texts(app) and not app.metric


def test_a_removed_manager_loses_the_team_page_on_the_next_interaction(app_clock, signer, store, org):
    directory, org_id, _, manager = org
    app = open_app(signer.issue(manager, kind="manager", org_id=org_id))
    assert "Access Org: team progress" in texts(app)
    directory.remove_manager(org_id, manager)
    app_clock.advance(RECORD_TTL)
    app.run()
    assert "no longer opens anything" in texts(app) and not app.dataframe


def test_a_role_without_a_place_on_the_managers_list_opens_no_team_page(app_clock, signer, store, make_user, org):
    _, org_id, _, _ = org
    pretender = make_user(store, org_id=org_id, role="manager", display_name="Pat Pretender")
    app = open_app(signer.issue(pretender, kind="manager", org_id=org_id))
    assert "no longer opens anything" in texts(app) and not app.dataframe and "Mia" not in texts(app)


def test_an_erased_person_s_open_session_ends(app_clock, signer, store, firestore_client, org):
    _, _, member, _ = org
    app = open_app(signer.issue(member))
    assert app.metric
    PersonalData(firestore_client).erase(member)
    app_clock.advance(RECORD_TTL)
    app.run()
    assert not app.metric and "Mia" not in texts(app)


def _listed_people(app: AppTest) -> str:
    return "\n".join(str(frame.value) for frame in app.dataframe) + texts(app)


@pytest.mark.parametrize("leaves", ["moved", "erased"])
def test_someone_who_left_is_gone_from_the_team_page_on_the_next_interaction(
    app_clock, signer, store, make_user, firestore_client, org, leaves
):
    """The team's rows are kept for reruns, but never past a change of who is in the organisation."""
    directory, org_id, member, manager = org
    app = open_app(signer.issue(manager, kind="manager", org_id=org_id))
    assert "Mia Member" in _listed_people(app)
    if leaves == "moved":
        other = f"org-{make_user(store)}"
        directory.create(other, "Elsewhere")
        store.register_user(store.get_user(member).model_copy(update={"org_id": other}))
    else:
        PersonalData(firestore_client).erase(member)
    app.run()  # the manager's next interaction, well within the minute the rows are kept
    assert "Mia Member" not in _listed_people(app)  # the table; its CSV export is made from the same rows


def test_someone_who_joined_is_on_the_team_page_on_the_next_interaction(app_clock, signer, store, make_user, org):
    _, org_id, _, manager = org
    app = open_app(signer.issue(manager, kind="manager", org_id=org_id))
    make_user(store, org_id=org_id, display_name="Nia Newcomer")
    app.run()
    assert "Nia Newcomer" in _listed_people(app)


# --- Deep links ----------------------------------------------------------------------------------


def open_at(token: str, page: str) -> AppTest:
    """The app opened from ``/<page>?t=<token>``: the first run is for that page."""
    app = AppTest.from_file(APP, default_timeout=60)
    app.query_params["t"] = token
    app.switch_page(f"screens/{page}.py")
    app.run()
    assert not app.exception, app.exception
    return app


def test_a_link_opens_the_page_it_names_and_leaves_no_token_in_the_address(app_clock, signer, store, org):
    _, org_id, member, manager = org
    app = open_at(signer.issue(manager, kind="manager", org_id=org_id), "blockers")
    assert "Blockers across the organisation" in texts(app)
    assert "t" not in app.query_params
    app.run()  # the session goes on without the token in the address
    assert "Blockers across the organisation" in texts(app)

    app = open_at(signer.issue(member), "history")
    assert "Factor history" in texts(app) and "t" not in app.query_params


def test_a_bad_link_to_a_named_page_says_why(app_clock, store, org):
    app = open_at("not-a-token", "team")
    assert "not valid" in texts(app) and not app.dataframe


def test_a_link_s_section_enters_the_page_s_script_only_as_a_section_id(app_clock, signer, store, org):
    """The section a link names (``at``) is written into a script the browser runs: only a whole section id gets
    there; anything with more to it (a trailing line break, which ``re.match`` with ``$`` let through) scrolls
    nowhere and leaves the address with the token."""
    _, _, member, _ = org

    def scripts(section: str) -> list[str]:
        app = AppTest.from_file(APP, default_timeout=60)
        app.query_params["t"] = signer.issue(member)
        app.query_params["at"] = section
        app.run()
        assert not app.exception and "at" not in app.query_params and "t" not in app.query_params
        return [element.proto.body for element in app.get("html") if "<script" in element.proto.body]  # not styles

    assert any('getElementById("to-re-check")' in body for body in scripts("to-re-check"))
    for hostile in ("to-re-check\n", "to-re-check\n</script><img src=x>", "</script><script>alert(1)</script>"):
        assert scripts(hostile) == [], hostile


# --- People's words are text, and a manager does not see them -------------------------------------


def test_quoted_words_are_shown_as_text_on_the_persons_own_pages(app_clock, signer, store, org):
    _, _, member, _ = org
    token = signer.issue(member)
    app = open_app(token, "history")
    app.selectbox(key="history_factor").select("data_quality").run()
    assert_no_live_markup(app)
    assert PIXEL in plain_text(app) and LINK in plain_text(app) and ANCHOR in plain_text(app)
    assert "Our data is fine" in chart_text(app) and "&lt;a href" in chart_text(app)  # the words, as text

    app = open_app(token, "review")
    assert_no_live_markup(app)
    assert PIXEL in plain_text(app)

    app = open_app(token, "ask")
    app.text_input(key="ask_question").input("Why is data quality so low?").run()
    assert_no_live_markup(app)
    assert PIXEL in plain_text(app)


def test_a_hostile_display_name_is_not_markup(app_clock, signer, store, make_user, org):
    directory, org_id, _, manager = org
    hostile = make_user(store, org_id=org_id, display_name=f"Eve {PIXEL}")
    infer(store, hostile, "data_quality", 20, 0.75, 1)
    app = open_app(signer.issue(hostile))
    assert_no_live_markup(app)
    app = open_app(signer.issue(manager, kind="manager", org_id=org_id))
    app.session_state["drill_user"] = hostile
    app.switch_page("screens/overview.py").run()
    assert_no_live_markup(app)
    assert "Eve" in texts(app)


def test_a_manager_sees_progress_and_values_but_never_the_persons_words(app_clock, signer, store, org):
    _, org_id, member, manager = org
    app = open_app(signer.issue(manager, kind="manager", org_id=org_id))
    app.session_state["drill_user"] = member
    for page in ("overview", "capabilities", "history"):
        app.switch_page(f"screens/{page}.py").run()
        assert not app.exception
        shown = texts(app) + plain_text(app)
        assert "Mia Member" in shown
        assert "Our data is fine" not in shown and "User said" not in shown and "You said" not in shown, page
    app.switch_page("screens/history.py").run()
    app.selectbox(key="history_factor").select("data_quality").run()
    shown = texts(app) + plain_text(app)
    assert "→ 20" in shown and "Our data is fine" not in shown  # the value, not the words
    assert app.get("plotly_chart") and "Our data is fine" not in chart_text(app)  # nor in the chart's hover text
    assert "Our data is fine" not in "".join(chart.proto.spec for chart in app.get("plotly_chart"))
    with pytest.raises(ValueError):  # Ask why answers from the person's words: not a manager page
        app.switch_page("screens/ask.py").run()


def _review_for_whoever_signed_in() -> None:
    """The Review page's view for the session's viewer, without the navigation (which offers a manager no
    Review page): how a read-only subject would see it."""
    from dashboard import context
    from dashboard.views import review

    if context.sign_in() is not None:
        review.render()


def test_review_rendered_read_only_shows_none_of_the_persons_words(app_clock, signer, store, org):
    _, org_id, member, manager = org
    store.correct(member, "ml_expertise", 20, "Mia: we have no data scientists at all")  # her own reason
    infer(store, member, "ml_expertise", 80, 0.8, 0, rationale='User said "our BI team builds forecasts"')
    summary = store.summary(member)
    assert summary.conflicts and summary.unconfirmed_inferences  # both kinds of item carry her words

    app = AppTest.from_function(_review_for_whoever_signed_in, default_timeout=60)
    app.query_params["t"] = signer.issue(manager, kind="manager", org_id=org_id)
    app.run()  # signed in as the manager
    app.session_state["drill_user"] = member  # looking at a member: read-only
    app.run()
    assert not app.exception, app.exception
    shown = texts(app) + plain_text(app)
    assert "Mia Member · Review" in shown and "Data quality" in shown and "Machine learning expertise" in shown
    for words in ("Our data is fine", "User said", "forecasts", "data scientists"):
        assert words not in shown, words
    assert not [b for b in app.button if b.key and b.key.startswith(("keep-", "take-", "confirm-"))]
    assert not app.text_input  # no reason to give

    app = open_app(signer.issue(member), "review")  # the person herself sees her words and can act
    shown = texts(app) + plain_text(app)
    assert "Our data is fine" in shown and "forecasts" in shown
    assert {"keep-ml_expertise", "take-ml_expertise", "confirm-data_quality"} <= {b.key for b in app.button}


# --- One text limit in the input box ----------------------------------------------------------------


def test_the_answer_box_refuses_what_the_rules_refuse(app_clock, signer, store, org):
    """The box takes at most the limit (the browser counts as the rules do); blank text is not sent."""
    _, _, member, _ = org
    app = open_app(signer.issue(member), "conversation")
    assert app.chat_input[0].proto.max_chars == MAX_TURN_TEXT_CHARS
    session = store.session_ids(member)[0]
    before = store.session_turns(member, session)
    app.chat_input[0].set_value(" \n\t ").run()
    assert "was not sent" in texts(app)
    assert store.session_turns(member, session) == before


def test_the_reason_box_takes_no_more_than_a_reason_may_be(app_clock, signer, store, org):
    """Every box on Review that takes a person's reason stops where ``rationale_given`` would refuse."""
    _, _, member, _ = org
    app = open_app(signer.issue(member), "review")
    reasons = [box for box in app.text_input if box.key and box.key.startswith("reason-")]
    assert reasons and {box.proto.max_chars for box in reasons} == {MAX_RATIONALE_CHARS}


# --- Export ----------------------------------------------------------------------------------------


def test_a_person_is_offered_their_data_and_a_manager_is_not(app_clock, signer, store, org):
    _, org_id, member, manager = org
    app = open_app(signer.issue(member))
    assert [b.label for b in app.get("download_button")] == ["Download my data (JSON)"]
    app = open_app(signer.issue(manager, kind="manager", org_id=org_id))
    assert "Download my data (JSON)" not in [b.proto.label for b in app.get("download_button")]


def test_inferred_from_links_carry_no_token_and_open_the_factor(app_clock, signer, store, org):
    _, _, member, _ = org
    infer(store, member, "data_governance", 15, 0.7, 1)
    infer(store, member, "data_quality", 25, 0.75, 0, inferred_from=["data_governance"])
    app = open_app(signer.issue(member), "history")
    app.selectbox(key="history_factor").select("data_quality").run()
    [link] = [e.proto for e in app.get("page_link") if e.proto.label == "Data governance"]
    assert link.query_string == "factor=data_governance" and not link.external  # in-app, no token
    app.query_params["factor"] = "data_governance"  # what following the link does
    app.switch_page("screens/history.py").run()
    assert app.selectbox(key="history_factor").value == "data_governance"
