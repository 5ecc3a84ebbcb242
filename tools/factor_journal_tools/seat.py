"""A language model in Gemini's seat: the product's exact requests, answered offline, replayed through it.

Vertex AI cannot be reached from where the project is developed, so the Gemini path is measured with another
language model answering ``GeminiExtractor``'s exact requests (``seat_run`` runs them; ``make seat-requests``,
``make seat-replay``).  This module holds what is pure:

* **requests**, each keyed by the sha256 of its canonical JSON body (``request_key``): what the SDK posts to
  ``generateContent`` (system instruction, contents, generation config with the response schema).  A request file
  (``eval/seat/requests/<split>.jsonl``) stores each body exactly, the static part (everything but the contents,
  the same for every request) once;
* the **view** an answerer reads (``eval/seat/views/<split>.txt``): the system instruction, schema and
  generation config once, then per request only its key and its per-turn text.  Nothing else: no corpus id,
  label, expected value, kind or tag is in a request, so none is in the view (``tests/.../test_seat.py``);
* **answers** (``eval/seat/answers/<split>.jsonl``, one ``{"key", "text", "model"}`` a line: the model's raw
  JSON output and the model that gave it), served back by key (``SeatAnswers``) with **estimated** token usage;
* **cost** at list prices, with the page each price came from.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from factor_journal.extraction.base import ExtractionOutput
from factor_journal.extraction.prompts import estimate_tokens
from factor_journal_tools.corpus import LOOK_ALIKE, REPO
from factor_journal_tools.vertex_stand_in import Step, error, model_response

SEAT = REPO / "eval" / "seat"
REQUESTS = SEAT / "requests"
VIEWS = SEAT / "views"
ANSWERS = SEAT / "answers"
BRIEF = SEAT / "BRIEF.md"


def canonical(body: dict[str, Any]) -> str:
    """A request body as canonical JSON: keys sorted, no spaces, UTF-8 as is.  Pure."""
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def request_key(body: dict[str, Any]) -> str:
    """The sha256 (hex) of the canonical request body: a request's name, and its answer's.  Pure."""
    return hashlib.sha256(canonical(body).encode("utf-8")).hexdigest()


def _texts(content: dict[str, Any]) -> str:
    return "".join(str(part.get("text", "")) for part in content.get("parts", []) if isinstance(part, dict))


@dataclass(frozen=True)
class SeatRequest:
    """One ``generateContent`` request body, as posted, with its key."""

    key: str
    body: dict[str, Any]

    @classmethod
    def of(cls, body: dict[str, Any]) -> SeatRequest:
        return cls(request_key(body), body)

    @property
    def static(self) -> dict[str, Any]:
        """Everything but the contents: system instruction and generation config (the same for every call)."""
        return {name: value for name, value in self.body.items() if name != "contents"}

    @property
    def turn_text(self) -> str:
        """The per-turn part: the text of the contents (one user content)."""
        return "\n".join(_texts(content) for content in self.body.get("contents", []))

    @property
    def system_instruction(self) -> str:
        return _texts(self.body.get("systemInstruction") or {})

    @property
    def generation_config(self) -> dict[str, Any]:
        return dict(self.body.get("generationConfig") or {})


class SeatFileError(ValueError):
    """A request or answer file does not read; the message names the file and line."""


def write_requests(path: Path, requests: Iterable[SeatRequest]) -> None:
    """The request file: one line per distinct static part (``{"static_key", "static"}``), then one per request
    (``{"key", "static_key", "contents"}``), in order; every body is kept exactly (``read_requests``)."""
    statics: dict[str, dict[str, Any]] = {}
    lines = []
    for request in requests:
        static_key = request_key(request.static)
        if static_key not in statics:
            statics[static_key] = request.static
        lines.append({"key": request.key, "static_key": static_key, "contents": request.body.get("contents", [])})
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for static_key, static in statics.items():
            out.write(json.dumps({"static_key": static_key, "static": static}, ensure_ascii=False) + "\n")
        for line in lines:
            out.write(json.dumps(line, ensure_ascii=False) + "\n")


def read_requests(path: Path) -> list[SeatRequest]:
    """The requests of a request file, each body rebuilt exactly; ``SeatFileError`` when a line does not read or
    a rebuilt body does not hash to its key."""
    statics: dict[str, dict[str, Any]] = {}
    requests = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            if "static" in record:
                statics[record["static_key"]] = record["static"]
                continue
            body = {**statics[record["static_key"]], "contents": record["contents"]}
        except (ValueError, KeyError, TypeError) as problem:
            raise SeatFileError(f"{path.name}:{number}: not a request line ({problem})") from problem
        if request_key(body) != record["key"]:
            raise SeatFileError(f"{path.name}:{number}: the request does not hash to its key {record['key']}")
        requests.append(SeatRequest(record["key"], body))
    return requests


# The view ----------------------------------------------------------------------------------------------------

VIEW_RULE = "=" * 12


def render_view(
    split: str,
    requests: Sequence[SeatRequest],
    answered: Iterable[str] = (),
    brief: Path = BRIEF,
    shared_head: str | None = None,
) -> str:
    """What an answerer reads: the static part once (system instruction, response schema, generation config),
    then each request not answered yet as its key and its per-turn text, in order; the header names the ``brief``.
    With ``shared_head`` (the line a request's own part starts with, say ``Question: ``), what comes before the last
    such line is printed once, as a numbered shared part, where it first appears, and each request that begins with
    it shows ``[shared part n]`` in its place: the same text, not repeated.  Pure."""
    done = set(answered)
    statics: dict[str, list[SeatRequest]] = {}
    for request in dict((r.key, r) for r in requests).values():
        if request.key not in done:
            statics.setdefault(request_key(request.static), []).append(request)
    waiting = [request for group in statics.values() for request in group]  # numbered as printed: by static part
    number_of = {request.key: number for number, request in enumerate(waiting, 1)}
    lines = [
        f"Requests in Gemini's seat: {split} ({len(waiting)} to answer"
        + (f"; {len(requests) - len(waiting)} answered already" if len(waiting) < len(requests) else "")
        + ")",
        f"How to answer: {brief.relative_to(REPO)}. Each request is the system instruction below plus its own text.",
        *(
            ["A request's text may begin with a shared part, printed once where it first appears: [shared part n]"]
            + ["in a request stands for that part's text, whole."]
            if shared_head
            else []
        ),
        "",
    ]
    shared: dict[str, int] = {}
    for number, group in enumerate(statics.values(), 1):
        first = group[0]
        config = first.generation_config
        schema = config.pop("responseSchema", None) or config.pop("responseJsonSchema", None)
        name = f" {number} of {len(statics)}" if len(statics) > 1 else ""
        lines += [
            f"{VIEW_RULE} SYSTEM INSTRUCTION{name} (the same for every request below) {VIEW_RULE}",
            first.system_instruction,
            "",
            f"{VIEW_RULE} RESPONSE SCHEMA (answer with JSON matching it) {VIEW_RULE}",
            json.dumps(schema, indent=1, sort_keys=True),
            "",
            f"{VIEW_RULE} GENERATION CONFIG {VIEW_RULE}",
            json.dumps(config, sort_keys=True),
            "",
        ]
        for request in group:
            heading = f"{VIEW_RULE} REQUEST {number_of[request.key]} of {len(waiting)} {request.key} {VIEW_RULE}"
            head, cut, tail = request.turn_text.rpartition(f"\n{shared_head}") if shared_head else ("", "", "")
            if not cut:
                lines += [heading, request.turn_text, ""]
                continue
            if head not in shared:
                shared[head] = len(shared) + 1
                lines += [f"{VIEW_RULE} SHARED PART {shared[head]} {VIEW_RULE}", head, ""]
            lines += [heading, f"[shared part {shared[head]}]", f"{shared_head}{tail}", ""]
    lines.append(f"{VIEW_RULE} END ({len(waiting)} requests) {VIEW_RULE}")
    return "\n".join(lines) + "\n"


# Answers -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    key: str
    text: str  # the model's raw output, served as it is
    model: str  # the model that gave it


def read_answers(path: Path) -> dict[str, Answer]:
    """The answers of an answers file by key (a later line for the same key replaces an earlier one); {} when
    there is no file.  ``text`` may also be given as a JSON object (it is then served as its JSON).
    ``SeatFileError`` names a line that does not read."""
    if not path.exists():
        return {}
    answers: dict[str, Answer] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            key, text, model = record["key"], record["text"], record["model"]
        except (ValueError, KeyError, TypeError) as problem:
            raise SeatFileError(f"{path.name}:{number}: not an answer line ({problem})") from problem
        if not (isinstance(key, str) and len(key) == 64 and isinstance(model, str) and model.strip()):
            raise SeatFileError(f"{path.name}:{number}: an answer needs the request's key and the model's name")
        if not isinstance(text, str):
            text = json.dumps(text, ensure_ascii=False)
        answers[key] = Answer(key, text, model.strip())
    return answers


def check_answers(
    requests: Sequence[SeatRequest], answers: dict[str, Answer], schema: type[BaseModel] = ExtractionOutput
) -> dict[str, Any]:
    """The form of a split's answers against its requests: how many are answered and still waiting, answers to no
    request of the split, and answers whose text is not JSON in the response ``schema`` (the reader's
    ``ExtractionOutput``; the intent router's ``IntentOutput``), each with its key.  Reads no label.  Pure."""
    keys = {request.key for request in requests}
    malformed = {}
    for key, answer in answers.items():
        try:
            schema.model_validate_json(answer.text)
        except ValidationError as problem:
            malformed[key] = str(problem.errors()[0].get("msg"))
    return {
        "requests": len(keys),
        "answered": len(keys & set(answers)),
        "waiting": len(keys - set(answers)),
        "unknown_keys": sorted(set(answers) - keys),
        "malformed": malformed,
        "models": sorted({answer.model for answer in answers.values()}),
    }


# Tokens and cost ---------------------------------------------------------------------------------------------

# Vertex AI caches a prompt prefix only from this many tokens on (context caching overview, cited below)
CACHE_MIN_TOKENS = 2048


def estimated_usage(request: SeatRequest, output_text: str) -> dict[str, int]:
    """Tokens an answer would have cost on Gemini, *estimated* at ~4 characters per token
    (``prompts.estimate_tokens``): input = system instruction + response schema + per-turn text; cached = the
    static part (system instruction + schema) when it is long enough to be cached, assuming a cache hit;
    response = the output's JSON; thinking = 0 with the budget at 0 (the budget is in the request), else
    unknown (-1).  Pure."""
    config = request.generation_config
    schema = json.dumps(config.get("responseSchema") or config.get("responseJsonSchema") or {})
    static = estimate_tokens(request.system_instruction + schema)
    thinking = config.get("thinkingConfig") or {}
    budget = thinking.get("thinking_budget", thinking.get("thinkingBudget"))
    return {
        "prompt": static + estimate_tokens(request.turn_text),
        "cached": static if static >= CACHE_MIN_TOKENS else 0,
        "response": estimate_tokens(output_text),
        "thinking": 0 if budget == 0 else -1,
    }


@dataclass
class SeatAnswers:
    """The ``respond`` of a ``VertexStandIn``: answers each request by its key from ``answers``, with estimated
    usage and the answering model as the model version; a request without an answer gets HTTP 404 (the extractor
    fails the turn at once, and the run excludes it) and is listed in ``missing``.  ``seen`` keeps every request
    in the order it came (thread-safe); ``requests`` lists them in a stable order, turn by turn (``turn_asked``)."""

    answers: dict[str, Answer]
    seen: dict[str, SeatRequest] = field(default_factory=dict)
    log: list[str] = field(default_factory=list)  # every request's key, in order, repeats included
    missing: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    settled: list[str] = field(default_factory=list)  # the keys of the turns asked so far, in a stable order

    def turn_asked(self, before: int) -> list[str]:
        """The keys a turn asked since ``log`` held ``before`` of them (repeats included), once it is done.  The
        requests first seen since the last turn are settled by static part, so those a turn sends in parallel (a
        reading and its evidence check) are listed the same way on every run, whichever arrived first."""
        with self.lock:
            new = list(self.seen)[len(self.settled) :]
            self.settled += sorted(new, key=lambda key: request_key(self.seen[key].static))
            return self.log[before:]

    @property
    def requests(self) -> list[SeatRequest]:
        """Every request seen: those of the turns asked in their stable order, then any other in arrival order."""
        with self.lock:
            return [self.seen[key] for key in self.settled] + list(self.seen.values())[len(self.settled) :]

    def respond(self, body: dict[str, Any]) -> Step:
        request = SeatRequest.of(body)
        with self.lock:
            self.seen.setdefault(request.key, request)
            self.log.append(request.key)
            answer = self.answers.get(request.key)
            if answer is None:
                if request.key not in self.missing:
                    self.missing.append(request.key)
                return error(404, f"no answer in the seat for request {request.key}")
        usage = estimated_usage(request, answer.text)
        return Step(
            body=model_response(
                answer.text,
                usage["prompt"],
                usage["response"],
                cached_tokens=usage["cached"],
                thinking_tokens=max(usage["thinking"], 0),
                model_version=answer.model,
            )
        )


# List prices, per 1M tokens, Gemini 2.5 Flash on Vertex AI (standard, not batch; prompts up to 200k tokens).
# Each with the page it came from and when it was read (through the search tool's stored copies; the
# official pricing page, cloud.google.com/vertex-ai/generative-ai/pricing, was not among them: check it).
PRICES: dict[str, dict[str, Any]] = {
    "input": {
        "usd_per_million": 0.30,
        "source": "https://deploybase.ai/articles/google-vertex-ai-pricing-complete-cost-breakdown "
        '("Gemini 2.5 Flash costs $0.30/million input tokens, $2.50/million output tokens"; page dated '
        "2025-04-17, read 2026-12-06)",
    },
    "output": {
        "usd_per_million": 2.50,
        "source": "the same page; thinking tokens are billed as output (Gemini API pricing, 'Output price "
        "(including thinking tokens)')",
    },
    "cached_input": {
        "usd_per_million": 0.03,
        "source": "https://docs.cloud.google.com/vertex-ai/generative-ai/docs/context-cache/context-cache-overview "
        '("Implicit caching provides a 90% discount on cached tokens compared to standard input tokens"; '
        '"Caching requests must contain a minimum of 2,048 tokens"; read 2026-12-06): 10% of $0.30. An older '
        "copy of the same page said 75% ($0.075)",
    },
}
PEOPLE = 1000
ANSWERS_PER_PERSON_A_MONTH = 60


def monthly_cost(tokens: dict[str, Any]) -> dict[str, float] | None:
    """US dollars a month for ``PEOPLE`` people giving ``ANSWERS_PER_PERSON_A_MONTH`` answers each, at ``PRICES``,
    from mean tokens per answer (``prompt`` (all input), ``cached``, ``response``, ``thinking``): with the cache
    hits the usage reports, and with none.  None without usage.  Pure."""
    if tokens.get("prompt") is None:
        return None
    calls = PEOPLE * ANSWERS_PER_PERSON_A_MONTH
    price = {name: row["usd_per_million"] / 1e6 for name, row in PRICES.items()}
    output = (tokens.get("response") or 0) + max(tokens.get("thinking") or 0, 0)
    cached = tokens.get("cached") or 0
    with_cache = (tokens["prompt"] - cached) * price["input"] + cached * price["cached_input"]
    return {
        "with_cache_hits": round(calls * (with_cache + output * price["output"]), 2),
        "without_cache": round(calls * (tokens["prompt"] * price["input"] + output * price["output"]), 2),
        "output_share": round(output * price["output"] / (with_cache + output * price["output"]), 3),
    }


# Which turns -------------------------------------------------------------------------------------------------

PILOT_SIZE = 40  # dev turns in the pilot, every len(dev) // 40-th
FIRST_ROUND_LAST = (
    332  # dev-0001 to dev-0332: the round written with the catalog, before the later rounds (corpus README)
)
MIXED_SIZE = 200  # turns in each of mixed_tune and mixed_check
MIXED_TAGS = frozenset({"multi", "neighbour", "negation"})  # the kinds a mixed split holds
MIXED_SPLITS = ("mixed_tune", "mixed_check")  # tune: its misses may be read; check: never read, checks a change
DEV_SAMPLES = ("pilot", "first_round", *MIXED_SPLITS)  # seat splits drawn from dev's turns
# the screen's sets (corpus README): turns that must change nothing, by kind, and look-alikes that are evidence; no
# factor labels, so a replay counts per kind the turns that wrote something (``screening_figures``)
SCREENING_SPLITS = ("screening", "screening_heldout")
SEAT_PREFIX = "seat:"  # how a seat extractor is named in eval/results.json: seat:<the models that answered>
SAMPLE_EVERY = 10  # the replay test's sample of validation: every 10th turn


def every_nth(items: Sequence[Any], count: int) -> list[Any]:
    """``count`` items spread evenly over ``items``, in order (all of them when there are fewer).  Pure."""
    step = max(1, len(items) // max(count, 1))
    return list(items[::step][:count])


def first_round(turns: Sequence[Any]) -> list[Any]:
    """The turns of dev's first round (ids ``dev-0001`` to ``dev-{FIRST_ROUND_LAST}``), in order.  Pure."""
    return [turn for turn in turns if int(turn.id.rsplit("-", 1)[1]) <= FIRST_ROUND_LAST]


def mixed(turns: Sequence[Any], split: str) -> list[Any]:
    """``MIXED_SIZE`` turns of ``split`` (``mixed_tune`` or ``mixed_check``): dev's later-round factor turns (after
    the first round) tagged with a ``MIXED_TAGS`` kind (several factors, a neighbouring factor, a negation), spread
    evenly over dev and dealt alternately, so the two halves never share a turn and are alike.  A change of the
    reader read on ``mixed_tune``'s misses is checked on ``mixed_check``, whose turns and misses are never read.
    Pure."""
    pool = [
        turn
        for turn in turns
        if int(turn.id.rsplit("-", 1)[1]) > FIRST_ROUND_LAST and turn.kind == "factor" and MIXED_TAGS & set(turn.tags)
    ]
    dealt = every_nth(pool, 2 * MIXED_SIZE)
    return dealt[MIXED_SPLITS.index(split) :: 2]


def corpus_split(split: str) -> str:
    """The corpus split a seat split's turns come from (``dev`` for ``DEV_SAMPLES``, else the split itself).  Pure."""
    return "dev" if split in DEV_SAMPLES else split


def replay_sample(turns: Sequence[Any]) -> list[Any]:
    """The replay test's sample of validation: every ``SAMPLE_EVERY``-th turn.  Pure."""
    return every_nth(turns, max(1, len(turns) // SAMPLE_EVERY))


# Which figures stand -----------------------------------------------------------------------------------------


def record_seat_figures(results: dict[str, Any], name: str, split: str, figures: dict[str, Any]) -> None:
    """Put a replay's ``figures`` for ``split`` under the seat extractor ``name`` in ``results`` (``eval/results.json``)
    and drop that split from every other seat extractor (``seat:…``): a split has one committed answer file, so the
    figures of answers it no longer holds (an earlier model name) would be reported beside the ones it does.  An
    entry left without splits goes.  Only seat entries (``SEAT_PREFIX``) are touched."""
    extractors = results.setdefault("extractors", {})
    for other in [key for key in extractors if key.startswith(SEAT_PREFIX) and key != name]:
        extractors[other].get("splits", {}).pop(split, None)
        if not extractors[other].get("splits"):
            del extractors[other]
    entry = extractors.setdefault(name, {"splits": {}})
    entry["splits"][split] = figures
    entry["model"], entry["measured_at"] = name, figures["measured_at"]


def screening_figures(records: Sequence[Any]) -> dict[str, Any]:
    """What a screening split's answered turns wrote, per kind (``turns``, ``written``: the turns that stored any
    update) and overall: the turns that must change nothing and how many wrote (target 0), and the look-alikes
    and how many wrote (evidence the model took; their bands are not labelled).  Pure."""
    by_kind: dict[str, dict[str, int]] = {}
    for record in records:
        counts = by_kind.setdefault(record.kind, {"turns": 0, "written": 0})
        counts["turns"] += 1
        counts["written"] += bool(record.stored)
    must_not = [counts for kind, counts in by_kind.items() if kind != LOOK_ALIKE]
    look_alike = by_kind.get(LOOK_ALIKE, {"turns": 0, "written": 0})
    return {
        "by_kind": dict(sorted(by_kind.items())),
        "must_change_nothing": {
            "turns": sum(c["turns"] for c in must_not),
            "written": sum(c["written"] for c in must_not),
        },
        "look_alikes": dict(look_alike),
    }
