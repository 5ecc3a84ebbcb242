"""Roll-up rows and shards (pure)."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

from factor_journal.graph import graph_for
from factor_journal.models import UserProfile
from factor_journal.rollup import FIGURE_SHARDS, person_row, search_key, shard_of, snapshot_document
from factor_journal.summary import build_summary

NOW = datetime(2026, 11, 20, tzinfo=UTC)


def test_figures_shards_are_stable_and_spread_people_evenly():
    assert shard_of("alice") == shard_of("alice")
    counts = Counter(shard_of(f"user-{i}") for i in range(6400))
    assert len(counts) == FIGURE_SHARDS and max(counts.values()) < 2 * 6400 / FIGURE_SHARDS


def test_a_row_mirrors_the_summary_and_counts_turns_needing_attention(catalog):
    summary = build_summary(catalog, graph_for(catalog), {}, None, None)
    profile = UserProfile(user_id="u1", display_name="Ada", attention_turns=["s/t1", "s/t2"])
    row = person_row(profile, summary, None, catalog, NOW)
    assert (row.display_name, row.decision_tier, row.assessed, row.needs_attention) == ("Ada", "exploratory", 0, 2)
    assert (row.tier, row.cell, row.quiet, row.name_key, row.listed) == (
        "exploratory",
        "exploratory:1:0",
        True,
        "ada",
        True,
    )
    assert set(row.categories) == {c.id for c in catalog.categories}
    snapshot = snapshot_document(summary, "2026-11-22").to_document()
    assert snapshot["date"] == "2026-11-22" and snapshot["factors"] == {}
    assert snapshot["overall"]["decision_tier"] == "exploratory"


def test_a_row_keeps_every_capability_the_person_cannot_evaluate_yet_with_all_its_blockers(catalog):
    """The blockers page counts, per capability, everyone it is blocked for: a row that kept only the nearest
    few capabilities told a manager that nobody was blocked from the others (every demo member could evaluate
    none of the 11, yet "Visual quality inspection" was blocked for nobody)."""
    summary = build_summary(catalog, graph_for(catalog), {}, None, None)
    row = person_row(UserProfile(user_id="u1", display_name="Ada"), summary, None, catalog, NOW)
    assert not row.can_evaluate
    assert {blocked.archetype_id for blocked in row.blocked} == {a.id for a in catalog.archetypes}
    for blocked in row.blocked:
        needed = {p.factor for p in catalog.archetype(blocked.archetype_id).prerequisites}
        assert set(blocked.blockers) == needed


def test_a_rows_answer_ages_do_not_depend_on_the_order_of_the_summarys_factors(catalog):
    """The row written with a change (the summary in memory) and the row rebuilt from the stored summary (its map
    in whatever order Firestore returns it) must be the same row."""
    from factor_journal.graph import graph_for
    from factor_journal.models import FactorState, InferenceStatus, UserProfile
    from factor_journal.rollup import person_row
    from factor_journal.summary import build_summary

    now = datetime(2026, 11, 20, tzinfo=UTC)
    states = {
        fid: FactorState(
            factor_id=fid,
            category=catalog.factor(fid).category,
            current_value=50,
            current_confidence=0.7,
            inference_status=InferenceStatus.unconfirmed,
            observed_at=now,
            evidence_count=1,
        )
        for fid in ("data_quality", "ml_expertise", "cloud_adoption")
    }
    summary = build_summary(catalog, graph_for(catalog), states, None, now)
    reordered = summary.model_copy(update={"factors": dict(reversed(list(summary.factors.items())))})
    profile = UserProfile(user_id="u")
    assert person_row(profile, summary, None, catalog, now) == person_row(profile, reordered, None, catalog, now)


def test_a_managers_own_row_is_not_listed_and_a_search_matches_the_start_of_a_name(catalog):
    summary = build_summary(catalog, graph_for(catalog), {}, None, None)
    profile = UserProfile(user_id="u-7", display_name="Anna  Berg", email="a.berg@example.com", role="manager")
    row = person_row(profile, summary, None, catalog, NOW)
    assert not row.listed and row.name_key == "anna berg"
    assert row.name_key.startswith(search_key(" ANNA  b")) and search_key("") == ""
    assert (row.due_any, row.due_quarter, row.due_half) == (False, False, False)
