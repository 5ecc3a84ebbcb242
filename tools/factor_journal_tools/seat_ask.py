"""The model as intent router for Ask, with a language model in Gemini's seat (``make seat-requests SPLIT=ask``,
``make seat-replay SPLIT=ask``, ``make seat-check SPLIT=ask``).

    python -m factor_journal_tools.seat_ask requests   # every own-words question's intent request, and the view
    python -m factor_journal_tools.seat_ask replay     # the answers through answer_question, scored
    python -m factor_journal_tools.seat_ask check      # the answers' form against the requests (no emulator)

Each own-words set's journal (``ask_sets``) is seeded on the Firestore emulator as the Ask tests seed it, and each of
its questions (``questions``, then ``standing`` and ``off_topic`` where the set has them) is asked through the real
``answer_question`` with the real ``GeminiIntentReader`` pointed at a local stand-in of ``generateContent``, which
serves the answers of ``eval/seat/answers/ask.jsonl`` by the request's key (``seat.SeatAnswers``).  A request is the
intent router's system instruction (rules and catalog), its response schema and the per-question part: the person's
journal index and the question; nothing of a set's expected factors, kinds or descriptions.  A question whose
request has no answer is answered 404, falls back to the embedded path inside the product, and is **left out** of
the scores and listed (never scored as the fallback's answer, nor as empty); an answer that does not read as an
intent is the model's failure, scored as the product answers it then (the embedded path) and counted.

Scored as ``tests/factor_journal/test_ask_own_words.py`` scores the embedded path: a question **cites** the expected
factor when any citation is of it, **first** when the first is; an off-topic question is answered from the journal
when it cites an entry found by meaning or a factor the model named; a question about the whole is answered so when
it is found by ``standing``.  The same questions on the same journals without a model (the embedded path) are scored
in the same run, beside them.  Figures: ``eval/results.json`` (``ask_seat``), ``eval/REPORT.md`` and docs/ask.md.
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import os
import sys
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from factor_journal.catalog import load_catalog
from factor_journal.extraction.gemini import GeminiExtractor, GeminiIntentReader
from factor_journal.extraction.prompts import IntentOutput
from factor_journal_tools.ask_sets import ASK_SETS, load_set, seed
from factor_journal_tools.corpus import REPO
from factor_journal_tools.evaluate import RESULTS, read_results, write_results
from factor_journal_tools.report import ask_seat_block, render_report, write_block
from factor_journal_tools.scorings import TEST_LEDGER, read_test_scorings
from factor_journal_tools.seat import (
    ANSWERS,
    PRICES,
    REQUESTS,
    SEAT,
    SEAT_PREFIX,
    VIEWS,
    SeatAnswers,
    SeatRequest,
    estimated_usage,
    read_answers,
    render_view,
    request_key,
    write_requests,
)
from factor_journal_tools.seat_demo import seat_settings
from factor_journal_tools.seat_run import DATABASE, check_split
from factor_journal_tools.vertex_stand_in import VertexStandIn

SPLIT = "ask"
BRIEF_ASK = SEAT / "BRIEF-ask.md"
ASK_DOC = REPO / "docs" / "ask.md"
KINDS = ("questions", "standing", "off_topic")
PER_THOUSAND = 1000


@dataclass(frozen=True)
class AskRecord:
    """One question asked of a set's journal, and what its answer cited."""

    set: str
    kind: str  # questions | standing | off_topic
    question: str
    expected: str | None  # the factor its answer should cite (``questions`` only)
    factors: tuple[str, ...]  # the factors of its citations, in order
    found_by: str
    from_journal: bool  # it cites an entry found by meaning, or a factor a model named
    routing_failed: bool = False  # the model's answer did not read as an intent: the embedded path answered


def record_of(name: str, kind: str, question: str, expected: str | None, answer: Any) -> AskRecord:
    """An answer (``questions.Answer``) as the scores read it."""
    factors = tuple(citation.factor_id for citation in answer.citations)
    by_meaning = any(citation.similarity is not None for citation in answer.citations)
    from_journal = by_meaning or (answer.found_by == "model" and bool(factors))
    return AskRecord(name, kind, question, expected, factors, answer.found_by, from_journal, answer.routing_failed)


@dataclass
class AskRun:
    """What one run of the sets gave."""

    records: list[AskRecord] = field(default_factory=list)  # with the model in the seat: every request answered
    embedded: list[AskRecord] = field(default_factory=list)  # the same questions without a model, same journals
    excluded: list[AskRecord] = field(default_factory=list)  # left out: the request has no answer
    requests: list[SeatRequest] = field(default_factory=list)  # every distinct request, in order
    missing: list[str] = field(default_factory=list)  # the keys without an answer
    models: set[str] = field(default_factory=set)  # the models whose answers were served


def questions_of(data: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    """A set's questions as (kind, question, expected factor), in ``KINDS`` order."""
    asked: list[tuple[str, str, str | None]] = []
    for kind in KINDS:
        for item in data.get(kind, []):
            asked.append((kind, item["q"], item["expected"]) if kind == "questions" else (kind, item, None))
    return asked


def run_sets(
    store: Any, seat: SeatAnswers, sets: Mapping[str, dict[str, Any]] | None = None, embedded: bool = True
) -> AskRun:
    """Each set's journal (default: every own-words set, ``ask_sets``) seeded for a fresh person, then each question
    through ``answer_question`` with the real intent router and the seat's stand-in (and, with ``embedded``, without
    a router too).  ``store`` is an emulator store whose changes embed with the embedded model."""
    from factor_journal.questions import answer_question

    run = AskRun()
    sets = sets if sets is not None else {name: load_set(name) for name in ASK_SETS}
    with VertexStandIn(respond=seat.respond) as vertex:
        router = GeminiIntentReader(GeminiExtractor(seat_settings(vertex.url), catalog=store.catalog), store.catalog)
        for name, data in sets.items():
            user, _ = seed(store, data["journal"])
            for kind, question, expected in questions_of(data):
                before = len(seat.log)
                answer = answer_question(store, user, question, router=router)
                keys = seat.turn_asked(before)
                record = record_of(name, kind, question, expected, answer)
                if keys and all(key in seat.answers for key in keys):  # (an answer that does not read counts)
                    run.records.append(record)
                    run.models.update(seat.answers[key].model for key in keys)
                else:
                    run.excluded.append(record)
                if embedded:
                    run.embedded.append(
                        record_of(name, kind, question, expected, answer_question(store, user, question))
                    )
    run.requests, run.missing = seat.requests, list(seat.missing)
    return run


# The figures -------------------------------------------------------------------------------------------------


def score(records: Sequence[AskRecord]) -> dict[str, Any]:
    """As ``test_ask_own_words`` scores a set: of the ``questions``, how many cite the expected factor and how many
    first; of the ``off_topic`` ones, how many are answered from the journal; of the ``standing`` ones, how many are
    answered as about the whole; and how each was found.  Pure."""
    asked = [r for r in records if r.kind == "questions"]
    off_topic = [r for r in records if r.kind == "off_topic"]
    standing = [r for r in records if r.kind == "standing"]
    return {
        "questions": len(asked),
        "cited": sum(r.expected in r.factors for r in asked),
        "first": sum(bool(r.factors) and r.factors[0] == r.expected for r in asked),
        "off_topic": len(off_topic),
        "off_topic_from_journal": sum(r.from_journal for r in off_topic),
        "standing": len(standing),
        "standing_answered_so": sum(r.found_by == "standing" for r in standing),
        "found_by": dict(sorted(Counter(r.found_by for r in asked).items())),
        "routing_failed": sum(r.routing_failed for r in records),
    }


def by_set(records: Sequence[AskRecord]) -> dict[str, dict[str, Any]]:
    """``score`` per set, in ``ASK_SETS`` order, and over all of them (``all``).  Pure."""
    names = dict.fromkeys([*ASK_SETS, *(r.set for r in records)])
    scores = {name: score([r for r in records if r.set == name]) for name in names}
    scores = {name: figures for name, figures in scores.items() if figures["questions"] or figures["standing"]}
    return {**scores, "all": score(records)}


def tokens(requests: Sequence[SeatRequest], answers: dict[str, Any]) -> dict[str, Any]:
    """Mean tokens per question over the answered requests (estimated, ``seat.estimated_usage``) and US dollars per
    ``PER_THOUSAND`` questions at list prices, with cache hits on the static prefix and with none.  Pure."""
    usages = [estimated_usage(r, answers[r.key].text) for r in requests if r.key in answers]
    if not usages:
        return {"calls": 0}
    mean = {name: round(sum(u[name] for u in usages) / len(usages), 1) for name in ("prompt", "cached", "response")}
    price = {name: row["usd_per_million"] / 1e6 for name, row in PRICES.items()}
    output = mean["response"] * price["output"]
    cached = (mean["prompt"] - mean["cached"]) * price["input"] + mean["cached"] * price["cached_input"]
    return {
        "calls": len(usages),
        **mean,
        "thinking": usages[0]["thinking"],
        "usd_per_thousand_questions": {
            "with_cache_hits": round(PER_THOUSAND * (cached + output), 4),
            "without_cache": round(PER_THOUSAND * (mean["prompt"] * price["input"] + output), 4),
        },
    }


def ask_figures(run: AskRun, answers: dict[str, Any]) -> dict[str, Any]:
    """A replay's figures: per set with the model in the seat and without a model, and the seat's own (who answered,
    what is missing, the prompt and brief versions, tokens and cost)."""
    models = sorted(run.models)
    return {
        "model": SEAT_PREFIX + "+".join(models),
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "seat": by_set(run.records),
        "embedded": by_set([r for r in run.embedded if (r.set, r.kind, r.question) not in _keys(run.excluded)]),
        "embedded_every_question": by_set(run.embedded),
        "answered_by": models,
        "requests": len(run.requests),
        "missing": len(run.missing),
        "excluded": [f"{r.set}: {r.question}" for r in run.excluded],
        "complete": not run.missing,
        "prompt_version": request_key(run.requests[0].static)[:12] if run.requests else None,
        "brief_sha256": hashlib.sha256(BRIEF_ASK.read_bytes()).hexdigest()[:12] if BRIEF_ASK.exists() else None,
        "tokens": {**tokens(run.requests, answers), "estimated": "about 4 characters per token"},
    }


def _keys(records: Sequence[AskRecord]) -> set[tuple[str, str, str]]:
    return {(r.set, r.kind, r.question) for r in records}


# Commands ----------------------------------------------------------------------------------------------------

QUESTION_HEAD = "Question: "  # the per-question part's last line (``prompts.intent_prompt``)


def render_ask_view(requests: Sequence[SeatRequest], answered: set[str]) -> str:
    """The answerer's view of the intent requests: ``seat.render_view`` with each journal index printed once (a set's
    questions share their journal's index) and the brief for the intent router.  The requests of one journal are
    shown in the order of their keys, not the order the set lists its questions in (which follows its journal): an
    answerer reads each on its own, with no order to lean on.  Pure."""
    heads: dict[str, int] = {}
    for request in requests:
        heads.setdefault(request.turn_text.rpartition(f"\n{QUESTION_HEAD}")[0], len(heads))
    ordered = sorted(requests, key=lambda r: (heads[r.turn_text.rpartition(f"\n{QUESTION_HEAD}")[0]], r.key))
    return render_view(SPLIT, ordered, answered, brief=BRIEF_ASK, shared_head=QUESTION_HEAD)


def _answers_path(args: argparse.Namespace) -> Path:
    return args.answers or ANSWERS / f"{SPLIT}.jsonl"


def run_split(answers_path: Path, embedded: bool) -> tuple[AskRun, dict[str, Any]]:
    """The sets through the product on the emulator database ``fj-seat``, with the answers of ``answers_path``."""
    from factor_journal.embedding import WordLlamaEmbedder
    from factor_journal.runtime import project_id
    from factor_journal.store import FactorJournalStore

    if not os.environ.get("FIRESTORE_EMULATOR_HOST"):
        raise SystemExit("FIRESTORE_EMULATOR_HOST is not set: run it with `make seat-requests SPLIT=ask` and the like")
    for name in ("google_genai", "httpx", "httpx2", "factor_journal.questions.routing"):
        logging.getLogger(name).setLevel(logging.CRITICAL)  # a missing answer is reported once, at the end
    store = FactorJournalStore.connect(project_id(), DATABASE, load_catalog())
    store.changes.embedder = WordLlamaEmbedder()  # as the Ask tests seed their journals
    answers = read_answers(answers_path)
    return run_sets(store, SeatAnswers(answers), embedded=embedded), answers


def _write_figures(args: argparse.Namespace, update: dict[str, Any]) -> None:
    results = read_results(args.results)
    results.setdefault("extractors", {})
    ask = results.setdefault("ask_seat", {})
    for name, value in update.items():
        ask[name] = {**ask.get(name, {}), **value} if name == "replays" else value
    write_results(args.results, results)
    args.report.write_text(render_report(results, read_test_scorings(args.test_ledger)))
    if args.doc.exists():
        write_block(args.doc, "ask-seat", ask_seat_block(results))


def requests_command(args: argparse.Namespace) -> int:
    started = time.monotonic()
    run, answers = run_split(_answers_path(args), embedded=False)
    request_path, view_path = REQUESTS / f"{SPLIT}.jsonl", VIEWS / f"{SPLIT}.txt"
    write_requests(request_path, run.requests)
    view_path.parent.mkdir(parents=True, exist_ok=True)
    view_path.write_text(render_ask_view(run.requests, set(answers)), encoding="utf-8")
    waiting = len({r.key for r in run.requests} - set(answers))
    asked = len(run.records) + len(run.excluded)
    print(f"{SPLIT}: {asked} questions, {len(run.requests)} requests ({waiting} without an answer)", end="")
    print(f" in {time.monotonic() - started:.0f}s")
    print(f"  requests: {request_path.relative_to(REPO)}\n  view:     {view_path.relative_to(REPO)}")
    inputs = [estimated_usage(request, "") for request in run.requests]
    figures = {
        "questions": asked,
        "requests": len(run.requests),
        "input_tokens": round(sum(u["prompt"] for u in inputs) / len(inputs), 1) if inputs else None,
        "static_tokens": inputs[0]["cached"] if inputs else None,
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    _write_figures(args, {"requests": figures})
    return 0


def replay_command(args: argparse.Namespace) -> int:
    if not read_answers(_answers_path(args)):
        raise SystemExit(f"no answers for {SPLIT} in {_answers_path(args)}")
    run, answers = run_split(_answers_path(args), embedded=True)
    figures = ask_figures(run, answers)
    if run.missing:
        print(f"INCOMPLETE: {len(run.missing)} requests have no answer; {len(run.excluded)} questions are left out of")
        print("the scores (never scored as the fallback's answer, nor as empty). The requests without an answer:")
        for key in run.missing:
            print(f"  {key}")
    _write_figures(args, {"replays": {figures["model"]: figures}})
    print(f"{figures['model']} · {SPLIT}: {len(run.records)} questions scored")
    for name, seated in figures["seat"].items():
        alone = figures["embedded"].get(name, {})
        print(
            f"  {name:10} cites the expected factor {seated['cited']}/{seated['questions']}, first {seated['first']}"
            f" (without a model: {alone.get('cited')} / {alone.get('first')}); off-topic from the journal "
            f"{seated['off_topic_from_journal']}/{seated['off_topic']}, about the whole answered so "
            f"{seated['standing_answered_so']}/{seated['standing']}"
        )
    print(f"wrote {args.results}, {args.report} and {args.doc}")
    return 1 if run.missing else 0


def check_command(args: argparse.Namespace) -> int:
    """The form of the answers against the request file and the intent schema (no emulator, no label read)."""
    return check_split(SPLIT, _answers_path(args), IntentOutput)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m factor_journal_tools.seat_ask", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for name, run in (("requests", requests_command), ("replay", replay_command), ("check", check_command)):
        command = commands.add_parser(name)
        command.set_defaults(run=run)
        command.add_argument("--split", default=SPLIT, choices=[SPLIT])
        command.add_argument("--answers", type=Path, help=f"the answers file (default eval/seat/answers/{SPLIT}.jsonl)")
        command.add_argument("--results", type=Path, default=RESULTS)
        command.add_argument("--report", type=Path, default=REPO / "eval" / "REPORT.md")
        command.add_argument("--test-ledger", type=Path, default=TEST_LEDGER)
        command.add_argument("--doc", type=Path, default=ASK_DOC)
    args = parser.parse_args(argv)
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
