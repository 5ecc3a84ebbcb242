"""Organisations on the emulator: managers see only their own, roll-ups scale, snapshots, CSV."""

from __future__ import annotations

import csv
import io
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from google.cloud import firestore

from factor_journal.models import InferredUpdate, UserProfile
from factor_journal.organisation import (
    TEAM_SORTS,
    DamagedOrganisationError,
    NotAManagerError,
    Organisation,
    OrganisationDirectory,
    OrgDay,
    TeamView,
    blockers,
    cut_with_ties,
    people_held_back,
    progress,
    sort_people,
    team_csv,
)
from factor_journal.rollup import ROLLUP_SHARDS, PersonRow, RowFreshness, mean_completeness, shard_of


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


def test_a_manager_sees_their_organisation_and_no_other(small_store, two_orgs):
    directory, a, b, members_a, member_b, manager_a = two_orgs
    small_store.record_inference(members_a[0], reading("quality", 65))
    team = directory.team(manager_a, a)
    assert {p.user_id for p in team.people} == set(members_a)  # the manager is not in their own table
    assert next(p for p in team.people if p.user_id == members_a[0]).assessed == 1
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


def test_team_reads_stay_constant_for_two_thousand_people(small_store, make_user):
    directory = OrganisationDirectory(small_store)
    org = f"org-big-{uuid.uuid4().hex[:6]}"
    directory.create(org, "Big")
    manager = make_user(small_store, org_id=org)
    directory.assign_manager(org, manager)
    writer = small_store.client.bulk_writer()
    shards: dict[str, dict] = {}
    for index in range(2000):
        uid = f"{org}-{index:04d}"
        shards.setdefault(shard_of(uid), {})[uid] = PersonRow(
            user_id=uid,
            display_name=f"P{index:04d}",
            completeness=(index % 10) / 10,
            decision_tier="low_risk" if index % 4 else "exploratory",
        ).to_document()
    for shard, rows in shards.items():
        writer.set(small_store.org_ref(org).collection("rollup").document(shard), {"rows": rows}, merge=True)
    writer.close()
    small_store.stats.reset()
    team = directory.team(manager, org)
    assert len(team.people) == 2000
    tiers = team.tier_distribution()
    assert tiers["exploratory"] == 500 and tiers["low_risk"] == 1500
    assert small_store.stats.reads <= ROLLUP_SHARDS + 2 + 1  # the manager check, the org, its shards
    assert len(shards) <= ROLLUP_SHARDS


def test_quiet_people_and_daily_history(small_store, two_orgs):
    directory, a, _, members_a, _, manager_a = two_orgs
    small_store.record_inference(members_a[0], reading("quality", 65))
    later = datetime.now(UTC) + timedelta(days=10)
    team = directory.team(manager_a, a, now=later)
    assert {p.user_id for p in team.quiet} == set(members_a)  # nobody spoke in the last 7 days by then
    assert directory.team(manager_a, a).quiet == [
        p for p in directory.team(manager_a, a).people if p.last_active is None
    ]
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


def test_a_damaged_row_is_rewritten_from_the_person_and_never_stops_the_team_page(small_store, two_orgs, caplog):
    directory, a, _, members_a, member_b, manager_a = two_orgs
    small_store.record_inference(members_a[0], reading("quality", 65, 0.8))
    before = next(p for p in directory.rows(a) if p.user_id == members_a[0])
    shard = small_store.org_ref(a).collection("rollup").document(shard_of(members_a[0]))
    shard.update({f"rows.`{members_a[0]}`": {"user_id": members_a[0], "completeness": "most of it"}})
    stray = small_store.org_ref(a).collection("rollup").document(shard_of(member_b))  # someone of another org
    stray.set({"rows": {member_b: {"completeness": None}}}, merge=True)

    team = directory.team(manager_a, a)  # read: the damaged row rebuilt, the stray one removed
    assert {p.user_id for p in team.people} == set(members_a)
    assert next(p for p in team.people if p.user_id == members_a[0]) == before
    assert f"roll-up row of {members_a[0]} in {a} was damaged" in caplog.text
    stored = shard.get().to_dict()["rows"][members_a[0]]
    assert PersonRow.model_validate(stored) == before  # written back: it reads again
    assert directory.record_day(a).people == 3  # the nightly figures count everyone
    assert member_b not in stray.get().to_dict()["rows"]  # a stray row of a non-member is removed
    assert small_store.rewrite_row(member_b, a) is None  # and never written into an organisation not theirs
    assert member_b not in stray.get().to_dict()["rows"]


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


def test_blockers_across_people_and_csv_export(small_catalog):
    from factor_journal.rollup import BlockedRow

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
    found = blockers(small_catalog, people)
    assert [(a.archetype_id, a.blocked_people) for a in found.archetypes] == [("hard", 2), ("medium", 1)]
    assert found.factors[0] in (("skills", 2), ("storage", 2))
    rows = list(csv.DictReader(io.StringIO(team_csv(people))))
    assert [r["display_name"] for r in rows] == ["Anna, Data", "Ben"]
    assert rows[0]["completeness"] == "0.4" and rows[0]["last_active"].startswith("2026-11-01")
    assert rows[1]["last_active"] == ""


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


def _team(rows: list[PersonRow], fresh: dict[str, RowFreshness]) -> TeamView:
    return TeamView(
        organisation=Organisation(org_id="o", name="O"),
        people=rows,
        quiet=[],
        freshness=fresh,
        tiers=["exploratory", "low_risk", "medium_risk"],
    )


def test_tier_counts_are_of_the_people_chosen_as_their_aged_answers_support_them():
    rows = [_row("a", "A", tier="low_risk"), _row("b", "B", tier="low_risk"), _row("c", "C", tier="retired_tier")]
    fresh = {"a": RowFreshness(due=1, share=0.5, avg_confidence=0.3, decision_tier="exploratory")}  # aged down
    team = _team(rows, fresh)
    # every tier in catalog order (zeros kept), then a tier the catalog no longer has: everyone is counted
    assert list(team.tier_distribution().items()) == [
        ("exploratory", 1),
        ("low_risk", 1),
        ("medium_risk", 0),
        ("retired_tier", 1),
    ]
    assert team.tier_distribution([rows[1]]) == {"exploratory": 0, "low_risk": 1, "medium_risk": 0}


def test_average_mapped_counts_everyone_and_started_counts_who_assessed_something():
    rows = [
        _row("a", "A", completeness=0.5, assessed=3),
        _row("b", "B", completeness=0.0),
        _row("c", "C", completeness=0.25, assessed=1),
    ]
    team = _team(rows, {})
    assert team.avg_completeness() == 0.25 and team.avg_completeness(rows[:1]) == 0.5
    assert mean_completeness([]) == 0.0
    assert team.started() == 2 and team.started(rows[1:2]) == 0


def test_the_team_table_sorts_each_way_a_manager_may_choose():
    now = datetime(2026, 11, 20, tzinfo=UTC)
    rows = [
        _row("u1", "bea", completeness=0.5, unconfirmed=1, last_active=now - timedelta(days=2)),
        _row("u2", "Al", completeness=0.5, unconfirmed=4, last_active=now - timedelta(days=9)),
        _row("u3", "", completeness=0.1, unconfirmed=1),  # never active, no name: its id stands for it
        _row("u4", "Cy", completeness=0.9, unconfirmed=0, last_active=now),
    ]
    fresh = {
        uid: RowFreshness(due=0, share=share, avg_confidence=0.5, decision_tier="exploratory")
        for uid, share in (("u1", 0.2), ("u2", 0.0), ("u3", 0.2), ("u4", 0.6))
    }
    team = _team(rows, fresh)

    def order(name: str) -> list[str]:
        return [row.user_id for row in sort_people(team, rows, name)]

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


def test_progress_over_time_ends_with_the_live_figures_in_place_of_todays_record():
    at = datetime(2026, 11, 28, 14, 5, tzinfo=UTC)
    rows = [_row("a", "A", completeness=0.5, assessed=3), _row("b", "B", completeness=0.0)]
    fresh = {"a": RowFreshness(due=1, share=1 / 3, avg_confidence=0.78, decision_tier="exploratory")}
    team = _team(rows, fresh).model_copy(update={"at": at})
    today = team.today()
    assert (today.date, today.people, today.avg_completeness, today.avg_confidence) == ("2026-11-28", 2, 0.25, 0.78)
    assert today.avg_completeness == team.avg_completeness() and today.avg_confidence == team.avg_confidence()
    assert today.tiers == {"exploratory": 2} and today.stale_share == team.stale_share()

    def recorded(day: str, mapped: float) -> OrgDay:
        return OrgDay(date=day, people=2, avg_completeness=mapped, avg_confidence=0.73, tiers={})

    history = [recorded("2026-11-26", 0.02), recorded("2026-11-27", 0.04), recorded("2026-11-28", 0.06)]
    assert progress(history, today) == [*history[:2], today]  # the nightly figure of 02:00 gives way to the live one
    assert progress([], today) == [today] and progress(history[:2], today)[-1] is today


def test_factors_holding_back_as_many_people_come_in_the_blockers_order_and_a_cut_names_who_ties():
    from factor_journal.rollup import BlockedRow

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
    people = [person("u1"), person("u2"), third]
    held = people_held_back(people)
    # everyone counted once per factor; among equals, the most (person, project type) pairs first, then by id
    assert held == [("ml", 2), ("privacy", 2), ("a", 2), ("b", 2), ("c", 1)]
    assert cut_with_ties(held, 2) == (held[:2], ["a", "b"])  # the cut falls in a tie: who stands level is named
    assert cut_with_ties(held, 4) == (held[:4], [])  # ... or it does not
    assert cut_with_ties(held, 10) == (held, []) and cut_with_ties([], 10) == ([], [])
