"""Every composite query the code runs has its index declared in firestore.indexes.json.

The emulator does not enforce indexes; production does.  This test runs each
query path of the code against the emulator while recording the queries, then
checks them against the declared indexes (conftest.py does the same for every
query of the whole suite at the end of the run).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from factor_journal.figures import OrgFigures
from factor_journal.models import InferredUpdate
from factor_journal.organisation import TEAM_SORTS, Organisation, OrganisationDirectory, TeamFilter, TeamView
from factor_journal.reminders import SCANS, due_page
from factor_journal.upkeep import RowUpkeep
from index_audit import QueryRecorder, QueryShape, missing_indexes, needs_composite


def test_every_query_path_of_the_code_has_its_index(small_store, make_user):
    store = small_store
    user = make_user(store, org_id="org-index", email="x@example.com")
    now = datetime.now(UTC)
    store.record_inference(user, InferredUpdate(factor_id="quality", value=40, confidence=0.7, rationale="r"))
    session = store.start_session(user)
    store.add_turn(user, session, "user", "hello", created_at=now)
    recorder = QueryRecorder()
    recorder.install()
    try:
        store.history(user, "quality")
        store.factor_as_of(user, "quality", now)
        store.summary_as_of(user, now)
        store.recent_turns(user, session, before=now + timedelta(seconds=1), limit=4)
        store.session_turns(user, session)
        store.session_ids(user)
        store.rebuild_summary_by_scan(user)
        directory = OrganisationDirectory(store)
        directory.rows("org-index")
        directory.history("org-index")
        directory.organisation_ids()
        team = TeamView(
            Organisation(org_id="org-index", name="I"),
            OrgFigures(store.organisations.figures("org-index"), store.catalog),
            now,
        )
        for chosen in (
            TeamFilter(),
            TeamFilter(quiet_only=True),
            TeamFilter(search="x"),
            TeamFilter(stale_only=True, search="x"),
        ):
            for order in TEAM_SORTS:
                directory.table_page(team, chosen, order, 1, 25)
                directory.table_page(team, chosen, order, 2, 25, total=60)
            list(directory.export(team, chosen))
            directory.selected(team, chosen)
        upkeep = RowUpkeep(store)
        upkeep.age("org-index", now)
        upkeep.refresh("org-index")
        upkeep.check("org-index")
        for scan in SCANS:
            due_page(store, scan, now + timedelta(days=1), None, 10)
        store.ledger.due(now)
        store.ledger.unclaimed(now)
    finally:
        recorder.uninstall()
    shapes = recorder.shapes
    assert any(needs_composite(s) for s in shapes)  # the audit really saw composite queries
    assert missing_indexes(shapes) == []


def test_the_audit_flags_an_undeclared_composite_query():
    shape = QueryShape("turns", False, frozenset({"role"}), (("created_at", "DESCENDING"),))
    assert needs_composite(shape)
    assert missing_indexes({shape}) == ["turns: role ==, created_at DESCENDING"]
    single = QueryShape("turns", False, frozenset(), (("created_at", "DESCENDING"),))
    assert not needs_composite(single)
    equalities_only = QueryShape("users", False, frozenset({"org_id", "role"}), ())
    assert not needs_composite(equalities_only)


def test_the_audit_knows_index_merging_for_equalities_with_an_order():
    """Firestore serves equalities on several fields with an order from indexes of each field with that order."""
    both = QueryShape("people", False, frozenset({"listed", "quiet", "tier"}), (("name_key", "ASCENDING"),))
    assert missing_indexes({both}) == []  # (listed, quiet, name_key) and (listed, tier, name_key), merged
    one = [
        {
            "collectionGroup": "people",
            "fields": [{"fieldPath": "listed"}, {"fieldPath": "quiet"}, {"fieldPath": "name_key"}],
        }
    ]
    assert missing_indexes({both}, indexes=one) == ["people: listed ==, quiet ==, tier ==, name_key ASCENDING"]


def test_the_audit_covers_nearest_neighbour_queries():
    """A vector query needs a vector index with its pre-filter's fields and the query vector's dimension."""
    shape = QueryShape("journal_vectors", True, frozenset({"user_id", "embedding_model"}), (), ("embedding", 256))
    assert needs_composite(shape)
    assert missing_indexes({shape}) == []  # declared in firestore.indexes.json (and one for 768-d Gemini vectors)
    assert missing_indexes({shape}, indexes=[]) == [
        "journal_vectors: embedding_model ==, user_id ==, embedding nearest (256-d)"
    ]
    other_dimension = QueryShape("journal_vectors", True, shape.equalities, (), ("embedding", 1536))
    assert missing_indexes({other_dimension}) != []
    unfiltered = QueryShape("journal_vectors", True, frozenset(), (), ("embedding", 256))
    assert missing_indexes({unfiltered}) != []  # a search over everyone's vectors has no index: it is never run
    unread = shape.equalities | {"understood"}  # the search over a person's answers that fed no entry
    answers = {
        QueryShape("answer_vectors", True, e, (), ("embedding", d))
        for e in (shape.equalities, unread)
        for d in (256, 768)
    }
    assert missing_indexes(answers) == []  # the search over a person's answers, as over their journal


def test_the_search_of_a_persons_journal_and_answers_is_recorded_and_served(small_store, make_user):
    from factor_journal.embedding import WordLlamaEmbedder

    user = make_user(small_store)
    embedder = WordLlamaEmbedder()
    recorder = QueryRecorder()
    recorder.install()
    try:
        query = embedder.embed_query("late figures")
        small_store.vectors.nearest(user, query, embedder.model_id, 5)
        small_store.vectors.answers.nearest(user, query, embedder.model_id, 5)
        small_store.vectors.answers.nearest(user, query, embedder.model_id, 3, unread_only=True)
    finally:
        recorder.uninstall()
    assert {(shape.collection, len(shape.equalities)) for shape in recorder.shapes} == {
        ("journal_vectors", 2),
        ("answer_vectors", 2),
        ("answer_vectors", 3),  # pre-filtered to the answers that fed no entry too
    }
    for shape in recorder.shapes:
        assert shape.vector == ("embedding", 256) and shape.collection_group
        assert {"user_id", "embedding_model"} <= shape.equalities
    assert missing_indexes(recorder.shapes) == []


def test_the_audit_asks_collection_group_queries_for_a_field_override():
    group = QueryShape("turns", True, frozenset(), (("extraction.retry_at", "ASCENDING"),))
    assert missing_indexes({group}, overrides=[]) == [
        "turns: extraction.retry_at ASCENDING (collection group: needs a fieldOverride)"
    ]
    assert missing_indexes({group}) == []  # firestore.indexes.json enables it for the group
    name_scan = QueryShape("", True, frozenset(), ())  # recursive_delete's scan of everything below a document
    assert missing_indexes({name_scan}, overrides=[]) == []
