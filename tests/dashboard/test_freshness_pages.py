"""Issue 32 through AppTest on the emulator: a person whose answers were said long ago (seeded with old
``observed_at``) sees them aged and listed to re-check on the overview, confirms one in one click (one
transaction) and it is fresh again; the tier never drops silently; the history chart draws the decay; the team
page shows and filters the share to re-check from the roll-up rows; the overview is still one read."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta

from test_app import infer, open_app, texts

from factor_journal import freshness, runtime
from factor_journal.organisation import OrganisationDirectory

LONG_AGO = 420  # days: 14 months


def stale_person(store, make_user, org_id: str | None = None, name: str = "Olga Old") -> str:
    user = make_user(store, org_id=org_id, display_name=name, email=f"{uuid.uuid4().hex[:6]}@example.com")
    infer(store, user, "data_governance", 15, 0.8, LONG_AGO, rationale="No data catalog and nobody owns the data")
    infer(store, user, "data_quality", 20, 0.75, LONG_AGO - 10, rationale="Data scattered across 5 systems")
    infer(store, user, "historical_data_depth", 80, 0.8, LONG_AGO, rationale="Ten years of orders in the ERP")
    infer(store, user, "sensor_data", 60, 0.8, 5, rationale="Telemetry from the newest presses")
    return user


def test_the_overview_lists_answers_to_recheck_and_one_click_confirms_in_one_transaction(
    app_database, signer, store, make_user
):
    user = stale_person(store, make_user)
    stored = store.summary(user)
    aged = freshness.assess(store.catalog, store.graph, stored, datetime.now(UTC))
    assert [item.factor_id for item in aged.to_recheck] == ["data_quality", "data_governance"]  # most unlocks first
    app = open_app(signer.issue(user))
    shown = texts(app)
    governance = stored.factors["data_governance"]
    now_sure = aged.factors["data_governance"].confidence
    assert "To re-check" in shown and "2 answers said long ago count for less now" in shown
    assert (
        f"**Data governance**: low (15) · last said {governance.observed_at:%d %b %Y} (14 months ago) · "
        f"80% sure then, {now_sure:.0%} now" in shown
    )
    # "how sure" is today's: aged, with what was stored beside it; the never-ageing answer is as it was said
    assert f"**Data governance**: low (15) · {now_sure:.0%} sure (was 80%) · unconfirmed" in shown
    assert "**Historical data depth**: high (80) · 80% sure · unconfirmed" in shown
    assert any(m.label == "Confidence" and m.value == f"{aged.summary.overall.avg_confidence:.0%}" for m in app.metric)
    assert "Confidence is how sure we are today: what was said long ago counts for less." in shown  # not a tooltip
    # each answer's buttons name it: a screen reader hears which answer still holds
    assert app.button(key="recheck-confirm-data_governance").label == "Data governance still holds"
    assert app.button(key="recheck-talk-data_quality").label == "Talk about Data quality"
    # next best questions: the stale, high-impact answer first
    assert "_Data quality: to re-check: last said" in shown
    # the stored value and the journal never change because time passed
    assert store.summary(user).factors["data_governance"].current_confidence == 0.8

    stats = runtime.store().stats
    stats.reset()
    app.run()
    # the overview is still one document read, and the (empty) query for the conversation its questions follow
    assert stats.reads == 1 + 1 and stats.writes == 0

    stats.reset()
    app.button(key="recheck-confirm-data_governance").click().run()
    assert not app.exception, app.exception
    assert stats.transactions == 1  # the confirmation: one transaction
    assert "Confirmed Data governance: it counts as said today." in texts(app)
    confirmed = store.factor(user, "data_governance")
    assert confirmed.inference_status == "confirmed" and confirmed.current_confidence == 0.95  # their word
    assert datetime.now(UTC) - confirmed.observed_at < timedelta(minutes=2)
    after = texts(app)
    assert "1 answer said long ago counts for less now" in after
    assert "**Data governance**: low (15) · 95% sure · confirmed" in after  # fresh again
    assert not app.get("button") or all(b.key != "recheck-confirm-data_governance" for b in app.button)


def test_talk_about_it_opens_the_conversation_on_the_answer(app_database, signer, store, make_user):
    user = stale_person(store, make_user)
    app = open_app(signer.issue(user))
    app.button(key="recheck-talk-data_quality").click().run()
    assert not app.exception, app.exception
    session = app.session_state["conversation_session"]
    turns = store.session_turns(user, session)
    question = turns[-1][1]
    assert question["role"] == "assistant" and question["text"].startswith("You told us about data quality on ")
    assert store.catalog.factor("data_quality").elicitation_questions[0] in question["text"]


def test_a_tier_resting_on_old_answers_never_drops_silently(app_database, signer, store, make_user):
    user = make_user(store, display_name="Tim Tier")
    for factor in store.catalog.assessable_factors[:16]:  # 16 of 51: over 30% mapped at 0.7 -> low-risk pilots
        infer(store, user, factor.id, 50, 0.7, 300)
    stored = store.summary(user)
    assert stored.overall.decision_tier == "low_risk"
    app = open_app(signer.issue(user))
    [warning] = [w.value for w in app.warning]
    assert "Your answers reach Low-risk pilots, but some were said long ago" in warning
    assert "they support Exploratory" in warning and "to get Low-risk pilots back" in warning
    assert any(m.label == "Decision tier" and m.value == "Exploratory" for m in app.metric)
    note = freshness.assess(store.catalog, store.graph, stored, datetime.now(UTC)).tier_note
    assert note is not None and note.lapsed and note.confirm
    # the answers to confirm are listed with one click each
    keys = {b.key for b in app.button}
    assert {f"recheck-confirm-{fid}" for fid in note.confirm} <= keys
    stats = runtime.store().stats
    stats.reset()
    app.button(key="recheck-confirm-tier").click().run()  # "all N answers the tier rests on still hold"
    assert not app.exception, app.exception
    assert stats.transactions == len(note.confirm)  # one confirmation each, through the store
    assert f"Confirmed {len(note.confirm)} answers: Low-risk pilots rests on answers said today." in texts(app)
    assert all(store.factor(user, fid).inference_status == "confirmed" for fid in note.confirm)
    assert any(m.label == "Decision tier" and m.value == "Low-risk pilots" for m in app.metric)
    assert all("to keep it" in w.value for w in app.warning)  # kept; at most a warning that it will lapse again


def test_the_history_chart_draws_the_decay(app_database, signer, store, make_user):
    user = stale_person(store, make_user)
    app = open_app(signer.issue(user))
    app.query_params["factor"] = "data_governance"
    app.switch_page("screens/history.py").run()
    assert not app.exception, app.exception
    assert app.selectbox(key="history_factor").value == "data_governance"
    [figure] = [json.loads(chart.proto.spec) for chart in app.get("plotly_chart")]
    [decay] = [trace for trace in figure["data"] if trace["name"] == "Confidence as it ages %"]
    assert decay["y"][0] == 80 and decay["y"][-1] < 40 and decay["y"] == sorted(decay["y"], reverse=True)
    half_life = store.catalog.half_life("data_governance").text  # the catalog's words, whatever they are
    assert "to re-check" in texts(app) and f"ageing with a half-life of {half_life}" in texts(app)


def test_the_team_page_shows_and_filters_the_share_to_recheck_from_the_rows(app_database, signer, store, make_user):
    org = f"org-fresh-{uuid.uuid4().hex[:6]}"
    directory = OrganisationDirectory(store)
    directory.create(org, "Fresh Org")
    stale_person(store, make_user, org, "Olga Old")
    new = make_user(store, org_id=org, display_name="Nora New", email="nora@example.com")
    infer(store, new, "data_quality", 60, 0.8, 3)
    infer(store, new, "sensor_data", 60, 0.8, 2)
    manager = make_user(store, org_id=org, display_name="Maria Manager")
    directory.assign_manager(org, manager)
    stats = runtime.store().stats
    stats.reset()
    app = open_app(signer.issue(manager, kind="manager", org_id=org))
    table = app.dataframe[0].value
    share = dict(zip(table["Person"], table["To re-check"], strict=True))
    assert share == {"Nora New": "0%", "Olga Old": "50%"}  # 2 of Olga's 4 answers are due
    # a share of answers, named as one, and whose they are: not "33% · 1 person" read as one figure
    metric = next(m for m in app.metric if "re-check" in m.label)
    assert (metric.label, metric.value, metric.delta) == ("Answers to re-check", "33%", "from 1 person")
    assert metric.proto.help.startswith("Of the 6 answers given in the organisation, 2 were said so long ago")
    assert stats.reads < 20  # the organisation, its roll-up shards, the link and manager checks: no per-person read
    app.toggle(key="team_stale").set_value(True).run()
    assert list(app.dataframe[0].value["Person"]) == ["Olga Old"]
    app.radio(key="team_stale_share").set_value(0.5).run()
    assert list(app.dataframe[0].value["Person"]) == ["Olga Old"]
    assert "Of the answers of the people shown, 50% are due for a re-check." in texts(app)
