"""The seat for Ask's intent router (``seat_ask``): the own-words questions' exact intent requests, the answerer's
view of them, and a replay of answers through ``answer_question`` and a local stand-in, scored as the Ask tests
score the embedded path, a question without an answer left out and named (never scored)."""

from __future__ import annotations

import json
import re

import pytest

from factor_journal.extraction.prompts import IntentOutput
from factor_journal_tools.ask_sets import ASK_SETS, load_set
from factor_journal_tools.seat import ANSWERS, REQUESTS, VIEWS, Answer, SeatAnswers, check_answers, read_requests
from factor_journal_tools.seat_ask import AskRecord, ask_figures, by_set, render_ask_view, run_sets, score

SMALL = {  # four answers and five questions of the wholesale set: enough to see every path
    "journal": load_set("wholesale")["journal"][:4],
    "questions": load_set("wholesale")["questions"][:3],
    "standing": ["so where are we?"],
    "off_topic": ["got a good recipe for lemon drizzle?"],
}


def intent(question_type: str = "status", *relevant: str) -> str:
    return json.dumps({"question_type": question_type, "relevant_factors": list(relevant)})


def test_score_counts_cited_first_off_topic_and_standing_as_the_ask_tests_do():
    def asked(kind, expected, factors, found_by="journal", from_journal=False):
        return AskRecord("bakery", kind, "q", expected, tuple(factors), found_by, from_journal)

    records = [
        asked("questions", "a", ["a", "b"]),  # cited, first
        asked("questions", "a", ["b", "a"]),  # cited
        asked("questions", "a", []),  # neither
        asked("off_topic", None, ["b"], "model", True),
        asked("off_topic", None, [], "none"),
        asked("standing", None, ["c"], "standing"),
        asked("standing", None, [], "none"),
    ]
    figures = score(records)
    assert (figures["questions"], figures["cited"], figures["first"]) == (3, 2, 1)
    assert (figures["off_topic"], figures["off_topic_from_journal"]) == (2, 1)
    assert (figures["standing"], figures["standing_answered_so"]) == (2, 1)
    assert list(by_set(records)) == ["bakery", "all"]


def test_a_scripted_replay_is_scored_and_a_question_without_an_answer_is_left_out_and_named(ask_store):
    first = run_sets(ask_store, SeatAnswers({}), {"small": SMALL}, embedded=False)
    keys = [request.key for request in first.requests]
    assert len(keys) == 5 and first.missing == keys and not first.records  # nothing answered: nothing scored
    [named, nothing, _, standing, _] = keys
    question = SMALL["questions"][0]
    answers = {
        named: Answer(named, intent("why_value", question["expected"], "no_such_factor"), "scripted-model"),
        nothing: Answer(nothing, "Sorry, I cannot help with that.", "scripted-model"),  # not an intent: falls back
        standing: Answer(standing, intent("standing"), "scripted-model"),
    }
    run = run_sets(ask_store, SeatAnswers(answers), {"small": SMALL})
    assert run.missing == [keys[2], keys[4]] and run.models == {"scripted-model"}
    assert [r.question for r in run.excluded] == [SMALL["questions"][2]["q"], SMALL["off_topic"][0]]
    [scored_named, scored_nothing, scored_standing] = run.records
    assert scored_named.found_by == "model" and scored_named.factors[0] == question["expected"]
    assert scored_nothing.routing_failed and scored_standing.found_by == "standing"
    figures = ask_figures(run, answers)
    seated = figures["seat"]["small"]
    assert figures["model"] == "seat:scripted-model" and not figures["complete"] and figures["missing"] == 2
    assert (seated["questions"], seated["standing"], seated["off_topic"], seated["routing_failed"]) == (2, 1, 0, 1)
    assert seated["cited"] >= 1 and seated["first"] >= 1 and seated["standing_answered_so"] == 1
    assert figures["embedded"]["small"]["questions"] == 2  # the same questions without a model, beside them
    assert figures["embedded_every_question"]["small"]["questions"] == 3
    assert figures["tokens"]["calls"] == 3 and figures["tokens"]["cached"] >= 2048


def test_a_request_depends_on_the_question_and_the_journal_never_on_who_or_the_expected_answer(ask_store):
    """The same journal seeded for another person, with other expected answers to its questions, makes the same
    requests; the journal's own factors are part of what the product sends (its index)."""
    keys = [r.key for r in run_sets(ask_store, SeatAnswers({}), {"one": SMALL}, embedded=False).requests]
    relabelled = {**SMALL, "questions": [{**q, "expected": "ai_strategy"} for q in SMALL["questions"]]}
    assert [r.key for r in run_sets(ask_store, SeatAnswers({}), {"two": relabelled}, embedded=False).requests] == keys
    other_journal = {**SMALL, "journal": [{**item, "expected": "ai_strategy"} for item in SMALL["journal"][:1]]}
    other = run_sets(ask_store, SeatAnswers({}), {"three": other_journal}, embedded=False).requests
    assert not {r.key for r in other} & set(keys)


# The committed request file and view -------------------------------------------------------------------------

ASK_REQUESTS = REQUESTS / "ask.jsonl"


@pytest.mark.skipif(not ASK_REQUESTS.exists(), reason="no intent requests written yet (make seat-requests SPLIT=ask)")
def test_the_committed_intent_requests_and_view_carry_only_what_gemini_is_sent():
    requests = read_requests(ASK_REQUESTS)  # every body hashes to its key
    sets = [load_set(name) for name in ASK_SETS]
    asked = {
        item["q"] if isinstance(item, dict) else item
        for data in sets
        for kind in ("questions", "standing", "off_topic")
        for item in data.get(kind, [])
    }
    assert len({r.key for r in requests}) == len(requests) >= len(asked)
    for request in requests:
        assert set(request.body) == {"contents", "systemInstruction", "generationConfig"}
        lines = request.turn_text.splitlines()
        assert lines[0].startswith("Journal index") and json.loads(lines[-1].removeprefix("Question: ")) in asked
        for line in lines[1:-1]:
            assert re.match(r'- [a-z_]+ \([^)]+\): (?:\d+/100|no value); (?:"|no words)', line), line
    view = VIEWS / "ask.txt"
    shown = set(re.findall(r"^=+ REQUEST \d+ of \d+ ([0-9a-f]{64}) =+$", view.read_text(encoding="utf-8"), re.M))
    answered = {request.key for request in requests} - shown
    assert view.read_text(encoding="utf-8") == render_ask_view(requests, answered), "regenerate the view"
    text = ASK_REQUESTS.read_text(encoding="utf-8") + view.read_text(encoding="utf-8")
    assert '"expected"' not in text
    for data in sets:
        assert data["about"][:60] not in text  # how a set was written is nobody's business in the seat
    if (ANSWERS / "ask.jsonl").exists():
        from factor_journal_tools.seat import read_answers

        figures = check_answers(requests, read_answers(ANSWERS / "ask.jsonl"), schema=IntentOutput)
        assert not figures["unknown_keys"] and not figures["malformed"]
