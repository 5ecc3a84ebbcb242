"""Ask in your own words (issue 33), on the Firestore emulator.

A person's journal is seeded as the pipeline records it (each answer a turn, read as the factor a careful
reader would give it, with the pipeline's excerpt and a rationale in the semantic extractor's form) and asked questions
that name no factor in the catalog's words.  The vectors are the real embedded model's; the search is the
emulator's ``find_nearest`` pre-filtered to the person, in the shared test database where everyone else's
vectors are too.
"""

from __future__ import annotations

import json
import uuid

import pytest
from google.cloud import firestore

from factor_journal.embedding import WordLlamaEmbedder, entry_said
from factor_journal.models import EntryKind, InferredUpdate, UserProfile
from factor_journal.questions import analyse_intent, answer_question
from factor_journal.repositories.paths import VECTORS
from factor_journal.repositories.vectors import ReembedReport
from factor_journal.store import FactorJournalStore
from factor_journal_tools.ask_sets import ASK_SETS, load_set, seed

HELD_OUT = load_set("wholesale")


@pytest.fixture(scope="module")
def journal(ask_store: FactorJournalStore) -> tuple[str, dict[str, str]]:
    return seed(ask_store, HELD_OUT["journal"])


def vectors_of(client: firestore.Client, user: str) -> dict[str, dict]:
    return {s.id: s.to_dict() for s in client.collection("users").document(user).collection(VECTORS).stream()}


def test_every_entry_with_words_has_its_vector_written_in_its_transaction(ask_store, journal):
    user, entries = journal
    stored = vectors_of(ask_store.client, user)
    assert set(stored) == set(entries.values())
    for entry_id in entries.values():
        document = stored[entry_id]
        assert document["embedding_model"] == "wordllama-l2_supercat-256" and document["embedding_dimensions"] == 256
        assert len(document["embedding"].to_map_value()["value"]) == 256
        assert document["user_id"] == user and document["entry_id"] == entry_id
    # One more reading: its entry and its vector come from one transaction (one commit, no second pass).
    ask_store.stats.reset()
    entry = ask_store.record_inference(
        user,
        InferredUpdate(
            factor_id="staff_capacity",
            value=30,
            confidence=0.6,
            rationale="Two jobs each",
            conversation_excerpt="Assistant: Who has time?\nUser: Nobody, we all do two jobs.",
        ),
    )
    assert ask_store.stats.transactions == 1
    assert entry.entry_id in vectors_of(ask_store.client, user)


def test_a_confirmation_carries_no_words_and_gets_no_vector_a_correction_does(ask_store, make_user):
    user = make_user(ask_store)
    ask_store.record_inference(
        user,
        InferredUpdate(
            factor_id="budget_commitment",
            value=20,
            confidence=0.6,
            rationale="No budget yet",
            conversation_excerpt="User: There is no money for it this year.",
        ),
    )
    confirmed = ask_store.confirm(user, "budget_commitment")
    corrected = ask_store.correct(user, "budget_commitment", 60, "The owners just set aside 80k for next year")
    stored = vectors_of(ask_store.client, user)
    assert confirmed.entry_id not in stored and EntryKind(confirmed.kind) == EntryKind.confirmed
    assert corrected.entry_id in stored
    answer = answer_question(ask_store, user, "What did I say about the money the owners set aside?")
    assert answer.found_by == "journal"
    assert answer.citations[0].entry_id == corrected.entry_id
    assert "80k" in answer.citations[0].said


# (fixture, at least this many questions cite the expected factor at all, and first): a third of each set's
# questions are oblique on purpose ("do we have the hours for this on top of everything else"), so the floors
# are each set's measured figure, a regression guard; docs/ask.md gives the figures and what each set is.
QUESTION_SETS = {  # (the sets' fixtures: ``ask_sets.ASK_SETS``)
    "wholesale": (15, 13),  # issue 33's set, written before the retrieval was tuned
    "clinics": (27, 26),  # the development set of the journal-and-catalog weighing
    "coaches": (17, 14),  # measured once before and after that change, never tuned on
    "housing": (26, 24),  # written from the catalog alone, measured once, never tuned on
    "bakery": (27, 23),  # written from the catalog alone, measured once, never tuned on
    "lawfirm": (24, 22),  # the same, for the same decision (docs/ask.md)
}
assert set(QUESTION_SETS) == set(ASK_SETS)
# A set that has them asks its ``off_topic`` questions too: at most this many may be answered from the journal
# (citing an entry found by meaning: by ``journal`` or ``nearest``, or said near a factor with nothing recorded under
# it; the similarity floors' price), the figure measured when it was written.
OFF_TOPIC_CEILINGS = {"housing": 3, "bakery": 3, "lawfirm": 2}
# ... and its ``standing`` questions (about the whole assessment, in its own words): at least this many answered so
# (housing: 0 of 8 when it was written; 5 since a question that names nothing and matches nothing said is answered
# with the whole assessment, a change these questions prompted, so no longer an unseen figure).
STANDING_FLOORS = {"housing": 5, "bakery": 6, "lawfirm": 5}


@pytest.mark.parametrize("name", sorted(QUESTION_SETS))
def test_questions_in_peoples_own_words_cite_the_expected_factor(ask_store, journal, name):
    min_cited, min_first = QUESTION_SETS[name]
    questions = load_set(name)
    user = journal[0] if name == "wholesale" else seed(ask_store, questions["journal"])[0]
    cited, first, rows = 0, 0, []
    for item in questions["questions"]:
        intent = analyse_intent(item["q"], ask_store.catalog, ask_store.graph)
        assert intent.factor_ids == [] and intent.archetype_ids == [], f"{item['q']!r} names a factor"
        answer = answer_question(ask_store, user, item["q"])
        factors = [c.factor_id for c in answer.citations]
        cited += item["expected"] in factors
        first += bool(factors) and factors[0] == item["expected"]
        rows.append(f"{item['q']!r}: {answer.found_by} {factors[:3]} expected {item['expected']}")
        assert "Found by:" in answer.text
    report = "\n".join(rows) + f"\ncited {cited}/{len(rows)}, first {first}/{len(rows)}"
    off_topic = [(q, answer_question(ask_store, user, q)) for q in questions.get("off_topic", [])]
    from_journal = [q for q, answer in off_topic if any(c.similarity is not None for c in answer.citations)]
    if off_topic:
        report += f"\noff-topic answered from the journal: {len(from_journal)}/{len(off_topic)} {from_journal}"
    standing = [(q, answer_question(ask_store, user, q).found_by) for q in questions.get("standing", [])]
    about_the_whole = [q for q, found_by in standing if found_by == "standing"]
    if standing:
        report += f"\nabout the whole, answered so: {len(about_the_whole)}/{len(standing)} {standing}"
    print(report)
    assert cited >= min_cited and first >= min_first, report
    assert len(from_journal) <= OFF_TOPIC_CEILINGS.get(name, 0), report
    assert len(about_the_whole) >= STANDING_FLOORS.get(name, 0), report


def test_a_vague_status_question_gets_the_nearest_corroborated_entry_and_is_told_it_is_not_close(ask_store):
    """A status question nothing in the journal is close to, whose nearest entry's factor the catalog also ranks
    among its likeliest, is answered from that entry rather than the latest topic, and says it is not close."""
    clinics = load_set("clinics")
    user, entries = seed(ask_store, clinics["journal"])
    answer = answer_question(ask_store, user, "do we have the hours for this on top of everythng else")  # as typed
    assert answer.found_by == "nearest" and answer.citations[0].factor_id == "staff_capacity"
    assert answer.citations[0].entry_id in entries.values() and answer.citations[0].similarity is not None
    assert "though none is close to it" in answer.text
    off_topic = answer_question(ask_store, user, "what's a good name for a cat")
    assert off_topic.found_by != "nearest"  # nothing the catalog corroborates: the latest topic, as before


def test_what_did_i_say_finds_the_entry_holding_the_words(ask_store, journal):
    user, entries = journal
    for item in HELD_OUT["journal"][:6]:
        words = " ".join(item["said"].split()[3:9])  # a piece of what they said, quoted back
        answer = answer_question(ask_store, user, f"What did I say about {words}?")
        assert answer.intent.question_type == "what_said" and answer.found_by == "journal"
        assert answer.citations[0].entry_id == entries[item["said"]], words
        assert answer.citations[0].said == item["said"]
        assert item["said"][:40] in answer.text


def test_another_persons_entries_are_never_returned_even_with_near_identical_words(ask_store):
    same = [
        {
            "asked": "Tell me a bit about your logistics.",
            "expected": "automation_maturity",
            "said": "We run about 40 delivery vans and the drivers still write their routes on paper forms.",
        },
    ]
    twin = [dict(same[0], said=same[0]["said"].replace("40", "45"), expected="sensor_data")]
    alice, alice_entries = seed(ask_store, same)
    bob, bob_entries = seed(ask_store, twin)
    vectors = ask_store.changes.vectors
    query = WordLlamaEmbedder().embed_query("the delivery vans and the paper forms")
    for user, own in ((alice, alice_entries), (bob, bob_entries)):
        hits = vectors.nearest(user, query, "wordllama-l2_supercat-256", 50)
        assert hits and {h.entry_id for h in hits} == set(own.values())
        answer = answer_question(ask_store, user, "What did I say about the delivery vans?")
        assert {c.entry_id for c in answer.citations} <= set(own.values())
        assert answer.citations[0].entry_id in own.values()
    nobody = f"u-{uuid.uuid4().hex[:12]}"
    ask_store.register_user(UserProfile(user_id=nobody))
    assert vectors.nearest(nobody, query, "wordllama-l2_supercat-256", 50) == []
    answer = answer_question(ask_store, nobody, "What did I say about the delivery vans?")
    assert answer.found_by != "journal" and not answer.has_evidence


def test_a_question_with_nothing_close_in_the_journal_says_how_it_was_answered(ask_store, journal):
    user, _ = journal
    answer = answer_question(ask_store, user, "What's the weather like tomorrow?")
    assert answer.found_by in ("catalog", "none", "standing")  # nothing close: how the whole stands, if anything
    assert not any(c.similarity for c in answer.citations)
    named = answer_question(ask_store, user, "Why is staff capacity so low?")
    assert named.found_by == "names" and named.citations[0].factor_id == "staff_capacity"


def test_export_states_the_vectors_and_erasure_leaves_none(ask_store):
    user, entries = seed(ask_store, HELD_OUT["journal"][:3])
    data = ask_store.personal_data
    exported = data.export(user)
    vectors = {path: doc for path, doc in exported["documents"].items() if f"/{VECTORS}/" in path}
    assert len(vectors) == 3
    for document in vectors.values():
        assert document["embedding"] == {"vector": "stored, server-only", "dimensions": 256}
        assert document["embedding_model"] == "wordllama-l2_supercat-256"
    json.dumps(exported)  # JSON-ready
    data.erase(user)
    assert vectors_of(ask_store.client, user) == {}
    leftovers = [s for s in ask_store.client.collection_group(VECTORS).stream() if s.get("user_id") == user]
    assert leftovers == []  # nowhere in the database (a scan of every vector document)
    hits = ask_store.changes.vectors.nearest(
        user, WordLlamaEmbedder().embed_query("spreadsheets"), "wordllama-l2_supercat-256", 10
    )
    assert hits == []


def test_entry_said_is_what_the_pipeline_embedded(ask_store, journal):
    """The vector stored for an entry embeds exactly ``entry_said(entry)`` (its digest), so reembed can tell."""
    user, entries = journal
    from factor_journal.embedding import text_digest

    stored = vectors_of(ask_store.client, user)
    for item in HELD_OUT["journal"][:4]:
        entry = ask_store.journal.entry(user, item["expected"], entries[item["said"]])
        assert entry is not None
        said = entry_said(entry)
        assert said is not None and item["said"] in said and item["asked"] in said
        assert stored[entry.entry_id]["said_digest"] == text_digest(said)


def test_reembed_over_everyone_pages_through_people_and_resumes_after_one(database, catalog):
    store = FactorJournalStore(database, catalog)
    store.changes.embedder = None  # written before vectors existed
    people = sorted(seed(store, HELD_OUT["journal"][i : i + 1])[0] for i in range(3))
    vectors = store.changes.vectors
    assert list(vectors.user_ids(page=2)) == people
    assert list(vectors.user_ids(after=people[0], page=1)) == people[1:]
    report = ReembedReport()
    for user in vectors.user_ids(after=people[0], page=1):
        vectors.reembed_user(user, WordLlamaEmbedder(), report)
    assert (report.people, report.missing, report.written) == (2, 2, 2)
    assert (report.answers.missing, report.answers.written) == (2, 2)  # their answers' vectors too
    assert vectors_of(database, people[0]) == {} and len(vectors_of(database, people[2])) == 1


def test_a_factor_with_nothing_recorded_cites_what_was_said_about_it_under_another_factor(ask_store):
    """ "Is it worth spending money on AI this year?" is about the budget, under which nothing is recorded; but the
    person said management approved a budget, which was read as data infrastructure.  The answer cites that, says it
    was recorded under another factor, and does not claim nothing said speaks to it."""
    approved = "All over the place, but management just approved a budget to pull it all into a cloud warehouse."
    journal = [
        {"asked": "Where does your data live today?", "said": approved, "expected": "data_infrastructure"},
        {
            "asked": "How much do you trust the numbers in your main systems?",
            "said": "Lots of duplicates in the customer records, we fix them by hand every month.",
            "expected": "data_quality",
        },
        {
            "asked": "Who in the company could build a model?",
            "said": "Nobody, we have no data scientists and no one who has done it.",
            "expected": "ml_expertise",
        },
    ]
    user, entries = seed(ask_store, journal)
    answer = answer_question(ask_store, user, "Is it worth spending money on AI this year, or are we too early?")
    assert "Budget commitment is not assessed yet." in answer.text
    assert [c.entry_id for c in answer.citations] == [entries[approved]]
    assert answer.citations[0].factor_id == "data_infrastructure" and answer.citations[0].similarity is not None
    assert (
        "Nothing is recorded under Budget commitment yet, but you said something near it, recorded under another"
        in answer.text
    )
    assert "management just approved a budget" in answer.text and "nothing said" not in answer.text
    assert "as nothing is recorded under it yet, a search of your own journal by meaning" in answer.text
    # Nothing said about it anywhere: said plainly, as before
    others, _ = seed(ask_store, journal[1:])
    unrelated = answer_question(ask_store, others, "Is it worth spending money on AI this year, or are we too early?")
    assert unrelated.citations == [] and "nothing said in the conversations so far speaks to it" in unrelated.text
