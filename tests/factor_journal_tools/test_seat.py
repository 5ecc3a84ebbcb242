"""The seat's files and figures, without the emulator: request keys, request files kept exactly, the answerer's view
(the static prefix once, then per request only its key and text), answers and their form, tokens and cost, and
the committed request files and views, which carry nothing of the corpus but its questions and answers."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from factor_journal.candidates import candidate_view
from factor_journal.extraction.base import ExchangeTurn, ExtractionRequest
from factor_journal.extraction.gemini import GeminiExtractor, GeminiSettings
from factor_journal_tools.corpus import CORPUS, load_corpus, load_screening
from factor_journal_tools.report import render_report, seat_cost_block, write_block
from factor_journal_tools.seat import (
    REQUESTS,
    SCREENING_SPLITS,
    VIEWS,
    Answer,
    SeatAnswers,
    SeatFileError,
    SeatRequest,
    check_answers,
    corpus_split,
    estimated_usage,
    every_nth,
    first_round,
    mixed,
    monthly_cost,
    read_answers,
    read_requests,
    record_seat_figures,
    render_view,
    request_key,
    screening_figures,
    write_requests,
)
from factor_journal_tools.seat_run import prompt_version
from factor_journal_tools.vertex_stand_in import VertexStandIn


def _requests(catalog, texts: list[str]) -> list[SeatRequest]:
    """The real extractor's request bodies for ``texts``, as the stand-in received them."""
    seat = SeatAnswers({})
    with VertexStandIn(respond=seat.respond) as vertex:
        settings = GeminiSettings(project="p", base_url=vertex.url, max_attempts=1, evidence_check=False)
        extractor = GeminiExtractor(settings, catalog=catalog)
        for text in texts:
            request = ExtractionRequest(
                user_id="u",
                session_id="s",
                turn_id="t",
                text=text,
                recent=[ExchangeTurn(role="assistant", text="Where does your data live?")],
                candidates=[candidate_view(catalog, "data_infrastructure", None)],
            )
            with pytest.raises(Exception, match="no answer in the seat"):
                extractor.extract(request)
    return list(seat.seen.values())


@pytest.fixture(scope="module")
def requests(catalog):
    return _requests(catalog, ["In a Snowflake warehouse, loaded nightly.", "Spreadsheets, mostly."])


def test_the_key_is_the_sha256_of_the_canonical_body():
    body = {"b": [1, {"y": "é", "x": 2}], "a": "text"}
    assert request_key(body) == request_key(json.loads(json.dumps(body, sort_keys=True)))  # order does not matter
    assert re.fullmatch(r"[0-9a-f]{64}", request_key(body)) and request_key(body) != request_key({**body, "a": "t"})


def test_a_request_file_keeps_every_body_exactly_with_the_static_part_once(tmp_path, requests):
    path = tmp_path / "r.jsonl"
    write_requests(path, requests)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1 + len(requests)  # one static part for every request
    back = read_requests(path)
    assert [r.body for r in back] == [r.body for r in requests] and [r.key for r in back] == [r.key for r in requests]
    tampered = json.loads(lines[1])
    tampered["contents"][0]["parts"][0]["text"] += " (edited)"
    path.write_text("\n".join([lines[0], json.dumps(tampered), *lines[2:]]) + "\n", encoding="utf-8")
    with pytest.raises(SeatFileError, match="does not hash to its key"):
        read_requests(path)


def test_the_view_gives_the_static_prefix_once_then_each_request_waiting(requests):
    view = render_view("pilot", requests, answered=[requests[0].key])
    instruction = requests[0].system_instruction
    assert view.count(instruction) == 1 and "- data_quality (Data quality; " in view
    assert requests[0].key not in view and f"REQUEST 1 of 1 {requests[1].key}" in view
    assert requests[1].turn_text in view and "Spreadsheets, mostly." in view
    assert '"thinking_budget": 0' in view and '"updates"' in view  # the generation config and the schema
    assert "Snowflake" not in view  # the answered request is not shown again


def test_a_turn_read_twice_is_two_requests_whose_view_and_version_name_both_configs(catalog, requests):
    """``readings = 2``: each turn is two requests (the second sampled with a seed), the view groups them by static
    part and numbers them as printed, and the prompt version covers both static parts, in any arrival order."""
    seat = SeatAnswers({})
    with VertexStandIn(respond=seat.respond) as vertex:
        settings = GeminiSettings(project="p", base_url=vertex.url, max_attempts=1, readings=2, evidence_check=False)
        extractor = GeminiExtractor(settings, catalog=catalog)
        for text in ("In a Snowflake warehouse, loaded nightly.", "Spreadsheets, mostly."):
            request = ExtractionRequest(user_id="u", session_id="s", turn_id="t", text=text)
            with pytest.raises(Exception, match="no answer in the seat"):
                extractor.extract(request)
    twice = list(seat.seen.values())
    assert len(twice) == 4 and len({request_key(r.static) for r in twice}) == 2
    view = render_view("pilot", twice)
    assert view.count("SYSTEM INSTRUCTION 1 of 2") == 1 and view.count("SYSTEM INSTRUCTION 2 of 2") == 1
    numbers = [int(n) for n in re.findall(r"REQUEST (\d+) of 4", view)]
    assert numbers == [1, 2, 3, 4]  # in the order printed
    configs = [line for line in view.splitlines() if '"temperature"' in line]
    assert len(configs) == 2 and sum('"seed": 2' in line for line in configs) == 1  # the second reading's config
    version = prompt_version(twice)
    assert version == prompt_version(list(reversed(twice))) and len(version) == 12
    assert version != prompt_version(requests) == request_key(requests[0].static)[:12]


def test_the_requests_a_turn_sends_in_parallel_are_listed_the_same_way_whichever_arrives_first():
    """A turn's reading and evidence check race to the stand-in; once the turn is done (``turn_asked``) they are
    settled by static part, so a request file and its view come out the same on every run."""

    def body(instruction: str, text: str) -> dict:
        return {"systemInstruction": {"parts": [{"text": instruction}]}, "contents": [{"parts": [{"text": text}]}]}

    orders = []
    for first, second in (("reader", "check"), ("check", "reader")):
        seat = SeatAnswers({})
        before = len(seat.log)
        seat.respond(body(first, "turn 1"))
        seat.respond(body(second, "turn 1"))
        assert len(seat.turn_asked(before)) == 2
        before = len(seat.log)
        seat.respond(body("check", "turn 2"))
        seat.respond(body("reader", "turn 2"))
        seat.turn_asked(before)
        seat.respond(body("reader", "turn 3"))  # a turn not done yet: listed last, as it came
        orders.append([(r.system_instruction, r.turn_text) for r in seat.requests])
    assert orders[0] == orders[1] and orders[0][-1] == ("reader", "turn 3")
    assert [text for _, text in orders[0]] == ["turn 1", "turn 1", "turn 2", "turn 2", "turn 3"]


def test_the_seat_serves_answers_by_key_with_estimated_usage_and_lists_what_is_missing(requests):
    text = '{"updates": []}'
    seat = SeatAnswers({requests[0].key: Answer(requests[0].key, text, "model-x")})
    answered = seat.respond(requests[0].body)
    missing = seat.respond(requests[1].body)
    assert answered.status == 200 and missing.status == 404 and seat.missing == [requests[1].key]
    usage = answered.body["usageMetadata"]
    assert answered.body["modelVersion"] == "model-x"
    assert usage["cachedContentTokenCount"] >= 2048 and usage["promptTokenCount"] > usage["cachedContentTokenCount"]
    assert usage["candidatesTokenCount"] == 4 and "thoughtsTokenCount" not in usage  # thinking off: none
    assert estimated_usage(requests[0], text)["thinking"] == 0


def test_answers_read_by_key_the_last_line_counting(tmp_path):
    key = "a" * 64
    path = tmp_path / "answers.jsonl"
    lines = [
        {"key": key, "text": '{"updates": []}', "model": "m"},
        {"key": key, "text": {"updates": [{"factor_id": "data_quality"}]}, "model": "m"},
    ]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    answers = read_answers(path)
    assert list(answers) == [key] and json.loads(answers[key].text)["updates"][0]["factor_id"] == "data_quality"
    path.write_text(json.dumps({"key": key, "text": "{}"}) + "\n")
    with pytest.raises(SeatFileError, match="answers.jsonl:1"):
        read_answers(path)
    assert read_answers(tmp_path / "none.jsonl") == {}


def test_check_answers_names_unknown_keys_and_output_outside_the_schema(requests):
    good, bad = requests[0].key, requests[1].key
    answers = {
        good: Answer(good, '{"updates": []}', "m"),
        bad: Answer(bad, "Sure! {updates}", "m"),
        "f" * 64: Answer("f" * 64, '{"updates": []}', "m"),
    }
    figures = check_answers(requests, answers)
    assert (figures["answered"], figures["waiting"], figures["unknown_keys"]) == (2, 0, ["f" * 64])
    assert list(figures["malformed"]) == [bad] and figures["models"] == ["m"]


def test_the_monthly_cost_at_list_prices():
    cost = monthly_cost({"prompt": 6000, "cached": 5500, "response": 100, "thinking": 0})
    # 60,000 answers: 500 input at $0.30/M + 5,500 cached at $0.03/M + 100 output at $2.50/M
    assert cost == {"with_cache_hits": 33.9, "without_cache": 123.0, "output_share": 0.442}
    assert monthly_cost({"prompt": None}) is None


def test_first_round_is_dev_up_to_its_last_id_in_order():
    turns = [SimpleNamespace(id=f"dev-{n:04d}") for n in (1, 331, 332, 333, 4000)]
    assert [turn.id for turn in first_round(turns)] == ["dev-0001", "dev-0331", "dev-0332"]


def test_a_seat_split_drawn_from_dev_reads_dev():
    splits = ("pilot", "first_round", "mixed_tune", "mixed_check", "validation", "test")
    assert [corpus_split(split) for split in splits] == ["dev", "dev", "dev", "dev", "validation", "test"]


def test_the_mixed_halves_are_later_factor_turns_of_the_mixed_kinds_dealt_alternately():
    def turn(n: int, kind: str = "factor", tags: tuple[str, ...] = ("multi",)) -> SimpleNamespace:
        return SimpleNamespace(id=f"dev-{n:04d}", kind=kind, tags=tags)

    turns = [
        turn(5),  # the first round: never in a mixed half
        turn(400, tags=("hedge",)),  # not a mixed kind
        turn(401, kind="off_topic", tags=("neighbour",)),
        *(turn(n, tags=("neighbour", "number") if n % 2 else ("negation",)) for n in range(500, 506)),
    ]
    tune, check = mixed(turns, "mixed_tune"), mixed(turns, "mixed_check")
    assert [t.id for t in tune] == ["dev-0500", "dev-0502", "dev-0504"]
    assert [t.id for t in check] == ["dev-0501", "dev-0503", "dev-0505"]


def test_every_nth_spreads_a_sample_over_the_split():
    assert every_nth(list(range(100)), 4) == [0, 25, 50, 75] and every_nth([1, 2], 5) == [1, 2]


def _seat_results() -> dict:
    from factor_journal_tools.evaluate import TurnRecord, score

    figures = score([TurnRecord("t1", "factor", ("no_cue_words",), {"data_quality": 20}, {"data_quality": 25})])
    figures["seat"] = {
        "complete": False,
        "missing": 3,
        "tokens": {"prompt": 6000, "cached": 5500, "response": 100, "thinking": 0, "calls": 1},
        "cost_per_month": monthly_cost({"prompt": 6000, "cached": 5500, "response": 100, "thinking": 0}),
    }
    return {"extractors": {"seat:model-x": {"splits": {"validation": figures}}}}


def test_the_report_names_the_model_in_the_seat_and_says_when_answers_are_missing():
    report = render_report(_seat_results())
    section = report[report.index("## A language model in Gemini's seat") :]
    assert "| model-x | validation | 1 | 100.0% |" in section and "no: 3 requests without an answer" in section
    assert "$33.90" in section and "deploybase.ai" in section and "context-cache-overview" in section


def test_the_report_shows_a_screening_replay_per_kind():
    results = _seat_results()
    results["seat_screening"] = {
        "screening_heldout": {
            "by_kind": {"deferral": {"turns": 2, "written": 1}, "evidence": {"turns": 4, "written": 3}},
            "must_change_nothing": {"turns": 2, "written": 1},
            "look_alikes": {"turns": 4, "written": 3},
            "answered_by": ["model-x"],
            "prompt_version": "abc123",
            "complete": True,
        }
    }
    section = render_report(results)[render_report(results).index("The screen's sets in the seat") :]
    assert "| model-x | screening_heldout | 1 of 2 | – | – | 1 of 2 | – | – | 3 of 4 | abc123 | yes |" in section


def test_the_cost_block_replaces_its_own_part_of_a_page(tmp_path):
    page = tmp_path / "benchmarks.md"
    page.write_text("# Benchmarks\n\nHand-written.\n", encoding="utf-8")
    write_block(page, "seat-cost", seat_cost_block(_seat_results()))
    write_block(page, "seat-cost", seat_cost_block(_seat_results()))
    text = page.read_text(encoding="utf-8")
    assert text.startswith("# Benchmarks\n\nHand-written.\n") and text.count("<!-- seat-cost") == 1
    assert "$33.90" in text


# The committed request files and views -----------------------------------------------------------------------

SEAT_FILES = sorted(p for p in REQUESTS.glob("*.jsonl") if p.stem != "ask") if REQUESTS.exists() else []
# (ask.jsonl holds the intent router's requests, not the reader's: test_seat_ask.py)
LABEL_FIELDS = ("expected", "kind", "tags", "factor_turn", "band")


@pytest.mark.parametrize("path", SEAT_FILES, ids=[p.stem for p in SEAT_FILES])
def test_committed_requests_and_views_carry_no_corpus_id_label_or_tag(path: Path):
    """What an answerer reads is the view; it is rendered from the requests alone, and the requests are exactly the
    bodies the product posts: only the system instruction, the generation config and the per-turn text."""
    requests = read_requests(path)  # every body hashes to its key
    assert requests
    for request in requests:
        assert set(request.body) == {"contents", "systemInstruction", "generationConfig"}
        assert [set(content) for content in request.body["contents"]] == [{"parts", "role"}]
        for line in request.turn_text.splitlines():
            assert re.match(r"(?:Likely factors|- [a-z_]+: |Recent exchanges:|User: \"|Assistant: \"|Turn to )", line)
    view = VIEWS / f"{path.stem}.txt"
    shown = set(re.findall(r"^=+ REQUEST \d+ of \d+ ([0-9a-f]{64}) =+$", view.read_text(encoding="utf-8"), re.M))
    answered = {request.key for request in requests} - shown  # the view was rendered when these had their answers
    assert view.read_text(encoding="utf-8") == render_view(path.stem, requests, answered), "regenerate the view"
    corpus = CORPUS / f"{corpus_split(path.stem)}.jsonl"
    text = path.read_text(encoding="utf-8") + view.read_text(encoding="utf-8")
    if corpus.exists():
        load = load_screening if path.stem in SCREENING_SPLITS else load_corpus
        assert not [turn.id for turn in load(corpus) if turn.id in text]
    for name in LABEL_FIELDS:
        assert f'"{name}"' not in text


def test_a_replay_replaces_the_figures_of_answers_the_split_no_longer_holds():
    results = {
        "extractors": {
            "semantic": {"splits": {"test": {"band_accuracy": 0.7}}},
            "seat:old": {"splits": {"test": {"band_accuracy": 0.9}, "validation": {"band_accuracy": 0.95}}},
            "seat:gone": {"splits": {"test": {"band_accuracy": 0.8}}},
        }
    }
    record_seat_figures(results, "seat:new", "test", {"band_accuracy": 0.92, "measured_at": "t"})
    extractors = results["extractors"]
    assert sorted(extractors) == ["seat:new", "seat:old", "semantic"]
    assert extractors["seat:old"]["splits"] == {"validation": {"band_accuracy": 0.95}}
    new = {"band_accuracy": 0.92, "measured_at": "t"}
    assert extractors["seat:new"] == {"splits": {"test": new}, "model": "seat:new", "measured_at": "t"}
    assert extractors["semantic"]["splits"] == {"test": {"band_accuracy": 0.7}}


def test_a_screening_replay_counts_per_kind_the_turns_that_wrote_anything():
    def record(kind: str, stored: dict[str, float]) -> SimpleNamespace:
        return SimpleNamespace(kind=kind, stored=stored)

    figures = screening_figures(
        [
            record("deferral", {}),
            record("deferral", {"privacy_protection": 50.0}),
            record("pause", {}),
            record("evidence", {"data_quality": 20.0}),
            record("evidence", {}),
        ]
    )
    assert figures["by_kind"] == {
        "deferral": {"turns": 2, "written": 1},
        "evidence": {"turns": 2, "written": 1},
        "pause": {"turns": 1, "written": 0},
    }
    assert figures["must_change_nothing"] == {"turns": 3, "written": 1}
    assert figures["look_alikes"] == {"turns": 2, "written": 1}
