"""``make seat-requests`` and ``make seat-replay``: the product's Gemini path, with a language model in Gemini's seat.

    python -m factor_journal_tools.seat_run requests --split validation   # the requests and the answerer's view
    python -m factor_journal_tools.seat_run replay --split validation     # the answers through the product, scored
    python -m factor_journal_tools.seat_run serve --split demo --port 8765  # a stand-in serving the answers
    python -m factor_journal_tools.seat_run check --split validation      # the answers' form (no emulator)

Every turn of a split goes through the real pipeline on the Firestore emulator exactly as ``make eval`` runs it
(``evaluate.run_turn``: a fresh person, the question and the answer written as turns, ``TurnProcessor.process``),
with the real ``GeminiExtractor`` pointed at a local stand-in of ``generateContent`` that serves the committed
answers by the request's key (``seat.SeatAnswers``).  A request without an answer is answered HTTP 404: its turn
fails at once, and is **excluded** from the scores, listed, and the run says it is incomplete (never scored as
empty).  So both commands are one run:

* ``requests`` writes every request of the split (``eval/seat/requests/<split>.jsonl``) and the view of those
  not answered yet (``eval/seat/views/<split>.txt``), and the share of expected factors that reach the model;
* ``replay`` scores the answered turns as ``make eval`` does (``eval/results.json``, ``eval/REPORT.md``, the
  extractor named ``seat:<model>``), with tokens per answer (estimated) and the cost at list prices; ``test`` is
  scored once per version (``eval/test_scorings.jsonl``) and only when every request has its answer.

Splits: ``dev``, ``validation``, ``test``, ``pilot`` (40 dev turns), ``first_round`` (dev's first round, written
with the catalog before the later rounds, as test was: the labels' oldest conventions, read where test is not),
``mixed_tune`` and ``mixed_check`` (200 each of dev's later turns about several or neighbouring factors or said with
a negation: a change read on ``mixed_tune``'s misses is checked on ``mixed_check``, never read), ``screening`` and
``screening_heldout`` (the screen's sets, no factor labels: a replay counts per kind the turns that wrote anything)
and ``demo`` (the demo's seeded conversations, person by person: a person's later turns carry what the earlier
answers set, so they are reached only once the earlier ones are answered; run ``requests`` again after each round
of answers).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import sys
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from factor_journal.catalog import load_catalog
from factor_journal.extraction.base import ExtractionOutput
from factor_journal_tools.corpus import CORPUS, REPO, CorpusTurn, load_corpus, load_screening
from factor_journal_tools.evaluate import (
    RESULTS,
    TimedExtractor,
    TurnRecord,
    read_results,
    run_turn,
    score,
    write_results,
)
from factor_journal_tools.report import render_report, seat_cost_block, write_block
from factor_journal_tools.scorings import (
    TEST_LEDGER,
    ledger_line,
    read_test_scorings,
    seat_version,
    why_test_is_refused,
)
from factor_journal_tools.seat import (
    ANSWERS,
    BRIEF,
    MIXED_SPLITS,
    PILOT_SIZE,
    REQUESTS,
    SAMPLE_EVERY,
    SCREENING_SPLITS,
    SEAT_PREFIX,
    VIEWS,
    SeatAnswers,
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
    replay_sample,
    request_key,
    screening_figures,
    write_requests,
)
from factor_journal_tools.seat_demo import load_script, read_conversations, seat_extractor
from factor_journal_tools.vertex_stand_in import VertexStandIn

DATABASE = "fj-seat"
SEAT_SPLITS = ("pilot", "first_round", *MIXED_SPLITS, "dev", "validation", "test", "demo", *SCREENING_SPLITS)
BENCHMARKS = REPO / "docs" / "benchmarks.md"


def turns_of(split: str) -> list[CorpusTurn]:
    """The corpus turns of a seat split (``pilot``: ``PILOT_SIZE`` dev turns spread over the split; ``first_round``:
    the dev turns of the round written with the catalog, ``dev-0001`` to ``FIRST_ROUND_LAST``; ``mixed_tune`` and
    ``mixed_check``: two alike halves of dev's later turns about several or neighbouring factors or said with a
    negation; all from dev)."""
    if split in SCREENING_SPLITS:
        return load_screening(CORPUS / f"{split}.jsonl")
    turns = load_corpus(CORPUS / f"{corpus_split(split)}.jsonl", load_catalog())
    if split == "pilot":
        return every_nth(turns, PILOT_SIZE)
    if split == "first_round":
        return first_round(turns)
    if split in MIXED_SPLITS:
        return mixed(turns, split)
    return turns


@dataclass
class SeatRun:
    """What one run of a split through the seat gave."""

    records: list[TurnRecord] = field(default_factory=list)  # the turns scored: every request answered
    excluded: list[str] = field(default_factory=list)  # turns left out: a request without an answer
    requests: list[SeatRequest] = field(default_factory=list)  # every distinct request, in order
    missing: list[str] = field(default_factory=list)  # the keys without an answer
    models: set[str] = field(default_factory=set)  # the models whose answers were served
    read: list[TurnRecord] = field(default_factory=list)  # every corpus turn run (answered or not)
    candidates_reach: list[int] = field(default_factory=lambda: [0, 0])  # expected among the candidates, of all


def _turn_needs(seat: SeatAnswers, before: int) -> tuple[list[str], bool]:
    keys = seat.turn_asked(before)
    return keys, all(key in seat.answers for key in keys)


def run_corpus(store: Any, turns: Sequence[CorpusTurn], seat: SeatAnswers, progress: bool = False) -> SeatRun:
    """Every turn through the pipeline with the real ``GeminiExtractor`` and the seat's stand-in (see the module
    doc).  Pure of files: ``store`` is an emulator store."""
    from factor_journal.pipeline import TurnProcessor

    run = SeatRun()
    run_id = uuid.uuid4().hex[:8]
    with seat_extractor(store, seat) as extractor:
        timed = TimedExtractor(extractor)
        processor = TurnProcessor(store, timed)
        for number, turn in enumerate(turns, 1):
            before = len(seat.log)
            record = run_turn(store, processor, timed, turn, run_id)
            keys, answered = _turn_needs(seat, before)
            run.read.append(record)
            if record.reached_reader:
                run.candidates_reach[0] += sum(1 for f in turn.expected if f in timed.last_candidates)
                run.candidates_reach[1] += len(turn.expected)
            if answered:
                run.records.append(record)
                run.models.update(seat.answers[key].model for key in keys)
            else:
                run.excluded.append(turn.id)
            if progress and number % 100 == 0:
                print(f"  {number}/{len(turns)}", file=sys.stderr, flush=True)
    run.requests, run.missing = seat.requests, list(seat.missing)
    return run


def run_demo(store: Any, seat: SeatAnswers) -> SeatRun:
    """The demo's conversations (``demo/conversations.yaml``) read as ``make demo`` reads them
    (``seat_demo.read_conversations``), each person a fresh one of this run; a person stops at the first turn whose
    request has no answer (what their later turns are sent depends on it)."""
    from factor_journal.models import UserProfile

    run_id = uuid.uuid4().hex[:8]
    people = load_script()["users"]
    for person in people:
        store.register_user(
            UserProfile(user_id=f"seat-{run_id}-{person['user_id']}", display_name=person["display_name"])
        )
    reading = read_conversations(store, people, seat, user_of=lambda user: f"seat-{run_id}-{user}")
    run = SeatRun(excluded=[turn.where for turn in reading.no_answer], models=reading.models)
    run.requests, run.missing = seat.requests, list(seat.missing)
    return run


def run_split(
    split: str, answers_path: Path | None = None, progress: bool = True, turns: Sequence[CorpusTurn] | None = None
) -> SeatRun:
    """A seat split through the pipeline on the emulator database ``fj-seat``, with the committed answers (or those
    at ``answers_path``); ``turns`` are the split's turns when the caller has read them already."""
    from factor_journal.runtime import project_id
    from factor_journal.store import FactorJournalStore

    if not os.environ.get("FIRESTORE_EMULATOR_HOST"):
        raise SystemExit("FIRESTORE_EMULATOR_HOST is not set: run it with `make seat-requests` / `make seat-replay`")
    for name in ("google_genai", "httpx", "httpx2", "factor_journal.pipeline"):
        logging.getLogger(name).setLevel(logging.CRITICAL)  # a missing answer is reported once, at the end
    store = FactorJournalStore.connect(project_id(), DATABASE, load_catalog())
    seat = SeatAnswers(read_answers(answers_path or ANSWERS / f"{split}.jsonl"))
    if split == "demo":
        return run_demo(store, seat)
    return run_corpus(store, turns if turns is not None else turns_of(split), seat, progress)


# The figures -------------------------------------------------------------------------------------------------


def reach(run: SeatRun) -> dict[str, Any]:
    """What reaches the model, over every turn run: requests, turns refused before it (hostile, empty, oversized),
    factor turns among them (target 0), the share of expected factors the model is shown (the whole catalog of
    every turn it reads), the share the pre-selected candidates alone would have shown, and the input tokens a turn
    read sends (estimated: all of it over its requests, the reading's and the evidence check's, and of it the static
    prefixes billed at the cached rate, one per distinct static part)."""
    records = run.read
    expected = sum(len(r.expected) for r in records)
    shown = expected - sum(len(r.not_offered) for r in records)
    inputs = [estimated_usage(request, "") for request in run.requests]
    read = sum(1 for r in records if r.reached_reader)
    statics = {request_key(r.static): usage["cached"] for r, usage in zip(run.requests, inputs, strict=True)}
    return {
        "input_tokens": round(sum(u["prompt"] for u in inputs) / read, 1) if inputs and read else None,
        "static_tokens": sum(statics.values()) if inputs else None,
        "turns": len(records),
        "requests": len(run.requests),
        "refused_before_model": sum(1 for r in records if not r.reached_reader),
        "factor_turns_kept_from_model": sum(1 for r in records if r.kind == "factor" and not r.reached_reader),
        "expected_factors": expected,
        "expected_reaching_model": round(shown / expected, 4) if expected else None,
        "expected_among_candidates": round(run.candidates_reach[0] / expected, 4) if expected else None,
    }


def answers_given(run: SeatRun) -> dict[str, Any]:
    """Who answered a run's requests and whether every one had its answer: the models, the requests, those without
    an answer, the turns left out for it, whether the run is complete, and the prompt version (the key of the static
    prefix, first 12 characters)."""
    return {
        "answered_by": sorted(run.models),
        "requests": len(run.requests),
        "missing": len(run.missing),
        "excluded_turns": len(run.excluded),
        "complete": not run.missing,
        "prompt_version": prompt_version(run.requests),
    }


def prompt_version(requests: Sequence[SeatRequest]) -> str | None:
    """The version of what the model is asked, first 12 characters: the key of the requests' static part (system
    instruction and generation config) when there is one, else the sha256 of their distinct static keys, sorted (a
    turn sends the reading's and the evidence check's, and a second reading's with ``FJ_GEMINI_READINGS=2``); None
    without requests."""
    statics = sorted({request_key(request.static) for request in requests})
    if len(statics) <= 1:
        return statics[0][:12] if statics else None
    return hashlib.sha256(",".join(statics).encode("utf-8")).hexdigest()[:12]


def seat_figures(run: SeatRun, turns: Sequence[CorpusTurn], split: str) -> dict[str, Any]:
    """``make eval``'s figures of the scored turns, with the seat's own: who answered, what is missing, what reaches
    the model, tokens per answer (estimated) and the monthly cost, and (validation) the replay test's sample."""
    figures = score(run.records)
    models = sorted(run.models)
    figures["model"] = SEAT_PREFIX + "+".join(models)
    figures["measured_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    seat: dict[str, Any] = {
        **answers_given(run),
        "brief_sha256": hashlib.sha256(BRIEF.read_bytes()).hexdigest()[:12] if BRIEF.exists() else None,
        "reach": reach(run),
        "tokens": {**figures["tokens"], "estimated": "about 4 characters per token (prompts.estimate_tokens)"},
        "cost_per_month": monthly_cost(figures["tokens"]),
    }
    if split == "validation":
        ids = {t.id for t in replay_sample(turns)}
        sample = [r for r in run.records if r.id in ids]
        seat["sample"] = {"every": SAMPLE_EVERY, "turns": len(sample), "band_accuracy": score(sample)["band_accuracy"]}
    figures["seat"] = seat
    return figures


# Commands ----------------------------------------------------------------------------------------------------


def _size(path: Path) -> str:
    size = path.stat().st_size
    return f"{size / 1024:,.0f} KiB" if size < 1024 * 1024 else f"{size / 1024 / 1024:,.1f} MiB"


def requests_command(args: argparse.Namespace) -> int:
    started = time.monotonic()
    run = run_split(args.split, args.answers)
    answered = set(read_answers(args.answers or ANSWERS / f"{args.split}.jsonl"))
    request_path, view_path = REQUESTS / f"{args.split}.jsonl", VIEWS / f"{args.split}.txt"
    write_requests(request_path, run.requests)
    view_path.parent.mkdir(parents=True, exist_ok=True)
    view_path.write_text(render_view(args.split, run.requests, answered), encoding="utf-8")
    waiting = len({r.key for r in run.requests} - answered)
    print(
        f"{args.split}: {len(run.requests)} requests ({waiting} without an answer) in {time.monotonic() - started:.0f}s"
    )
    print(f"  requests: {request_path.relative_to(REPO)} ({_size(request_path)})")
    print(f"  view:     {view_path.relative_to(REPO)} ({_size(view_path)})")
    if args.split == "demo" and run.excluded:
        print(f"  {len(run.excluded)} people wait for an answer before their next turns can be asked: answer the view,")
        print("  then run `make seat-requests SPLIT=demo` again (the view lists only the requests not answered yet)")
    if args.split != "demo":
        figures = reach(run)
        print(
            f"  expected factors reaching the model: {figures['expected_reaching_model']} (the pre-selected candidates"
            f" alone: {figures['expected_among_candidates']}); factor turns kept from it: "
            f"{figures['factor_turns_kept_from_model']}"
        )
        results = read_results(args.results)
        results.setdefault("seat_requests", {})[args.split] = {
            **figures,
            "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        write_results(args.results, results)
        args.report.write_text(render_report(results, read_test_scorings(args.test_ledger)))
    return 0


def replay_command(args: argparse.Namespace) -> int:
    if args.split == "demo":
        raise SystemExit("the demo has no labels to score: serve its answers (`serve --split demo`) and run the demo")
    ledger = read_test_scorings(args.test_ledger)
    answers = read_answers(args.answers or ANSWERS / f"{args.split}.jsonl")
    if not answers:
        raise SystemExit(f"no answers for {args.split} in {(args.answers or ANSWERS / f'{args.split}.jsonl')}")
    turns = turns_of(args.split)
    run = run_split(args.split, args.answers, turns=turns)
    if args.split in SCREENING_SPLITS:
        return replay_screening(args, run)
    figures = seat_figures(run, turns, args.split)
    name = figures["model"]
    if run.missing:
        print(f"INCOMPLETE: {len(run.missing)} requests have no answer; {len(run.excluded)} turns are left out of")
        print("the scores (never scored as empty). The requests without an answer:")
        for key in run.missing:
            print(f"  {key}")
    if args.split == "test":
        version = seat_version(name, figures["seat"]["prompt_version"])
        if run.missing:
            raise SystemExit("test is scored only when every request has its answer; nothing was recorded")
        if refusal := why_test_is_refused(ledger, version, args.rescore_test):
            raise SystemExit(refusal)
        why = args.rescore_test or "first scoring of this seat and prompt version"
        with args.test_ledger.open("a", encoding="utf-8") as out:
            out.write(json.dumps(ledger_line(name, version, figures["measured_at"], figures, why), sort_keys=True))
            out.write("\n")
        ledger = read_test_scorings(args.test_ledger)
    results = read_results(args.results)
    record_seat_figures(results, name, args.split, figures)
    write_results(args.results, results)
    args.report.write_text(render_report(results, ledger))
    if args.benchmarks.exists():
        write_block(args.benchmarks, "seat-cost", seat_cost_block(results))
    band, recall = figures["band_accuracy"], figures["detection"]["recall"]
    print(f"{name} · {args.split}: {len(run.records)} turns scored, band accuracy {band}, recall {recall}")
    print(f"wrote {args.results} and {args.report}")
    return 1 if run.missing else 0


def replay_screening(args: argparse.Namespace, run: SeatRun) -> int:
    """A screening set's replay: per kind, the answered turns that wrote anything (``seat.screening_figures``; the set
    has no factor labels), kept in ``eval/results.json`` under ``seat_screening`` and shown in the report."""
    figures = {
        **screening_figures(run.records),
        **answers_given(run),
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    results = read_results(args.results)
    results.setdefault("seat_screening", {})[args.split] = figures
    write_results(args.results, results)
    args.report.write_text(render_report(results, read_test_scorings(args.test_ledger)))
    nothing, alike = figures["must_change_nothing"], figures["look_alikes"]
    print(
        f"{SEAT_PREFIX}{'+'.join(figures['answered_by'])} · {args.split}: must change nothing, {nothing['written']} of "
        f"{nothing['turns']} written; look-alikes, {alike['written']} of {alike['turns']} written"
    )
    if run.missing:
        print(f"INCOMPLETE: {len(run.missing)} requests have no answer; {len(run.excluded)} turns are left out")
    return 1 if run.missing else 0


def serve_command(args: argparse.Namespace) -> int:
    """A stand-in serving a split's answers by key until interrupted (Ctrl-C), for a run through the trigger:
    ``FJ_EXTRACTOR=gemini FJ_GEMINI_BASE_URL=<the printed address>``."""
    seat = SeatAnswers(read_answers(args.answers or ANSWERS / f"{args.split}.jsonl"))
    with VertexStandIn(respond=seat.respond, port=args.port) as vertex:
        print(f"serving {len(seat.answers)} answers of {args.split} at {vertex.url} (Ctrl-C stops)", flush=True)
        try:
            while True:
                time.sleep(1)
        except KeyboardInterrupt:
            pass
    print(f"{len(seat.seen)} requests, {len(seat.missing)} without an answer")
    return 0


def check_command(args: argparse.Namespace) -> int:
    """The form of a split's answers against its request file (no emulator, no label read)."""
    return check_split(args.split, args.answers or ANSWERS / f"{args.split}.jsonl")


def check_split(split: str, answers: Path, schema: type[BaseModel] = ExtractionOutput) -> int:
    """Print the form of ``answers`` against ``split``'s request file and the response ``schema``; 1 when an answer
    answers no request or is not in the schema, else 0."""
    figures = check_answers(read_requests(REQUESTS / f"{split}.jsonl"), read_answers(answers), schema)
    print(
        f"{split}: {figures['answered']} of {figures['requests']} requests answered, {figures['waiting']} waiting;"
        f" models: {', '.join(figures['models']) or 'none'}"
    )
    for key in figures["unknown_keys"]:
        print(f"  answers no request of {split}: {key}")
    for key, problem in figures["malformed"].items():
        print(f"  not JSON in the response schema: {key}: {problem}")
    return 1 if figures["unknown_keys"] or figures["malformed"] else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m factor_journal_tools.seat_run", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands_run = (
        ("requests", requests_command),
        ("replay", replay_command),
        ("serve", serve_command),
        ("check", check_command),
    )
    for name, run in commands_run:
        command = commands.add_parser(name)
        command.set_defaults(run=run)
        command.add_argument("--split", required=True, choices=SEAT_SPLITS)
        command.add_argument("--answers", type=Path, help="the answers file (default eval/seat/answers/<split>.jsonl)")
        command.add_argument("--results", type=Path, default=RESULTS)
        command.add_argument("--report", type=Path, default=REPO / "eval" / "REPORT.md")
        command.add_argument("--test-ledger", type=Path, default=TEST_LEDGER)
        command.add_argument("--benchmarks", type=Path, default=BENCHMARKS)
        command.add_argument("--rescore-test", metavar="REASON")
        command.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
