"""The organisation's figures kept by increments equal the figures rebuilt from the rows (pure, property-based).

Rows are generated from their content (completeness, categories, what blocks the person, their answers and
when they were said, when they were last active, whether they are a manager) and aged as the store ages them;
a sequence of writes, rewrites and removals moves the figures by ``figures.delta`` exactly as the repository
does, and at every step the figures must equal ``figures.rebuild`` of the rows as they stand, and read as the
rows themselves say (tiers, mapping, blockers, re-checks, who went quiet, aged confidence).
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from factor_journal.catalog import load_catalog
from factor_journal.figures import OrgFigures, TeamChoice, add, bucket_of, delta, drift, rebuild
from factor_journal.rollup import (
    QUIET_AFTER,
    BlockedRow,
    PersonRow,
    aged,
    encode_said,
    next_change,
    row_freshness,
)

CATALOG = load_catalog()
NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
FACTORS = [f.id for f in CATALOG.assessable_factors]
CATEGORIES = [c.id for c in CATALOG.categories]
ARCHETYPES = [a.id for a in CATALOG.archetypes]
USERS = [f"u{i}" for i in range(6)]

days_ago = st.floats(min_value=0, max_value=900, allow_nan=False)


@st.composite
def rows(draw: st.DrawFn, user_id: str | None = None) -> PersonRow:
    answers = draw(st.lists(st.sampled_from(FACTORS), max_size=8, unique=True))
    said = [(fid, draw(st.floats(0.3, 0.95)), NOW - timedelta(days=draw(days_ago))) for fid in answers]
    blocked = [
        BlockedRow(archetype_id=aid, blockers=draw(st.lists(st.sampled_from(FACTORS), min_size=1, max_size=4)))
        for aid in draw(st.lists(st.sampled_from(ARCHETYPES), max_size=3, unique=True))
    ]
    completeness = draw(st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0]))
    row = PersonRow(
        user_id=user_id or draw(st.sampled_from(USERS)),
        display_name=draw(st.sampled_from(["Anna Berg", "bea", "", "Cy Ng"])),
        completeness=completeness,
        avg_confidence=draw(st.floats(0.0, 1.0)),
        assessed=len(answers) or draw(st.integers(0, 2)),
        categories={c: draw(st.sampled_from([0.0, 0.19, 0.2, 0.5, 0.8, 1.0])) for c in CATEGORIES},
        blocked=blocked,
        needs_attention=draw(st.integers(0, 2)),
        last_active=draw(st.none() | days_ago.map(lambda d: NOW - timedelta(days=d))),
        said=encode_said(said),
        listed=draw(st.booleans().map(lambda manager: not manager) | st.just(True)),
    )
    return aged(row, CATALOG, NOW - timedelta(days=draw(st.sampled_from([0, 3, 40]))))


changes = st.lists(st.tuples(st.sampled_from(USERS), st.none() | rows()), min_size=1, max_size=25)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(changes)
def test_figures_moved_by_each_change_equal_the_figures_rebuilt_from_the_rows(steps):
    stored: dict[str, PersonRow] = {}
    figures: dict[str, float] = {}
    for user_id, new in steps:
        new = None if new is None else new.model_copy(update={"user_id": user_id})
        figures = add(figures, delta(stored.get(user_id), new))
        if new is None:
            stored.pop(user_id, None)
        else:
            stored[user_id] = new
        assert drift(figures, rebuild(stored.values())) == {}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(rows(), max_size=12))
def test_the_figures_read_as_the_rows_say(people):
    listed = list({row.user_id: row for row in people if row.listed}.values())
    team = OrgFigures(rebuild(listed), CATALOG)
    assert team.people() == len(listed)
    assert team.started() == sum(row.assessed > 0 for row in listed)
    tiers = Counter(row.tier for row in listed)
    assert {tier: n for tier, n in team.tier_distribution().items() if n} == dict(tiers)
    assert team.quiet() == sum(row.quiet for row in listed)
    assert team.stale_people() == sum(row.due > 0 for row in listed)
    assert team.attention() == sum(row.needs_attention for row in listed)
    given_answers = sum(row.assessed for row in listed)
    expected_share = round(sum(row.due for row in listed) / given_answers, 4) if given_answers else None
    assert team.stale_share() == expected_share
    for category, counts in team.mapped_distribution().items():
        buckets = Counter(bucket_of(row.categories.get(category, 0.0)) for row in listed)
        assert counts == [buckets.get(k, 0) for k in range(5)]
    held = {factor for row in listed for blocked in row.blocked for factor in blocked.blockers}
    assert dict(team.held_back()) == {
        factor: sum(any(factor in b.blockers for b in row.blocked) for row in listed) for factor in held
    }
    quiet_tiers = TeamChoice(quiet_only=True, tiers=frozenset({"low_risk", "exploratory"}))
    chosen = [row for row in listed if row.quiet and row.tier in quiet_tiers.tiers]
    assert team.people(team.choose(quiet_tiers)) == len(chosen)
    later = NOW + timedelta(days=50)
    started = [row for row in listed if row.assessed > 0]
    confidence = team.avg_confidence(later)
    if not started:
        assert confidence is None
    else:
        aged_then = sum(row_freshness(row, CATALOG, later).avg_confidence for row in started) / len(started)
        assert confidence == pytest.approx(aged_then, abs=2e-4)  # each answer rounded to 4 places by the rows


@settings(max_examples=120, deadline=None)
@given(rows(), st.floats(0.0, 0.999))
def test_nothing_a_row_says_changes_before_its_next_change(row, fraction):
    at = row.aged_at
    change = next_change(row, CATALOG, at)
    # the promise: by ``change`` the row has changed, and nothing changed more than a minute before it (a tier's
    # change is found by bisection to the minute, an answer falls due within the second before ``change``)
    horizon = change - min(timedelta(minutes=1), change - at) if change else at + timedelta(days=3650)
    moment = at + (horizon - at) * fraction
    then = aged(row, CATALOG, moment)
    assert (then.tier, then.due, then.quiet, then.band) == (row.tier, row.due, row.quiet, row.band)
    if change is not None:
        after = aged(row, CATALOG, change + timedelta(minutes=1))
        assert (after.tier, after.due, after.quiet, after.band) != (row.tier, row.due, row.quiet, row.band)


def test_a_person_goes_quiet_a_week_after_they_were_last_active():
    row = aged(PersonRow(user_id="u", completeness=0.5, last_active=NOW - timedelta(days=6)), CATALOG, NOW)
    assert not row.quiet and row.next_change == NOW + timedelta(days=1, microseconds=1)  # the first quiet moment
    assert not aged(row, CATALOG, NOW + timedelta(days=1)).quiet and aged(row, CATALOG, row.next_change).quiet
    assert aged(row, CATALOG, NOW + QUIET_AFTER).quiet
    complete = aged(row.model_copy(update={"completeness": 1.0}), CATALOG, NOW + QUIET_AFTER)
    assert not complete.quiet and complete.next_change is None  # a complete assessment never goes quiet
