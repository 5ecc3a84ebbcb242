"""The model as intent router for Ask, end to end without a network: ``answer_question`` with the real
``GeminiIntentReader`` against a local stand-in of Vertex AI's ``generateContent`` scripted with the model's intent,
on the Firestore emulator, over a journal seeded as the Ask tests seed theirs (``ask_sets.seed``)."""

from __future__ import annotations

import json

import pytest

from factor_journal.extraction.gemini import GeminiExtractor, GeminiIntentReader, GeminiSettings
from factor_journal.extraction.prompts import intent_instruction
from factor_journal.questions import answer_question
from factor_journal.questions.composing import FOUND_BY_TEXT, READ_BY_MODEL, ROUTER_FAILED
from factor_journal.store import FactorJournalStore
from factor_journal_tools.ask_sets import load_set, seed
from vertex_stand_in import VertexStandIn, error, output

JOURNAL = load_set("wholesale")["journal"][:6]  # data quality, sponsorship, the vans, budget, ML expertise, forklifts
VANS = JOURNAL[2]
FORKLIFTS = JOURNAL[5]


def settings(url: str) -> GeminiSettings:
    return GeminiSettings(project="demo-factor-journal", base_url=url, timeout_seconds=5.0, max_attempts=1)


def scripted(question_type: str = "status", relevant: list[str] | None = None, **more: object) -> str:
    return json.dumps({"question_type": question_type, "relevant_factors": relevant or [], **more})


@pytest.fixture(scope="module")
def journal(ask_store: FactorJournalStore) -> tuple[str, dict[str, str]]:
    return seed(ask_store, JOURNAL)


def ask(store: FactorJournalStore, user: str, question: str, *steps):
    with VertexStandIn(list(steps)) as vertex:
        router = GeminiIntentReader(GeminiExtractor(settings(vertex.url), catalog=store.catalog), store.catalog)
        return answer_question(store, user, question, router=router), vertex


def test_the_factor_the_model_names_is_answered_from_the_journal_and_an_unknown_id_is_dropped(ask_store, journal):
    user, entries = journal
    intent = scripted(
        "what_said",
        [VANS["expected"], "no_such_factor"],
        entities={"factors": [], "project_types": ["teleportation"]},
        needs_history=True,
        citations=[{"factor_id": "no_such_factor", "said": "we are fully AI ready"}],  # not in the schema: ignored
    )
    answer, vertex = ask(ask_store, user, "what was that about the paper forms in the cabs?", output(intent))
    assert answer.found_by == "model" and answer.routed_by == "gemini" and not answer.routing_failed
    assert answer.intent.factor_ids == [VANS["expected"]] and answer.intent.archetype_ids == []
    assert answer.citations[0].factor_id == VANS["expected"]
    assert answer.citations[0].entry_id == entries[VANS["said"]] and answer.citations[0].said == VANS["said"]
    assert {c.factor_id for c in answer.citations} == {VANS["expected"]}  # from the journal, never from the model
    assert "no_such_factor" not in answer.text and "fully AI ready" not in answer.text
    assert f"Found by: {FOUND_BY_TEXT['model']}." in answer.text
    [body] = vertex.requests  # one structured call: the static prefix, the schema, the journal index, the question
    assert body["systemInstruction"]["parts"][0]["text"] == intent_instruction(ask_store.catalog)
    config = body["generationConfig"]
    assert config["responseMimeType"] == "application/json" and "question_type" in json.dumps(config["responseSchema"])
    assert list(config["thinkingConfig"].values()) == [0]  # the thinking budget, set explicitly
    prompt = vertex.prompt()
    assert prompt.endswith('Question: "what was that about the paper forms in the cabs?"')
    for item in JOURNAL:  # each factor on record with the person's last words, the newest first
        assert f"- {item['expected']} (" in prompt and json.dumps(item["said"][:60])[:-1] in prompt
    assert prompt.index(FORKLIFTS["expected"]) < prompt.index(VANS["expected"])
    assert user not in json.dumps(body)  # nothing that names the person


def test_a_question_about_the_whole_is_answered_from_the_summary(ask_store, journal):
    user, _ = journal
    answer, _ = ask(ask_store, user, "where are our biggest gaps right now?", output(scripted("standing")))
    assert answer.found_by == "standing" and answer.routed_by == "gemini"
    assert f"Found by: {READ_BY_MODEL}{FOUND_BY_TEXT['standing']}" in answer.text


def test_when_the_model_names_no_factor_the_search_by_meaning_still_runs(ask_store, journal):
    user, entries = journal
    answer, _ = ask(ask_store, user, "what did I tell you about the forklifts?", output(scripted("what_said")))
    assert answer.found_by == "journal" and answer.routed_by == "gemini"
    assert answer.citations[0].entry_id == entries[FORKLIFTS["said"]]
    assert f"Found by: {READ_BY_MODEL}{FOUND_BY_TEXT['journal']}" in answer.text


@pytest.mark.parametrize("step", [error(503), output("Sure! The question is about vans."), output('{"factors": 1}')])
def test_a_failed_call_falls_back_to_the_embedded_path_and_says_so(ask_store, journal, step):
    user, _ = journal
    question = "what did I tell you about the forklifts?"
    answer, vertex = ask(ask_store, user, question, step)
    assert len(vertex.requests) == 1  # one call (its retries are the SDK's; one attempt here)
    alone = answer_question(ask_store, user, question)
    assert answer.routing_failed and answer.routed_by == "embedded"
    assert [c.entry_id for c in answer.citations] == [c.entry_id for c in alone.citations]
    assert answer.found_by == alone.found_by == "journal"
    assert answer.text == alone.text.replace(FOUND_BY_TEXT["journal"], FOUND_BY_TEXT["journal"] + ROUTER_FAILED)
