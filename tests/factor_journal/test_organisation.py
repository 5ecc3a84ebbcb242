"""Organisations on the emulator: managers see only their own, rows and figures scale, snapshots, CSV."""

from __future__ import annotations

import csv
import io
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from google.cloud import firestore

from factor_journal.figures import OrgFigures, drift, rebuild
from factor_journal.models import InferredUpdate, UserProfile
from factor_journal.organisation import (
    TEAM_SORTS,
    DamagedOrganisationError,
    NotAManagerError,
    Organisation,
    OrganisationDirectory,
    OrgDay,
    TeamFilter,
    TeamView,
    blockers,
    cut_with_ties,
    progress,
    sort_people,
)
from factor_journal.rollup import FIGURE_SHARDS, BlockedRow, PersonRow, aged, encode_said, shard_of
from factor_journal.team_export import team_csv
from factor_journal.upkeep import RowUpkeep


def reading(factor: str, value: float, confidence: float = 0.7) -> InferredUpdate:
    return InferredUpdate(factor_id=factor, value=value, confidence=confidence, rationale="said so")


@pytest.fixture
def two_orgs(small_store, make_user):
    directory = OrganisationDirectory(small_store)
    a, b = f"org-a-{uuid.uuid4().hex[:6]}", f"org-b-{uuid.uuid4().hex[:6]}"
    directory.create(a, "Alpha")
    directory.create(b, "Beta")
    members_a = [make_user(small_store, org_id=a, display_name=f"A{i}") for i in range(3)]
    member_b = make_user(small_store, org_id=b, display_name="B0")
    manager_a = make_user(small_store, org_id=a, display_name="Manager A")
    directory.assign_manager(a, manager_a)
    return directory, a, b, members_a, member_b, manager_a


def figures_agree_with_rows(store, org: str) -> bool:
    """The stored figures equal a sum over the stored rows (every shard)."""
    rows = [PersonRow.model_validate(s.to_dict()) for s in store.org_ref(org).collection("people").stream()]
    return drift(store.organisations.figures(org), rebuild(rows)) == {}


def test_a_manager_sees_their_organisation_and_no_other(small_store, two_orgs):
    directory, a, b, members_a, member_b, manager_a = two_orgs
    small_store.record_inference(members_a[0], reading("quality", 65))
    team = directory.team(manager_a, a)
    assert team.people == 3  # the manager is not in their own table nor counted
    page = directory.table_page(team, TeamFilter(), "Name", 1, 25).rows
    assert {p.user_id for p in page} == set(members_a)
    assert next(p for p in page if p.user_id == members_a[0]).assessed == 1
    with pytest.raises(NotAManagerError):
        directory.team(manager_a, b)
    with pytest.raises(NotAManagerError):
        directory.team(members_a[1], a)  # a member is not a manager
    assert directory.in_organisation(a, member_b) is None
    assert directory.in_organisation(a, members_a[0]).user_id == members_a[0]


def test_a_manager_must_belong_to_the_organisation(small_store, two_orgs, make_user):
    directory, a, b, *_ = two_orgs
    outsider = make_user(small_store, org_id=b)
    with pytest.raises(Exception, match="belongs to"):
        directory.assign_manager(a, outsider)


def test_rows_follow_every_change_in_the_same_transaction(small_store, two_orgs):
    directory, a, _, members_a, _, manager_a = two_orgs
    user = members_a[1]
    small_store.record_inference(user, reading("quality", 65, 0.8))
    small_store.record_inference(user, reading("skills", 55, 0.8))
    row = next(p for p in directory.rows(a) if p.user_id == user)
    summary = small_store.summary(user)
    assert row.completeness == summary.overall.completeness
    assert row.decision_tier == summary.overall.decision_tier
    assert row.unconfirmed == 2 and row.can_evaluate == summary.capabilities.can_evaluate
    small_store.confirm(user, "quality")
    assert next(p for p in directory.rows(a) if p.user_id == user).unconfirmed == 1
    assert figures_agree_with_rows(small_store, a)  # the figures moved with every row, in its transaction
    team = directory.team(manager_a, a)
    assert (team.people, team.started(), team.figures.assessed()) == (3, 1, 2)


def seeded(store, org: str, people: int, now: datetime) -> list[PersonRow]:
    """``people`` rows written through ``put_rows`` (with their figures), aged to ``now``."""
    tiers = [t.id for t in store.catalog.decision_tiers]
    rows = [
        aged(
            PersonRow(
                user_id=f"{org}-{index:04d}",
                display_name=f"P{index:04d}",
                email=f"p{index}@example.com",
                completeness=(index % 10) / 10,
                assessed=index % 4,
                unconfirmed=index % 5,
                decision_tier="low_risk" if index % 4 else "exploratory",
                avg_confidence=0.6,
                last_active=None if index % 7 == 0 else now - timedelta(days=index % 12),
                said=encode_said([("quality", 0.8, now - timedelta(days=400))] if index % 3 == 0 else []),
                categories={"data": (index % 5) / 5},
            ),
            store.catalog,
            now,
        )
        for index in range(people)
    ]
    store.organisations.put_rows(org, rows)
    assert {row.tier for row in rows} <= set(tiers)
    return rows


def test_team_reads_stay_constant_for_two_thousand_people(small_store, make_user):
    directory = OrganisationDirectory(small_store)
    org = f"org-big-{uuid.uuid4().hex[:6]}"
    directory.create(org, "Big")
    manager = make_user(small_store, org_id=org)
    directory.assign_manager(org, manager)
    rows = seeded(small_store, org, 2000, datetime.now(UTC))
    small_store.stats.reset()
    team = directory.team(manager, org)
    page = directory.table_page(team, TeamFilter(), "Name", 1, 25)
    assert team.people == 2000 and len(page.rows) == 25 and page.pages == 80
    tiers = {tier: n for tier, n in team.tier_distribution().items() if n}
    assert tiers == {tier: sum(row.tier == tier for row in rows) for tier in tiers}
    # the manager check (the organisation, the profile), the organisation again, its figures, the page's rows
    assert small_store.stats.reads <= 3 + FIGURE_SHARDS + 25
    assert figures_agree_with_rows(small_store, org)


def test_the_table_filters_sorts_and_pages_by_queries_as_the_rows_say(small_store, make_user):
    """Each filter and order, read a page at a time through Firestore, gives the people a filter of the rows in
    memory gives, in the same order; a page read from where the last one ended is the page read by skipping."""
    directory = OrganisationDirectory(small_store)
    org = f"org-q-{uuid.uuid4().hex[:6]}"
    directory.create(org, "Queried")
    manager = make_user(small_store, org_id=org)
    directory.assign_manager(org, manager)
    now = datetime.now(UTC)
    rows = seeded(small_store, org, 90, now)
    team = directory.team(manager, org)
    choices = {
        "everyone": (TeamFilter(), lambda r: True),
        "a tier": (TeamFilter(tiers=frozenset({"low_risk"})), lambda r: r.tier == "low_risk"),
        "quiet": (TeamFilter(quiet_only=True), lambda r: r.quiet),
        "to re-check": (TeamFilter(stale_only=True), lambda r: r.due > 0),
        "half to re-check": (TeamFilter(stale_only=True, min_stale_share=0.5), lambda r: r.due_share >= 0.5),
        "two tiers": (TeamFilter(tiers=frozenset({"low_risk", "exploratory"})), lambda r: r.tier != "medium_risk"),
        "quiet and to re-check": (TeamFilter(quiet_only=True, stale_only=True), lambda r: r.quiet and r.due > 0),
        "a name": (TeamFilter(search=" p004"), lambda r: r.display_name.startswith("P004")),
        "quiet and named": (TeamFilter(quiet_only=True, search="P0"), lambda r: r.quiet),
    }
    for name, (chosen, wanted) in choices.items():
        expected = [row for row in rows if wanted(row)]
        assert directory.selected(team, chosen) == len(expected), name
        for order in TEAM_SORTS:
            listed = directory.effective_order(chosen, order)  # a name search lists names in order
            ordered = [row.user_id for row in sort_people(expected, listed)]
            cursors: dict = {}
            first = directory.table_page(team, chosen, order, 1, 20, cursors)
            second = directory.table_page(team, chosen, order, 2, 20, cursors)  # from where the first ended
            skipped = directory.table_page(team, chosen, order, 2, 20)  # by skipping the first 20
            pages = first.rows + (second.rows if second.page == 2 else [])  # a page past the last shows the last
            assert [r.user_id for r in pages] == ordered[:40], (name, order)
            assert [r.user_id for r in skipped.rows] == [r.user_id for r in second.rows]
        assert not chosen.search or directory.effective_order(chosen, "Least mapped first") == "Name"
        exported = list(csv.DictReader(io.StringIO(team_csv(directory.export(team, chosen)))))
        assert [r["user_id"] for r in exported] == [row.user_id for row in sort_people(expected, "Name")]


def test_quiet_people_and_daily_history(small_store, two_orgs):
    directory, a, _, members_a, _, manager_a = two_orgs
    small_store.record_inference(members_a[0], reading("quality", 65))
    small_store.client.document(f"users/{members_a[0]}").update({"last_active": datetime.now(UTC) - timedelta(days=2)})
    small_store.rewrite_row(members_a[0], a)
    team = directory.team(manager_a, a)
    quiet = directory.quiet_people(team, 15)
    assert {p.user_id for p in quiet} == set(members_a[1:]) and team.quiet == 2  # never active
    later = datetime.now(UTC) + timedelta(days=10)
    assert RowUpkeep(small_store).age(a, later).done == 1  # the one who spoke goes quiet a week later
    team = directory.team(manager_a, a, now=later)
    assert team.quiet == 3 and {p.user_id for p in directory.quiet_people(team, 15)} == set(members_a)
    assert figures_agree_with_rows(small_store, a)
    day = directory.record_day(a)
    again = directory.record_day(a)  # overwritten within the day
    history = directory.history(a)
    assert [d.date for d in history] == [day.date] and history[0].people == 3 == again.people


def test_the_day_averages_confidence_over_the_people_who_have_started(small_store, two_orgs):
    directory, a, _, members_a, _, _ = two_orgs
    assert directory.record_day(a).avg_confidence is None  # nobody has assessed anything: no confidence, not 0%
    small_store.record_inference(members_a[0], reading("quality", 65, confidence=0.8))
    small_store.record_inference(members_a[1], reading("quality", 30, confidence=0.6))
    day = directory.record_day(a)
    expected = sum(small_store.summary(m).overall.avg_confidence for m in members_a[:2]) / 2
    assert day.people == 3 and day.avg_confidence == pytest.approx(expected, abs=1e-4)  # the third is not counted
    assert directory.history(a)[-1].avg_confidence == day.avg_confidence


def test_a_damaged_row_never_stops_the_team_page_and_the_nightly_check_repairs_the_figures(
    small_store, two_orgs, caplog
):
    directory, a, _, members_a, member_b, manager_a = two_orgs
    small_store.record_inference(members_a[0], reading("quality", 65, 0.8))
    before = next(p for p in directory.rows(a) if p.user_id == members_a[0])
    row = small_store.org_ref(a).collection("people").document(members_a[0])
    row.update({"completeness": "most of it"})  # a hand edit
    stray = small_store.org_ref(a).collection("people").document(member_b)  # someone of another organisation
    stray.set(
        aged(PersonRow(user_id=member_b, display_name="B0"), small_store.catalog, datetime.now(UTC)).to_document()
    )

    team = directory.team(manager_a, a)  # never a crash: the damaged row is mended where the table reads it
    page = directory.table_page(team, TeamFilter(), "Name", 1, 25).rows
    assert (before.user_id, before.completeness) in {(p.user_id, p.completeness) for p in page}
    assert f"roll-up row of {members_a[0]} in {a} is damaged" in caplog.text
    assert PersonRow.model_validate(row.get().to_dict()).completeness == before.completeness  # rewritten
    [record] = small_store.set_aside.listed(members_a[0])  # what it held, set aside
    assert (record.path, record.stored["completeness"]) == (row.path, "most of it")
    assert small_store.rewrite_row(member_b, a) is None and not stray.get().exists  # a stray row is removed
    assert not figures_agree_with_rows(small_store, a)  # the damaged row's share was never taken away
    caplog.clear()
    checked = RowUpkeep(small_store).check(a)
    assert checked.repaired and figures_agree_with_rows(small_store, a)
    assert f"of {a} had drifted from its" in caplog.text
    assert RowUpkeep(small_store).check(a).repaired == {}  # run again: nothing to repair
    assert directory.record_day(a).people == 3


def test_a_damaged_days_figures_leave_a_gap_instead_of_stopping_the_chart(small_store, two_orgs, caplog):
    directory, a, *_ = two_orgs
    day = directory.record_day(a)
    small_store.org_ref(a).collection("daily").document("2026-01-05").set({"date": "2026-01-05", "people": "many"})
    assert [d.date for d in directory.history(a)] == [day.date]
    assert "daily figures 2026-01-05 of" in caplog.text


def test_an_organisation_that_no_longer_reads_raises_a_domain_error_naming_the_field(small_store, two_orgs):
    directory, a, _, _, _, manager_a = two_orgs
    small_store.org_ref(a).update({"name": firestore.DELETE_FIELD})  # a hand edit: the name is gone
    with pytest.raises(DamagedOrganisationError) as damaged:
        directory.get(a)
    assert damaged.value.org_id == a and damaged.value.reason == "name: missing"
    with pytest.raises(DamagedOrganisationError):  # the team page shows it as a domain error, not a crash
        directory.team(manager_a, a)
    with pytest.raises(DamagedOrganisationError):  # and no figures are written for it
        directory.record_day(a)
    assert directory.history(a) == []


def test_daily_snapshots_one_per_user_per_day(small_store, make_user):
    user = make_user(small_store)
    small_store.record_inference(user, reading("quality", 40))
    small_store.record_inference(user, reading("quality", 60))
    snapshots = list(small_store.client.collection(f"users/{user}/snapshots").stream())
    assert len(snapshots) == 1
    snapshot = snapshots[0].to_dict()
    assert snapshot["date"] == datetime.now(UTC).strftime("%Y-%m-%d")
    assert snapshot["factors"]["quality"]["value"] == 60
    assert snapshot["overall"]["total_factors_assessed"] == 1


def _aged(row: PersonRow, catalog) -> PersonRow:
    return aged(row, catalog, datetime(2026, 11, 20, tzinfo=UTC))


def test_blockers_across_people_and_csv_export(small_catalog):
    people = [
        PersonRow(
            user_id="u1",
            display_name="Anna, Data",
            completeness=0.4,
            last_active=datetime(2026, 11, 1, tzinfo=UTC),
            blocked=[
                BlockedRow(archetype_id="medium", blockers=["skills"]),
                BlockedRow(archetype_id="hard", blockers=["skills", "storage"]),
            ],
        ),
        PersonRow(
            user_id="u2",
            display_name="Ben",
            completeness=0.2,
            blocked=[BlockedRow(archetype_id="hard", blockers=["storage", "quality"])],
        ),
    ]
    people = [_aged(row, small_catalog) for row in people]
    found = blockers(small_catalog, OrgFigures(rebuild(people), small_catalog))
    assert [(a.archetype_id, a.blocked_people) for a in found.archetypes] == [("hard", 2), ("medium", 1)]
    assert found.factors[:2] == [("skills", 2), ("storage", 2)]  # most first, then by id
    assert found.archetypes[0].factors == {"storage": 2, "quality": 1, "skills": 1}
    rows = list(csv.DictReader(io.StringIO(team_csv(people))))
    assert [r["display_name"] for r in rows] == ["Anna, Data", "Ben"]
    assert rows[0]["completeness"] == "0.4" and rows[0]["last_active"].startswith("2026-11-01")
    assert rows[1]["last_active"] == "" and rows[1]["to_recheck"] == "0"


def test_names_and_addresses_in_the_team_csv_are_never_formulas():
    """A spreadsheet evaluates a cell that starts with =, +, -, @ (or a tab or carriage return)."""
    people = [
        PersonRow(user_id="u1", display_name='=HYPERLINK("https://example.invalid","Open")', email="+1@example.com"),
        PersonRow(user_id="u2", display_name="@SUM(A1)", email="-x@example.com"),
        PersonRow(user_id="u3", display_name="Ann - Data", email="ann@example.com"),
    ]
    rows = list(csv.DictReader(io.StringIO(team_csv(people))))
    names = [r["display_name"] for r in rows]
    assert names == ['\'=HYPERLINK("https://example.invalid","Open")', "'@SUM(A1)", "Ann - Data"]
    assert [r["email"] for r in rows] == ["'+1@example.com", "'-x@example.com", "ann@example.com"]
    assert rows[0]["completeness"] == "0.0"  # numbers stay numbers


def test_registering_again_keeps_what_the_pipeline_recorded(small_store, make_user):
    user = make_user(small_store, org_id="org-keep")
    small_store.client.document(f"users/{user}").update({"last_active": datetime(2026, 1, 1, tzinfo=UTC)})
    small_store.register_user(UserProfile(user_id=user, org_id="org-keep", display_name="Renamed"))
    profile = small_store.get_user(user)
    assert profile.display_name == "Renamed" and profile.last_active == datetime(2026, 1, 1, tzinfo=UTC)


def _row(uid: str, name: str, *, completeness=0.0, assessed=0, unconfirmed=0, last_active=None, tier="exploratory"):
    return PersonRow(
        user_id=uid,
        display_name=name,
        completeness=completeness,
        assessed=assessed,
        unconfirmed=unconfirmed,
        last_active=last_active,
        decision_tier=tier,
    )


def _team(rows: list[PersonRow], catalog, at: datetime | None = None) -> TeamView:
    aged_rows = [_aged(row, catalog) if not row.cell else row for row in rows]
    return TeamView(
        Organisation(org_id="o", name="O"), OrgFigures(rebuild(aged_rows), catalog), at or datetime.now(UTC)
    )


def test_tier_counts_are_of_the_people_chosen_as_their_aged_answers_support_them(small_catalog):
    old = datetime(2026, 11, 20, tzinfo=UTC) - timedelta(days=500)
    sure = _row("a", "A", completeness=0.5, assessed=1, tier="low_risk").model_copy(
        update={"said": encode_said([("quality", 0.9, old)])}  # said long ago: aged down below low_risk
    )
    rows = [sure, _row("b", "B", tier="low_risk"), _row("c", "C", tier="retired_tier")]
    team = _team(rows, small_catalog)
    # every tier in catalog order (zeros kept), then a tier the catalog no longer has: everyone is counted
    counts = team.tier_distribution()
    assert list(counts)[: len(small_catalog.decision_tiers)] == [t.id for t in small_catalog.decision_tiers]
    assert counts["exploratory"] == 1 and counts["low_risk"] == 1 and counts["retired_tier"] == 1
    assert sum(team.tier_distribution(TeamFilter(tiers=frozenset({"low_risk"}))).values()) == 1


def test_average_mapped_counts_everyone_and_started_counts_who_assessed_something(small_catalog):
    rows = [
        _row("a", "A", completeness=0.5, assessed=3),
        _row("b", "B", completeness=0.0),
        _row("c", "C", completeness=0.25, assessed=1),
    ]
    team = _team(rows, small_catalog)
    assert team.avg_completeness() == 0.25 and team.started() == 2


def test_the_team_table_sorts_each_way_a_manager_may_choose():
    now = datetime(2026, 11, 20, tzinfo=UTC)
    rows = [
        _row("u1", "bea", completeness=0.5, unconfirmed=1, last_active=now - timedelta(days=2)),
        _row("u2", "Al", completeness=0.5, unconfirmed=4, last_active=now - timedelta(days=9)),
        _row("u3", "", completeness=0.1, unconfirmed=1),  # never active, no name: its id stands for it
        _row("u4", "Cy", completeness=0.9, unconfirmed=0, last_active=now),
    ]
    shares = {"u1": 0.2, "u2": 0.0, "u3": 0.2, "u4": 0.6}
    rows = [
        row.model_copy(update={"due_share": shares[row.user_id], "name_key": (row.display_name or row.user_id).lower()})
        for row in rows
    ]

    def order(name: str) -> list[str]:
        return [row.user_id for row in sort_people(rows, name)]

    assert set(TEAM_SORTS) == {
        "Name",
        "Least mapped first",
        "Longest quiet first",
        "Most unconfirmed first",
        "Most to re-check first",
    }
    assert order("Name") == ["u2", "u1", "u4", "u3"]  # case-insensitive
    assert order("Least mapped first") == ["u3", "u2", "u1", "u4"]  # ties by name
    assert order("Longest quiet first") == ["u3", "u2", "u1", "u4"]  # never active first
    assert order("Most unconfirmed first") == ["u2", "u1", "u3", "u4"]
    assert order("Most to re-check first") == ["u4", "u1", "u3", "u2"]


def test_progress_over_time_ends_with_the_live_figures_in_place_of_todays_record(small_catalog):
    at = datetime(2026, 11, 28, 14, 5, tzinfo=UTC)
    rows = [_row("a", "A", completeness=0.5, assessed=3), _row("b", "B", completeness=0.0)]
    rows[0] = rows[0].model_copy(update={"avg_confidence": 0.78})
    team = _team(rows, small_catalog, at)
    today = team.today()
    assert (today.date, today.people, today.avg_completeness, today.avg_confidence) == ("2026-11-28", 2, 0.25, 0.78)
    assert today.avg_completeness == team.avg_completeness() and today.avg_confidence == team.avg_confidence()
    assert today.tiers == {"exploratory": 2} and today.stale_share == team.stale_share()

    def recorded(day: str, mapped: float) -> OrgDay:
        return OrgDay(date=day, people=2, avg_completeness=mapped, avg_confidence=0.73, tiers={})

    history = [recorded("2026-11-26", 0.02), recorded("2026-11-27", 0.04), recorded("2026-11-28", 0.06)]
    assert progress(history, today) == [*history[:2], today]  # the nightly figure of 02:00 gives way to the live one
    assert progress([], today) == [today] and progress(history[:2], today)[-1] is today


def test_factors_holding_back_as_many_people_come_in_the_blockers_order_and_a_cut_names_who_ties(small_catalog):
    def person(uid: str) -> PersonRow:
        return PersonRow(
            user_id=uid,
            blocked=[
                BlockedRow(archetype_id="one", blockers=["a", "b", "ml", "privacy"]),
                BlockedRow(archetype_id="two", blockers=["privacy", "ml"]),
                BlockedRow(archetype_id="three", blockers=["ml"]),
            ],
        )

    third = PersonRow(user_id="u3", blocked=[BlockedRow(archetype_id="one", blockers=["c"])])
    held = _team([person("u1"), person("u2"), third], small_catalog).held_back()
    # everyone counted once per factor; among equals, the most (person, project type) pairs first, then by id
    assert held == [("ml", 2), ("privacy", 2), ("a", 2), ("b", 2), ("c", 1)]
    assert cut_with_ties(held, 2) == (held[:2], ["a", "b"])  # the cut falls in a tie: who stands level is named
    assert cut_with_ties(held, 4) == (held[:4], [])  # ... or it does not
    assert cut_with_ties(held, 10) == (held, []) and cut_with_ties([], 10) == ([], [])


def test_a_catalog_change_is_acted_on_rows_and_summaries_rebuilt_once_and_the_old_format_removed(small_store, two_orgs):
    """Rows built for another catalog (and the roll-up shards of the earlier format) are rebuilt by the nightly
    refresh from each member's profile and summary, the summary itself rebuilt for the catalog in use; run
    again, nothing changes."""
    directory, a, _, members_a, member_b, manager_a = two_orgs
    small_store.record_inference(members_a[0], reading("quality", 65, 0.8))
    summary_doc = small_store.client.document(f"users/{members_a[0]}/metadata/assessment")
    summary_doc.update({"assessment_summary.catalog_version": "an-older-catalog"})
    people = small_store.org_ref(a).collection("people")
    people.document(members_a[1]).update({"stamp": "1/an-older-catalog/x", "display_name": "stale"})
    legacy = small_store.org_ref(a).collection("rollup").document("shard-07")
    legacy.set({"rows": {members_a[2]: {"user_id": members_a[2]}}})
    small_store.org_ref(a).update({"rows_stamp": "1/an-older-catalog/x"})
    upkeep = RowUpkeep(small_store)
    assert upkeep.needs_refresh(directory.get(a).rows_stamp)
    assert upkeep.refresh(a) >= 4  # three members and their manager
    assert small_store.summary(members_a[0]).catalog_version == small_store.catalog.version
    assert PersonRow.model_validate(people.document(members_a[1]).get().to_dict()).display_name == "A1"
    assert not legacy.get().exists and not upkeep.needs_refresh(directory.get(a).rows_stamp)
    assert figures_agree_with_rows(small_store, a)
    figures = small_store.organisations.figures(a)
    upkeep.refresh(a)  # idempotent
    assert drift(small_store.organisations.figures(a), figures) == {}
    assert shard_of(members_a[0]) in small_store.organisations.figure_shards(a)
