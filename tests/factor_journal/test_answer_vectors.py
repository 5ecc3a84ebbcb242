"""Nothing said is forgotten (issue 47), on the Firestore emulator: every answer a person gives carries a vector,
whatever the reader made of it, and Ask finds it.

The answers are analysed by the real pipeline (only the model is scripted); the vectors are the embedded model's
and the search is the emulator's ``find_nearest`` pre-filtered to the person.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from google.cloud import firestore

from doubles import ReadingsByText, reading
from factor_journal.documents import ExtractionOutcome
from factor_journal.embedding import WordLlamaEmbedder, text_digest
from factor_journal.models import SaidIn
from factor_journal.pipeline import TurnProcessor
from factor_journal.questions import answer_question
from factor_journal.questions.composing import NOT_ASSESSED
from factor_journal.repositories.paths import ANSWER_VECTORS
from factor_journal.repositories.people import TurnRef
from factor_journal.repositories.vectors import ReembedReport, answer_id_of
from factor_journal.settings import Settings
from factor_journal.store import FactorJournalStore, TurnContext

ASKED = "How do the figures get to management each month?"
MISSED = (
    "Every month our controller spends two days making the sales report and the stock report agree, "
    "and they still never quite do."
)
UNDERSTOOD = "We have two data scientists in the BI team and nobody who has put a model into production."
DEFERRAL = "I don't know, ask Sam in IT."
TELEMATICS = (
    "Our drivers fill in paper route sheets that the office types into the ERP at the end of the week, the "
    "depot keeps its own spreadsheet of fuel and repairs, and nobody has ever joined the two up properly, which "
    "means we only notice problems weeks later; the one thing that works is the forklift telematics box that "
    "emails the warehouse manager a daily report of impacts and idle hours."
)
READINGS = {
    MISSED: [],  # the reader understands nothing from it
    UNDERSTOOD: [reading("ml_expertise", 30, 0.7, rationale="Two data scientists, nobody in production")],
    DEFERRAL: [],
    TELEMATICS: [reading("data_infrastructure", 25, 0.7, rationale="Paper route sheets typed into the ERP")],
}


@pytest.fixture
def store(firestore_client: firestore.Client, catalog) -> FactorJournalStore:
    store = FactorJournalStore(firestore_client, catalog)
    store.changes.embedder = WordLlamaEmbedder()
    return store


def answer(store: FactorJournalStore, user: str, session: str, said: str, at: datetime, **processor: object) -> str:
    """The assistant asks, the person answers ``said`` at ``at``, and the pipeline analyses it; the answer's turn."""
    store.add_turn(user, session, "assistant", ASKED, created_at=at - timedelta(seconds=40))
    turn = store.add_turn(user, session, "user", said, created_at=at)
    TurnProcessor(store, ReadingsByText(READINGS), **processor).process(user, session, turn)  # type: ignore[arg-type]
    return turn


def answer_vectors(store: FactorJournalStore, user: str) -> dict[str, dict]:
    return {s.id: s.to_dict() or {} for s in store.paths.answer_vectors(user).stream()}


def test_an_answer_nothing_was_understood_from_is_cited_in_other_words_and_erased_with_the_person(store, make_user):
    user = make_user(store)
    session = store.start_session(user)
    said_at = datetime(2026, 3, 9, 10, 15, tzinfo=UTC)
    answer(store, user, session, UNDERSTOOD, said_at - timedelta(days=2))
    missed = answer(store, user, session, MISSED, said_at)
    assert ExtractionOutcome.of(store.ledger.data(TurnRef(user, session, missed))).status == "no_update"  # type: ignore[union-attr]
    vector = answer_vectors(store, user)[answer_id_of(session, missed)]
    assert (vector["status"], vector["entries"], vector["understood"], vector["user_id"]) == (
        "no_update",
        {},
        False,
        user,
    )
    assert vector["said_digest"] == text_digest(MISSED) and vector["embedding_model"] == "wordllama-l2_supercat-256"

    asked = answer_question(store, user, "Why does it take our controller days to get the month closed?")
    [cited] = asked.unassessed_answers
    assert (cited.session_id, cited.turn_id, cited.said) == (session, missed, MISSED)
    assert cited.date == said_at
    assert f"09 Mar 2026: “{MISSED}” ({NOT_ASSESSED})" in asked.text
    assert "nothing said in the conversations so far speaks to it" not in asked.text
    assert "every answer you gave, understood or not" in asked.text  # the "Found by" says so

    exported = store.personal_data.export(user)["documents"]
    stated = [doc for path, doc in exported.items() if f"/{ANSWER_VECTORS}/" in path]
    assert len(stated) == 2 and all(
        d["embedding"] == {"vector": "stored, server-only", "dimensions": 256} for d in stated
    )
    store.personal_data.erase(user)
    assert answer_vectors(store, user) == {}
    assert [s for s in store.client.collection_group(ANSWER_VECTORS).stream() if s.get("user_id") == user] == []
    query = WordLlamaEmbedder().embed_query("the controller and the month-end close")
    assert store.vectors.answers.nearest(user, query, "wordllama-l2_supercat-256", 10) == []


def test_every_analysed_answer_carries_its_vector_written_with_its_outcome(store, make_user):
    """Understood (with the entries it fed), nothing understood, refused by the screen: each answer analysed has a
    vector, written in the transaction that settles its turn; an answer over the rate limit has none until it is
    analysed."""
    user = make_user(store)
    session = store.start_session(user)
    now = datetime(2026, 3, 9, 10, 0, tzinfo=UTC)
    limited = {"config": Settings(turns_per_minute=1), "enforce_rate_limits": True}
    understood = answer(store, user, session, UNDERSTOOD, now)
    deferred = answer(store, user, session, DEFERRAL, now + timedelta(minutes=1), **limited)  # the minute's first
    over = answer(store, user, session, MISSED, now + timedelta(minutes=1, seconds=5), **limited)  # its second
    stored = answer_vectors(store, user)
    entry = store.history(user, "ml_expertise").entries[0]
    assert stored[answer_id_of(session, understood)]["entries"] == {entry.entry_id: "ml_expertise"}
    assert stored[answer_id_of(session, understood)]["understood"] is True
    refused = stored[answer_id_of(session, deferred)]
    assert (refused["status"], refused["screened"], refused["entries"]) == ("no_update", "deferral", {})
    assert ExtractionOutcome.of(store.ledger.data(TurnRef(user, session, over))).status == "rate_limited"  # type: ignore[union-attr]
    assert answer_id_of(session, over) not in stored  # kept, not analysed: no vector yet
    TurnProcessor(store, ReadingsByText(READINGS)).process(user, session, over, force=True)  # the person's reprocess
    assert answer_vectors(store, user)[answer_id_of(session, over)]["status"] == "no_update"

    turn = store.add_turn(user, session, "user", "We buy our parts from three suppliers.", created_at=now)
    store.stats.reset()
    store.record_inferences(
        user,
        [],
        turn=TurnContext(
            session_id=session, turn_id=turn, observed_at=now, answer="We buy our parts from three suppliers."
        ),
    )
    assert store.stats.transactions == 1 and answer_id_of(session, turn) in answer_vectors(store, user)


def test_what_did_i_say_finds_the_answer_holding_the_words_understood_or_not(store, make_user):
    """The words past an excerpt's 240 characters are found through the answer (its vector embeds it whole), and
    cited through the entry it fed; the words of an answer nothing was understood from are cited as the person's."""
    user = make_user(store)
    session = store.start_session(user)
    now = datetime.now(UTC) - timedelta(hours=1)
    answer(store, user, session, UNDERSTOOD, now - timedelta(minutes=5))
    long = answer(store, user, session, TELEMATICS, now)
    missed = answer(store, user, session, MISSED, now + timedelta(minutes=3))
    [entry] = [e for e in store.history(user, "data_infrastructure").entries if e.turn_id == long]
    assert "telematics" not in entry.conversation_excerpt  # cut at 240 characters: not in the entry's vector

    telematics = answer_question(store, user, "What did I say about the forklift telematics box?")
    assert telematics.found_by == "journal" and telematics.citations[0].entry_id == entry.entry_id
    query, model = WordLlamaEmbedder().embed_query("the forklift telematics box"), "wordllama-l2_supercat-256"
    [by_answer] = [hit for hit in store.vectors.answers.nearest(user, query, model, 8) if hit.turn_id == long]
    [by_entry] = [hit for hit in store.vectors.nearest(user, query, model, 8) if hit.entry_id == entry.entry_id]
    assert telematics.citations[0].similarity == round(by_answer.similarity, 3) > by_entry.similarity + 0.05
    assert telematics.unassessed_answers == []  # cited through the entry it fed, not as words apart
    report = answer_question(store, user, "What did I tell you about the sales report and the stock report?")
    assert [a.turn_id for a in report.unassessed_answers] == [missed]
    assert report.lines[0].plain.startswith("What you said that is not part of the assessment yet")


def test_reembed_brings_the_answers_vectors_to_the_model_and_the_turns(store, make_user):
    user = make_user(store)
    session = store.start_session(user)
    now = datetime.now(UTC) - timedelta(hours=1)
    kept = answer(store, user, session, UNDERSTOOD, now)
    answer(store, user, session, MISSED, now + timedelta(minutes=2))
    embedder, vectors = WordLlamaEmbedder(), store.vectors
    current = ReembedReport()
    vectors.reembed_user(user, embedder, current)
    assert (current.answers.answers, current.answers.current, current.answers.written) == (2, 2, 0)

    gone = store.add_turn(user, session, "user", "A turn deleted later", created_at=now + timedelta(minutes=4))
    TurnProcessor(store, ReadingsByText(READINGS)).process(user, session, gone)
    store.paths.turn(user, session, gone).delete()
    store.paths.answer_vector(user, answer_id_of(session, kept)).update({"embedding_model": "another-model"})
    stale = ReembedReport()
    vectors.reembed_user(user, embedder, stale)
    assert (stale.answers.stale, stale.answers.orphans, stale.answers.written, stale.answers.removed) == (1, 1, 1, 1)
    assert answer_vectors(store, user)[answer_id_of(session, kept)]["embedding_model"] == embedder.model_id
    again = ReembedReport()
    vectors.reembed_user(user, embedder, again)
    assert again.needs_work == 0 and again.answers.written == 0  # idempotent


def test_an_answer_its_person_says_was_about_a_factor_is_cited_through_that_entry_no_longer_as_unread(store, make_user):
    """Issue 45 meets issue 47: "This was about…" makes an answer part of the assessment, so its vector lists the
    entry it fed, in the same transaction as the person's reading."""
    user = make_user(store)
    session = store.start_session(user)
    missed = answer(store, user, session, MISSED, datetime.now(UTC) - timedelta(minutes=5))
    said = SaidIn(session_id=session, turn_id=missed, words=MISSED)
    entry = store.correct(user, "data_quality", 20, "User said what their answer was about", said=said, told=True)

    vector = answer_vectors(store, user)[answer_id_of(session, missed)]
    assert (vector["entries"], vector["understood"]) == ({entry.entry_id: "data_quality"}, True)
    reply = answer_question(store, user, "Why does closing the month take our controller so long?")
    assert NOT_ASSESSED not in reply.text
