"""FactorJournalStore against the real Firestore emulator: every operation and its promises."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from functools import partial

import pytest

from factor_journal.errors import (
    NoConflictError,
    NotAssessedError,
    UnknownUserError,
    ValueChangedError,
    ValueOutOfScaleError,
)
from factor_journal.models import EntryKind, InferenceStatus, InferredUpdate, Source
from factor_journal.store import FactorJournalStore


def update(factor_id: str, value: float, confidence: float = 0.7, **extra: object) -> InferredUpdate:
    return InferredUpdate(
        factor_id=factor_id,
        value=value,
        confidence=confidence,
        rationale=extra.pop("rationale", f"said something about {factor_id}"),  # type: ignore[arg-type]
        conversation_excerpt=extra.pop("conversation_excerpt", "User: our data is all over the place"),  # type: ignore[arg-type]
        session_id=extra.pop("session_id", "s1"),  # type: ignore[arg-type]
        **extra,  # type: ignore[arg-type]
    )


def journal(store: FactorJournalStore, user: str, factor_id: str) -> list:
    return store.history(user, factor_id, page_size=500).entries


def test_record_inference_writes_factor_journal_and_summary(store, make_user):
    user = make_user(store)
    entry = store.record_inference(
        user, update("data_quality", 20, 0.75, inferred_from=["data_governance", "data_infrastructure"])
    )

    state = store.factor(user, "data_quality")
    assert (state.current_value, state.current_confidence) == (20, 0.75)
    assert state.inference_status == InferenceStatus.unconfirmed
    assert state.category == "data_readiness"
    assert state.inferred_from == ["data_governance", "data_infrastructure"]

    [stored] = journal(store, user, "data_quality")
    assert stored.entry_id == entry.entry_id
    assert (stored.previous_value, stored.new_value, stored.confidence) == (None, 20, 0.75)
    assert stored.kind == EntryKind.inferred and stored.source == Source.llm
    assert stored.session_id == "s1" and "all over the place" in stored.conversation_excerpt
    assert stored.recorded_at >= stored.observed_at - timedelta(seconds=1)

    summary = store.summary(user)
    data = summary.categories["data_readiness"]
    assert data.factor_count == 1 and data.avg_confidence == 0.75
    assert data.completeness == round(1 / data.total_factors, 4)
    assert summary.overall.total_factors_assessed == 1
    assert summary.last_conversation.factor_id == "data_quality"
    assert summary.last_conversation.topic == "Data quality"
    assert [u.factor_id for u in summary.unconfirmed_inferences] == ["data_quality"]
    assert summary.unconfirmed_inferences[0].evidence_count == 1


def test_a_decision_the_factor_cannot_take_is_refused_and_journals_nothing(store, make_user):
    """The store's own checks of a decision (the rules of a decision that goes through are pure:
    test_change_rules.py)."""
    user = make_user(store)
    with pytest.raises(NotAssessedError, match="cannot confirm"):
        store.confirm(user, "data_quality")
    with pytest.raises(NotAssessedError, match="cannot withdraw"):  # says what was attempted
        store.retract(user, "data_quality", "it does not apply")
    assert journal(store, user, "data_quality") == []
    store.correct(user, "data_quality", 70, "We run data quality checks on every load")
    with pytest.raises(NoConflictError):
        store.resolve_conflict(user, "data_quality", accept=True, rationale="again")
    assert [e.kind for e in journal(store, user, "data_quality")] == [EntryKind.corrected]


def test_a_decision_about_the_value_seen_is_refused_in_its_transaction_once_the_value_changed(store, make_user):
    """``seen`` ties a correction or a confirmation to the value shown: read in the transaction, so a value that
    changed elsewhere since (a newer answer) is never overwritten, nor confirmed, before the person saw it."""
    user = make_user(store)
    store.record_inference(user, update("data_quality", 20.7))
    store.record_inference(user, update("data_quality", 35, 0.8, observed_at=datetime.now(UTC)))
    newer = store.factor(user, "data_quality").current_value
    assert newer != 20.7
    with pytest.raises(ValueChangedError, match="shown as 20.7"):
        store.correct(user, "data_quality", 20.7, "That is about right", seen=20.7)
    assert (store.factor(user, "data_quality").current_value, len(journal(store, user, "data_quality"))) == (newer, 2)
    assert store.summary(user).unconfirmed_inferences[0].value == newer

    with pytest.raises(ValueChangedError):  # a confirmation of the value seen likewise
        store.confirm(user, "data_quality", seen=20.7)
    assert store.factor(user, "data_quality").inference_status == InferenceStatus.unconfirmed

    store.correct(user, "data_quality", newer, "That is about right", seen=newer)  # the value seen now
    assert store.factor(user, "data_quality").inference_status == InferenceStatus.user_provided


def test_late_older_observation_is_journaled_but_does_not_overwrite(store, make_user):
    user = make_user(store)
    now = datetime.now(UTC)
    store.record_inference(user, update("data_infrastructure", 60, observed_at=now - timedelta(hours=1)))
    late = store.record_inference(user, update("data_infrastructure", 25, observed_at=now - timedelta(days=3)))

    state = store.factor(user, "data_infrastructure")
    assert state.current_value == 60
    assert late.effective and late.value_after == 25  # on the timeline at its own time, not current
    assert state.evidence_count == 2 and state.last_entry_id != late.entry_id
    assert late.recorded_at > late.observed_at + timedelta(days=2)
    # history is ordered by observation: the late entry sits behind the newer one
    assert [e.new_value for e in journal(store, user, "data_infrastructure")] == [60, 25]
    # and the timeline knows the old value at its own time
    as_of = store.factor_as_of(user, "data_infrastructure", now - timedelta(days=2))
    assert as_of.current_value == 25

    newer = store.record_inference(user, update("data_infrastructure", 40, observed_at=now))
    assert newer.applied and store.factor(user, "data_infrastructure").current_value == 40


def test_history_is_newest_first_and_paged(store, make_user):
    user = make_user(store)
    start = datetime.now(UTC) - timedelta(days=30)
    for day in range(7):
        store.record_inference(user, update("data_quality", 10 + day, observed_at=start + timedelta(days=day)))
    first = store.history(user, "data_quality", page_size=3)
    second = store.history(user, "data_quality", page_size=3, cursor=first.next_cursor)
    third = store.history(user, "data_quality", page_size=3, cursor=second.next_cursor)
    values = [e.new_value for page in (first, second, third) for e in page.entries]
    assert values == [16, 15, 14, 13, 12, 11, 10]
    assert third.next_cursor is None


def test_a_damaged_journal_entry_is_left_out_of_its_page_and_paging_goes_on(store, make_user):
    user = make_user(store)
    start = datetime.now(UTC) - timedelta(days=30)
    ids = [
        store.record_inference(user, update("data_quality", 10 + day, observed_at=start + timedelta(days=day))).entry_id
        for day in range(4)
    ]
    journal = store.client.collection(f"users/{user}/factors/data_quality/journal")
    journal.document(ids[2]).set({"new_value": "lost"})  # hand edits: one keeps no field the journal is ordered by,
    journal.document(ids[1]).update({"confidence": "high"})  # one is ordered as before and does not validate
    pages, cursor = [], None
    while True:
        page = store.history(user, "data_quality", page_size=1, cursor=cursor)
        pages.append([e.new_value for e in page.entries])
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert [value for page in pages for value in page] == [13, 10]  # newest first, the two damaged left out


def test_factor_and_summary_as_of_a_past_time(store, make_user):
    user = make_user(store)
    now = datetime.now(UTC)
    week_ago, two_days_ago = now - timedelta(days=7), now - timedelta(days=2)
    store.record_inference(user, update("data_quality", 20, 0.7, observed_at=week_ago))
    store.record_inference(user, update("data_quality", 50, 0.8, observed_at=two_days_ago))
    store.record_inference(user, update("sensor_data", 70, 0.8, observed_at=two_days_ago))

    assert store.factor_as_of(user, "data_quality", week_ago + timedelta(hours=1)).current_value == 20
    assert store.factor_as_of(user, "data_quality", now).current_value == 50
    assert store.factor_as_of(user, "data_quality", week_ago - timedelta(days=1)).current_value is None

    then = store.summary_as_of(user, week_ago + timedelta(hours=1))
    assert then.overall.total_factors_assessed == 1
    assert then.factors["data_quality"].current_value == 20
    assert then.last_conversation.factor_id == "data_quality"
    assert store.summary_as_of(user, now).overall.total_factors_assessed == 2


def test_explain_gives_state_chain_and_graph_neighbours(store, make_user):
    user = make_user(store)
    store.record_inference(user, update("data_governance", 15, 0.7))
    store.record_inference(user, update("data_quality", 20, 0.75, inferred_from=["data_governance"]))
    explanation = store.explain(user, "data_quality")
    assert explanation.state.current_value == 20
    assert [e.new_value for e in explanation.reasoning_chain] == [20]
    assert [(r.factor_id, r.value) for r in explanation.inferred_from] == [("data_governance", 15)]
    assert "data_governance" in [r.factor_id for r in explanation.depends_on]
    needed = {n.archetype_id: n for n in explanation.needed_by}
    assert "predictive_maintenance" in needed and not needed["predictive_maintenance"].met


def test_reads_per_update_do_not_grow_with_factors_or_journal(store, make_user, catalog):
    user = make_user(store)
    store.stats.reset()
    store.record_inference(user, update("data_quality", 20))
    first = store.stats.reads
    for factor in catalog.assessable_factors:
        store.record_inference(user, update(factor.id, 50))
    for value in range(30):
        store.record_inference(user, update("sensor_data", value))
    store.stats.reset()
    store.record_inference(user, update("data_quality", 30))
    assert store.stats.reads == first


def run_concurrently(calls: list) -> list[BaseException]:
    """Start every call on its own thread at once; the exceptions they raised."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=len(calls)) as pool:
        futures = [pool.submit(call) for call in calls]
    return [f.exception() for f in futures if f.exception() is not None]


def test_concurrent_updates_of_one_user_lose_nothing(store, make_user):
    user = make_user(store)
    factors = ["data_quality", "data_governance", "sensor_data", "ml_expertise", "ml_infrastructure", "cloud_adoption"]
    calls = [partial(store.record_inference, user, update(f, 10 + i)) for i, f in enumerate(factors)]
    calls += [partial(store.record_inference, user, update("data_quality", 50 + i)) for i in range(4)]
    assert run_concurrently(calls) == []
    summary = store.summary(user)
    assert set(summary.factors) >= set(factors)
    assert summary.overall.total_factors_assessed == len(factors)
    assert len(journal(store, user, "data_quality")) == 5
    assert summary.factors["data_quality"].evidence_count == 5
    assert summary.model_dump(exclude={"updated_at"}) == store.rebuild_summary_by_scan(user).model_dump(
        exclude={"updated_at"}
    )


def test_concurrent_writers_in_separate_processes_are_serialised_by_the_transaction(
    firestore_client, catalog, store, make_user
):
    """Two store instances (as two function instances would be) share no lock: the transaction must hold."""
    user = make_user(store)
    writers = [FactorJournalStore(firestore_client, catalog) for _ in range(2)]
    calls = [
        partial(w.record_inference, user, update(f, 40))
        for w, f in zip(writers, ["data_quality", "sensor_data"], strict=True)
    ]
    assert run_concurrently(calls) == []
    summary = store.summary(user)
    assert {"data_quality", "sensor_data"} <= {f for f, s in summary.factors.items() if s.is_assessed}
    assert summary.overall.total_factors_assessed == 2


@pytest.mark.parametrize(
    ("call", "error"),
    [  # the catalog's checks are pure tests (test_change_rules.py), a refused value writing nothing is
        # test_a_batch_with_one_bad_update_writes_nothing; here: an unknown person, refused with nothing written
        (lambda s, u: s.correct("nobody-" + u, "data_quality", 50, "stated"), UnknownUserError),
        (lambda s, u: s.record_inference("nobody-" + u, update("data_quality", 20)), UnknownUserError),
    ],
)
def test_bad_input_raises_typed_error_and_writes_nothing(store, make_user, call, error):
    user = make_user(store)
    store.record_inference(user, update("sensor_data", 40))
    before = store.summary(user)
    with pytest.raises(error):
        call(store, user)
    assert store.summary(user) == before
    assert journal(store, user, "data_quality") == []
    assert store.factor(user, "data_quality").current_value is None
    assert store.summary("nobody-" + user) is None


def test_a_batch_with_one_bad_update_writes_nothing(store, make_user):
    user = make_user(store)
    with pytest.raises(ValueOutOfScaleError):
        store.record_inferences(user, [update("data_quality", 20), update("sensor_data", 101)])
    assert store.summary(user).overall.total_factors_assessed == 0
    assert journal(store, user, "data_quality") == []


def test_waiting_for_an_analysis_returns_once_the_turn_is_finished_with_or_as_it_stands(store, make_user):
    """What the conversation page waits on and polls: the status as written, one read each, never raising."""
    user = make_user(store)
    session = store.start_session(user)
    turn = store.add_turn(user, session, "user", "Our data is all over the place")
    ref = store.client.document(f"users/{user}/conversations/{session}/turns/{turn}")
    assert store.analysis_status(user, session, turn) is None  # written, not claimed yet
    assert store.wait_for_analysis(user, session, turn, timeout=0.3) is None  # as it stands after the wait
    ref.update({"extraction": {"status": "processing"}})
    assert store.wait_for_analysis(user, session, turn, timeout=0.3) == "processing"
    ref.update({"extraction": {"status": "no_update", "attempts": "not a number"}})  # a damaged outcome
    try:
        assert store.analysis_status(user, session, turn) == "no_update"
        assert store.wait_for_analysis(user, session, turn, timeout=30) == "no_update"  # finished: no waiting
    finally:  # other tests sweep every recent turn of the database: leave none for them to list
        ref.update({"extraction": {"status": "no_update"}})
