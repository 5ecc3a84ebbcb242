"""Issue 11 through AppTest on the emulator: what we know, time axes, human labels, the team page at
2,000 people, turn statuses on the conversation page, the one-click unsubscribe page."""

from __future__ import annotations

import json
import re
import uuid
from datetime import UTC, datetime, timedelta

from test_app import infer, open_app, texts

from dashboard import charts
from dashboard.safe_text import md
from factor_journal.models import UserProfile
from factor_journal.organisation import OrganisationDirectory
from factor_journal.reminders import UnsubscribeLinks
from factor_journal.rollup import PersonRow, aged


def figures(app) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in app.get("plotly_chart")]


# Where are we: what we know ----------------------------------------------------------------------


def test_what_we_know_lists_each_factor_by_category_from_the_summary_alone(app_database, signer, store, assessed_user):
    store.confirm(assessed_user, "sensor_data")
    app = open_app(signer.issue(assessed_user))
    shown = texts(app)
    assert "What we know" in shown
    assert "**Data readiness** · 4 of" in shown  # grouped by category, with how many of the category are known
    # how sure is today's: 20 days into a 12-month half-life, 70% counts for 67% (freshness, issue 32)
    assert "**Data governance**: low (15) · 67% sure (was 70%) · unconfirmed · said" in shown
    confirmed = store.factor(assessed_user, "sensor_data")
    assert f"**Sensor and machine data**: mid (60) · {confirmed.current_confidence:.0%} sure · confirmed" in shown
    said = (datetime.now(UTC) - timedelta(days=20)).strftime("%d %b %Y")
    assert f"Data governance**: low (15) · 67% sure (was 70%) · unconfirmed · said {said}" in shown  # when said
    assert "AI readiness score" in shown and "computed" in shown
    [link] = app.get("page_link")
    assert "Review the 4 unconfirmed" in link.proto.label and link.proto.page.endswith("review")
    stats_before = __import__("factor_journal").runtime.store().stats
    stats_before.reset()
    app.run()
    assert stats_before.reads == 1 + 1  # still one document read, and the (empty) query for their conversation


def test_what_we_know_in_the_empty_state(app_database, signer, store, make_user):
    app = open_app(signer.issue(make_user(store, display_name="New Person")))
    assert "Nothing yet: what you tell us in the conversation will be listed here" in texts(app)
    assert not app.get("page_link")


def test_a_manager_reading_a_member_gets_no_review_link(app_database, signer, store, make_user, assessed_user):
    org = f"org-{uuid.uuid4().hex[:6]}"
    OrganisationDirectory(store).create(org, "Read-only Org")
    store.register_user(store.get_user(assessed_user).model_copy(update={"org_id": org}))
    manager = make_user(store, org_id=org, display_name="Mia Manager")
    OrganisationDirectory(store).assign_manager(org, manager)
    app = open_app(signer.issue(manager, kind="manager", org_id=org))
    app.session_state["drill_user"] = assessed_user
    app.switch_page("screens/overview.py").run()
    assert "What we know" in texts(app) and not app.get("page_link")


# Factor history: default factor, day axes, names in rationales -------------------------------------


def test_history_opens_on_the_factor_changed_last_on_a_day_axis(app_database, signer, store, assessed_user):
    infer(store, assessed_user, "data_quality", 35, 0.8, 2, rationale="They started deduplicating customers")
    app = open_app(signer.issue(assessed_user), "history")
    assert app.selectbox(key="history_factor").value == "data_quality"  # not the composite, though derived later
    [figure] = figures(app)
    axis = figure["layout"]["xaxis"]
    assert axis["type"] == "date" and axis["dtick"] in (charts.DAY_MS, 7 * charts.DAY_MS)
    assert all(len(x) == 10 for x in figure["data"][0]["x"])  # whole days, never times of day


def test_history_of_a_single_day_is_a_sentence_not_a_broken_axis(app_database, signer, store, make_user):
    user = make_user(store, display_name="One Day")
    infer(store, user, "data_quality", 20, 0.7, 3)
    infer(store, user, "data_governance", 30, 0.7, 3)
    app = open_app(signer.issue(user), "history")
    app.selectbox(key="history_factor").select("ai_readiness_score").run()
    shown = re.sub(r"\]\(history\?[^)]*\)", "]", texts(app))  # the text a person reads, without link targets
    assert "Everything below was said on" in shown and not app.get("plotly_chart")
    assert "Recomputed from Data governance, Data quality" in shown
    assert "data_governance" not in shown and "data_quality" not in shown  # names, never ids
    assert "recomputed from its parts" in shown  # the kind of entry, in words
    # said today only, by an answer that ages: the same sentence, no chart of one day, no caption of a line not drawn
    infer(store, user, "sensor_data", 60, 0.7, 0)
    app.run()  # the factor is listed once it has a history
    app.selectbox(key="history_factor").select("sensor_data").run()
    shown = texts(app)
    assert "Everything below was said on" in shown and not app.get("plotly_chart") and "dashed line" not in shown
    store.retract(user, "sensor_data", "It does not apply to us")  # withdrawn: no confidence or standing to repeat
    app.run()
    shown = texts(app)
    [now] = [line for line in shown.splitlines() if line.startswith("**Now:**")]
    assert now.startswith("**Now:** not assessed · last changed")
    assert "confidence" not in now and now.count("assessed") == 1  # said once, with no 0% for no value


# The team page ----------------------------------------------------------------------------------


def seed_team(
    store, people: int, *, days: int = 0, needs_attention: bool = False, blocked: list[dict] | None = None
) -> tuple[str, str]:
    """An organisation of ``people`` roll-up rows written with their figures (``put_rows``: as the pipeline keeps
    them); ``blocked``: what blocks every one of them (default: one capability, for every other person)."""
    org = f"org-{people}-{uuid.uuid4().hex[:6]}"
    directory = OrganisationDirectory(store)
    directory.create(org, f"Org of {people}")
    manager = f"{org}-manager"
    store.register_user(UserProfile(user_id=manager, display_name="Maria Manager", org_id=org))
    directory.assign_manager(org, manager)
    tiers = [t.id for t in store.catalog.decision_tiers]
    categories = [c.id for c in store.catalog.categories]
    now = datetime.now(UTC)
    rows = []
    for index in range(people):
        user = f"{org}-p{index:04d}"
        completeness = (index * 37 % 100) / 100
        row = PersonRow(
            user_id=user,
            display_name=f"Person {index:04d}",
            email=f"p{index}@example.com",
            completeness=completeness,
            avg_confidence=0.5,
            assessed=int(completeness * 44),
            total=44,
            decision_tier=tiers[index % len(tiers)],
            unconfirmed=index % 5,
            last_active=None if index % 10 == 9 else now - timedelta(days=index % 30),
            categories={c: ((index + i * 13) % 100) / 100 for i, c in enumerate(categories)},
            blocked=blocked
            if blocked is not None
            else [{"archetype_id": store.catalog.archetypes[0].id, "blockers": ["data_quality", "sensor_data"]}]
            if index % 2
            else [],
            needs_attention=3 if needs_attention and index == 0 else 0,
        )
        rows.append(aged(row, store.catalog, now))
    store.organisations.put_rows(org, rows)
    for day in range(days):
        directory.record_day(org, now - timedelta(days=days - 1 - day))
    return org, manager


def test_team_table_speaks_in_names_and_counts_are_whole_numbers(app_database, signer, store):
    org, manager = seed_team(store, 12, needs_attention=True)
    app = open_app(signer.issue(manager, kind="manager", org_id=org))
    table = app.dataframe[0].value
    assert set(table["Tier"]) <= {t.name for t in store.catalog.decision_tiers}
    assert "exploratory" not in set(table["Tier"]) and "Exploratory" in set(table["Tier"])
    assert "not yet" in set(table["Last active"]) and "None" not in table.to_string()
    assert table["Needs attention"].sum() == 3
    assert any(m.label == "Answers needing attention" and m.value == "3" for m in app.metric)
    # Person 0000 has assessed nothing: no confidence in the table, and not a 0% in the average (the others: 50%)
    assert table.loc[table["Person"] == "Person 0000", "Confidence"].eq("no answers yet").all()
    assert table.loc[table["Person"] != "Person 0000", "Confidence"].eq("50%").all()
    # whole percents in the data itself (a screen reader reads the grid's data, never a progress bar's format)
    assert table["Mapped"].str.fullmatch(r"\d{1,3}%").all() and table["To re-check"].notna().all()
    assert [h.value for h in app.header][0] == "People"  # the grid's heading, before it
    # wider than a phone: the names stay in place while the figures scroll sideways, and a cue names the columns
    assert json.loads(app.dataframe[0].proto.columns)["Person"]["pinned"] is True
    assert "The table scrolls sideways, the names staying in place: Mapped, Confidence, Tier" in texts(app)
    assert any(m.label == "Average confidence" and m.value == "50%" for m in app.metric)
    tiers, mapped, held = figures(app)
    assert tiers["layout"]["yaxis"]["dtick"] >= 1 and isinstance(tiers["layout"]["yaxis"]["dtick"], int)
    assert tiers["layout"]["yaxis"]["tickformat"] == ",d" and mapped["layout"]["xaxis"]["tickformat"] == ",d"
    assert [bar["y"][0] for bar in held["data"]] == [store.graph.name("data_quality")]  # names, people held back
    assert held["data"][0]["x"][:2] == [6, 6]
    assert "not active yet" in texts(app)  # the gone-quiet list for someone never active
    assert app.selectbox(key="drill_choice").options[0] == "Person 0000"
    store.register_user(UserProfile(user_id=f"{org}-p0000", display_name="Person 0000", org_id=org))
    app.selectbox(key="drill_choice").select(f"{org}-p0000").run()
    assert app.button(key="drill_open").label == "Open Person 0000's pages"  # not one more "Open"
    app.button(key="drill_open").click().run()
    assert "Person 0000 · Where are we" in texts(app)  # the person's pages, read-only


def test_the_team_page_without_needs_attention_rows_hides_the_column(app_database, signer, store):
    org, manager = seed_team(store, 3)
    app = open_app(signer.issue(manager, kind="manager", org_id=org))
    assert "Needs attention" not in app.dataframe[0].value.columns
    assert not any(m.label == "Answers needing attention" for m in app.metric)


def test_a_team_of_2000_filters_pages_and_aggregates(app_database, signer, store):
    org, manager = seed_team(store, 2000)
    app = open_app(signer.issue(manager, kind="manager", org_id=org))
    assert "Showing all 2,000 people." in texts(app)
    assert len(app.dataframe[0].value) == 25 and "People 1–25 of 2,000" in texts(app)
    assert (
        len(app.get("plotly_chart")) == 3
    )  # tiers, mapped by category, what holds people back: no per-person heat map
    _, mapped, _ = figures(app)
    per_category = [sum(values) for values in zip(*(bar["x"] for bar in mapped["data"]), strict=True)]
    assert per_category == [2000] * len(store.catalog.categories)  # every person in one bucket per category
    assert len(app.selectbox(key="drill_choice").options) == 25  # only the page's people, not 2,000 options

    app.number_input(key="team_page").set_value(3).run()
    assert "People 51–75 of 2,000" in texts(app)
    app.text_input(key="team_search").input("Person 0042").run()
    assert list(app.dataframe[0].value["Person"]) == ["Person 0042"] and "Showing 1 of 2,000 people." in texts(app)
    app.text_input(key="team_search").input("").run()
    app.multiselect(key="team_tiers").select("high_risk").run()
    table = app.dataframe[0].value
    assert set(table["Tier"]) == {"High-risk investments"} and "Showing 500 of 2,000 people." in texts(app)
    app.multiselect(key="team_tiers").unselect("high_risk").run()
    app.toggle(key="team_quiet").set_value(True).run()
    shown = texts(app)
    team = OrganisationDirectory(store).team(manager, org)
    assert f"Showing {team.quiet:,} of 2,000 people." in shown
    app.selectbox(key="team_sort").select("Longest quiet first").run()
    assert app.dataframe[0].value["Last active"].iloc[0] == "not yet"
    app.text_input(key="team_search").input("nobody like this").run()
    shown = texts(app)
    assert "Nobody matches these filters." in shown
    headings = {h.value for h in app.header}  # the organisation's own sections, whatever is filtered
    assert {"Progress over time", "Gone quiet"} <= headings and "Decision tiers" not in headings
    assert not app.dataframe  # what the filters select: nobody


def test_progress_over_time_today_alone_is_a_sentence_earlier_days_a_day_axis(app_database, signer, store):
    org, manager = seed_team(store, 5, days=1)
    shown = texts(open_app(signer.issue(manager, kind="manager", org_id=org)))
    assert re.search(r"Today, \d\d:\d\d UTC \(as above\): \d+% mapped on average", shown)
    assert "The chart starts once the nightly roll-up has recorded a day before today." in shown
    org, manager = seed_team(store, 5, days=3)
    app = open_app(signer.issue(manager, kind="manager", org_id=org))
    trend = figures(app)[-1]
    assert trend["layout"]["xaxis"]["type"] == "date" and trend["layout"]["xaxis"]["dtick"] == charts.DAY_MS
    assert len(trend["data"][0]["x"]) == 3 and all(len(x) == 10 for x in trend["data"][0]["x"])


def test_progress_over_time_ends_with_the_figures_of_the_headline_not_an_earlier_record(app_database, signer, store):
    """The day's nightly figure was recorded hours ago: today's point is the live figure the headline shows, and
    the earlier days say they are the nightly roll-up's."""
    org, manager = seed_team(store, 5, days=2)
    today = datetime.now(UTC).strftime("%Y-%m-%d")
    daily = store.org_ref(org).collection("daily")
    daily.document(today).update({"avg_completeness": 0.01, "avg_confidence": 0.99})  # since then, people answered
    app = open_app(signer.issue(manager, kind="manager", org_id=org))
    metrics = {m.label: m.value for m in app.metric}
    trend = figures(app)[-1]
    mapped, confidence = trend["data"]
    assert f"{mapped['y'][-1]:.0f}%" == metrics["Average mapped"]
    assert f"{confidence['y'][-1]:.0f}%" == metrics["Average confidence"]
    rows = app.table[-1].value  # the chart as a table: the same points, today's named as the headline's
    last = rows.iloc[-1]
    assert len(rows) == 2 and last["Day"].startswith("Today, ")
    assert (last["Mapped on average"], last["Average confidence"]) == (
        metrics["Average mapped"],
        metrics["Average confidence"],
    )
    assert "Earlier days: as the nightly roll-up recorded them that day." in texts(app)


# Conversation: what became of each answer ------------------------------------------------------------


def test_the_conversation_says_plainly_what_became_of_each_answer(app_database, signer, store, make_user):
    user = make_user(store, display_name="Status Person")
    session = store.start_session(user)
    start = datetime.now(UTC) - timedelta(minutes=30)
    retry_at = datetime.now(UTC) + timedelta(minutes=5)
    statuses = ["processed", "processing", "failed", "needs_attention", "invalid", "rate_limited", "no_update"]
    for index, status in enumerate(statuses):
        extraction = {"status": status}
        if status == "failed":
            extraction["next_attempt_at"] = retry_at
        store.turns(user, session).document(f"t{index}").set(
            {
                "role": "user",
                "text": f"answer {index}",
                "created_at": start + timedelta(minutes=index),
                "extraction": extraction,
            }
        )
    app = open_app(signer.issue(user, session), "conversation")
    shown = "\n".join(c.value for c in app.caption)
    assert "Being analysed" in shown
    assert "it will be retried automatically" in shown and f"{retry_at:%H:%M} UTC" in shown
    assert "The team will look at it" in shown
    assert "this text could not be analysed" in shown
    assert "not analysed: you have sent many answers" in shown
    assert "Noted — nothing to change in the assessment." in shown  # nothing understood: said so
    assert "your assessment has been updated" not in shown  # an earlier, simply done answer needs no caption
    assert app.button(key="conversation_refresh")  # something is still pending: a way to look again


def test_the_conversation_reopens_the_session_last_spoken_in_beside_ones_never_spoken_in(
    app_database, signer, store, make_user
):
    user = make_user(store, display_name="Two Sessions")
    now = datetime.now(UTC)
    spoken = store.start_session(user, "spoken-in", started_at=now - timedelta(days=2))
    asked_at = now - timedelta(hours=2)
    store.turns(user, spoken).document("q").set(
        {"role": "assistant", "text": "How far back does your sales history go?", "created_at": asked_at}
    )
    store.turns(user, spoken).document("a").set(
        {
            "role": "user",
            "text": "Back to 2015, all in the ERP.",
            "created_at": asked_at + timedelta(seconds=30),
            "extraction": {"status": "processed"},
        }
    )
    store.client.document(f"users/{user}/conversations/{spoken}").update({"last_active": asked_at})
    store.start_session(user, "never-spoken-in", started_at=now - timedelta(days=3))  # no last_active at all
    app = open_app(signer.issue(user), "conversation")  # a link that names no session
    assert "Back to 2015, all in the ERP." in texts(app)


# One-click unsubscribe ---------------------------------------------------------------------------------


def test_the_unsubscribe_link_asks_first_and_its_button_opts_out_without_signing_in(
    app_database, signer, store, make_user
):
    user = make_user(store, display_name="Una Subscriber", email="una@example.com")
    token = UnsubscribeLinks.like(signer).token(user)
    app = open_app(None)
    app.query_params["u"] = token
    app.run()  # opening the link (as a mail scanner or a link previewer does) only asks
    assert "Do you want to stop the reminder emails" in texts(app) and "You are unsubscribed" not in texts(app)
    app.run()
    assert store.get_user(user).reminders_opt_out is False
    app.button(key="unsubscribe").click().run()
    assert "You are unsubscribed" in texts(app) and md("una@example.com") in texts(app)  # as text, not markup
    assert store.get_user(user).reminders_opt_out is True
    app.run()  # a rerun changes nothing and still says so
    assert "You are unsubscribed" in texts(app)


def test_a_bad_unsubscribe_link_changes_nothing_and_cannot_open_the_app(app_database, signer, store, make_user):
    user = make_user(store, display_name="Kept Subscriber")
    token = UnsubscribeLinks.like(signer).token(user)
    for bad in (token[:-2] + ("AA" if not token.endswith("AA") else "BB"), signer.issue(user), "garbage"):
        app = open_app(None)
        app.query_params["u"] = bad
        app.run()
        assert "not valid" in texts(app) and not app.button  # nothing to press
    assert store.get_user(user).reminders_opt_out is False
    signed_in = open_app(token)  # an unsubscribe token is no sign-in
    assert "not valid" in texts(signed_in) and not signed_in.metric


def test_rows_kept_for_reruns_are_never_shown_to_someone_no_longer_a_manager(app_database, signer, store):
    org, manager = seed_team(store, 30)
    app = open_app(signer.issue(manager, kind="manager", org_id=org))
    assert "Showing all 30 people." in texts(app)
    OrganisationDirectory(store).remove_manager(org, manager)  # off the organisation's managers list
    app.run()  # the rows are still kept in the process; the manager check runs first
    assert "Showing all 30 people." not in texts(app) and not app.dataframe


def test_a_top_ten_cut_through_a_tie_names_the_factors_level_with_its_last_bar(app_database, signer, store):
    """Twelve factors hold back all four people: ten bars, the two blocking the most project types first (the
    Blockers page's order among equals), and a sentence naming the two level with the last bar."""
    catalog, graph = store.catalog, store.graph
    twelve = [f.id for f in catalog.assessable_factors[:12]]
    first, second = catalog.archetypes[0].id, catalog.archetypes[1].id
    most = [twelve[7], twelve[11]]  # these two block a second kind of project too
    blocked = [{"archetype_id": first, "blockers": twelve}, {"archetype_id": second, "blockers": most}]
    org, manager = seed_team(store, 4, blocked=blocked)
    app = open_app(signer.issue(manager, kind="manager", org_id=org))
    held = figures(app)[2]["data"][0]
    assert held["x"] == [4] * 10 and held["y"][:2] == [graph.name(f) for f in most]
    level = sorted(set(twelve) - set(most))  # the others, by id
    assert held["y"][2:] == [graph.name(f) for f in level[:8]]
    left_out = [graph.name(f) for f in level[8:]]
    shown = texts(app)
    assert f"Also holding back 4 people each, as many as the last bar: {left_out[0]} and {left_out[1]}." in shown
    assert "each person counted once" in shown and "Blockers counts each kind of project" in shown

    app.switch_page("screens/blockers.py").run()
    blocked_chart = figures(app)[0]["data"][0]
    assert blocked_chart["x"] == [8, 8] + [4] * 8 and blocked_chart["y"][:2] == held["y"][:2]  # same order among equals
    shown = texts(app)
    assert "Also blocking 4 times each, as often as the last bar:" in shown
    assert "person × project type" in shown and "Team progress counts people instead" in shown


def test_the_team_charts_figures_read_as_text_under_each_chart(app_database, signer, store):
    org, manager = seed_team(store, 12)
    app = open_app(signer.issue(manager, kind="manager", org_id=org))
    assert [e.label for e in app.expander] == ["The chart as a table"] * 3  # tiers, mapped by category, held back
    tiers_chart, mapped_chart, held_chart = figures(app)
    tiers, mapped, held = (table.value for table in app.table)
    assert list(tiers["Decision tier"]) == tiers_chart["data"][0]["x"]  # the chart's own figures, as text
    assert list(tiers["People"]) == [f"{n:,}" for n in tiers_chart["data"][0]["y"]]
    categories = [c.name for c in store.catalog.categories]
    assert list(mapped["Category"]) == categories
    for bar in mapped_chart["data"]:  # each bucket's range spelled out, its counts as the segments carry them
        assert list(mapped[f"{bar['name']} mapped"]) == [f"{n:,}" for n in bar["x"]]
        assert [t for t in bar["text"] if t] == [f"{n:,}" for n in bar["x"] if n]
    names = [store.graph.name("data_quality"), store.graph.name("sensor_data")]
    assert list(held["Factor"]) == held_chart["data"][0]["y"] == names
    assert list(held["People held back"]) == ["6", "6"]
    headings = [h.value for h in app.header]  # h2 sections under the page's h1, none an h3
    assert {"People", "Decision tiers", "Mapped by category", "What holds people back"} <= set(headings)
    assert not app.subheader
