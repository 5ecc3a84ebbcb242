"""``make eval``: the labelled corpus through the real pipeline on the emulator, scored.

    python -m factor_journal_tools.evaluate [--extractor semantic rules gemini] [--split dev validation]
    python -m factor_journal_tools.evaluate --split test [--rescore-test "why again"]

Each turn gets a fresh user and session in a dedicated database (``fj-eval``, where no trigger
listens): the assistant question and the user turn are written as turn documents, then
``TurnProcessor(store, extractor).process(user_id, session_id, turn_id)`` runs candidate selection,
the extractor, screening and the store's transaction, and what was stored is read back and scored.
A turn that fails (any status but processed / no_update, or an exception) counts as a miss of every
factor it expected, never skipped.

Writes ``eval/results.json`` (figures per extractor and split, each split with the model and time of its
own run; splits and extractors not run this time are kept) and ``eval/REPORT.md``.  The extractor
defaults to FJ_EXTRACTOR (else the default).

``test`` is scored only when asked for, and once per model version: every scoring is appended to
``eval/test_scorings.jsonl`` (the ledger the report counts), and a model already in it is refused unless
``--rescore-test`` gives the reason, which the ledger keeps.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import uuid
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from factor_journal.catalog.models import band_of, load_catalog
from factor_journal.extraction.base import sees_whole_catalog
from factor_journal_tools.corpus import CORPUS, KINDS, REPO, SPLITS, CorpusTurn, available_splits, load_corpus
from factor_journal_tools.report import headline, render_report
from factor_journal_tools.scorings import TEST_LEDGER, ledger_line, read_test_scorings, why_test_is_refused
from factor_journal_tools.torn_margin import choose_margin, torn_curve

DEFAULT_SPLITS = ("dev", "validation")  # test only when asked for, once per model version (TEST_LEDGER)
RESULTS = REPO / "eval" / "results.json"
REPORT = REPO / "eval" / "REPORT.md"
DATABASE = "fj-eval"
BANDS = ("low", "mid", "high")
# Turns that must change nothing because a careful listener would not take them as evidence about this
# organisation today (``extraction.listening``), each an off_topic turn with one of these tags; scored apart
NO_UPDATE_TAGS = ("other_organisation", "hypothetical", "deferral", "question_back", "pause")
# Abstention thresholds on the semantic reader's score P(detected) x P(band) for the trade-off curve
CURVE_THRESHOLDS = (0.1, 0.15, 0.2, 0.225, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7)
MAX_SPURIOUS_PER_TURN = 0.1  # the target the abstention threshold is chosen under (on validation)
CALIBRATION_EDGES = (0.0, 0.3, 0.5, 0.7, 0.85, 1.0001)


def splits_to_run(requested: Sequence[str] | None, present: Sequence[str]) -> list[str]:
    """The splits a run scores: those named, else the default ones present (never ``test``, which is scored
    only when named).  Pure."""
    return list(requested) if requested else [split for split in DEFAULT_SPLITS if split in present]


# The test ledger ---------------------------------------------------------------------------------


# Running -----------------------------------------------------------------------------------------


@dataclass
class TurnRecord:
    """One corpus turn after the pipeline: what was expected, what was stored, how it went."""

    id: str
    kind: str
    tags: tuple[str, ...]
    expected: dict[str, float]
    stored: dict[str, float] = field(default_factory=dict)
    confidence: dict[str, float] = field(default_factory=dict)  # the extractor's stated confidence per stored factor
    status: str = "failed"
    error: str | None = None
    extractor_ms: float | None = None
    screened: str | None = None  # why the turn was set aside, if it was (``turn.extraction.screened``)
    reached_reader: bool = False  # the extractor was called for the turn (not refused before it)
    # the expected factors the reader was not shown (all of them on a refused turn; those not among the candidates
    # of an extractor that reads candidates; none for one shown the whole catalog)
    not_offered: tuple[str, ...] = ()
    usage: tuple[int, int, int, int] | None = None  # tokens the call reported: prompt, cached, response, thinking
    # every reading the semantic reader made of the turn among the candidates, abstained or not:
    # (factor_id, value, score, stated confidence), for the abstention trade-off curve
    readings: list[tuple[str, float, float, float]] = field(default_factory=list)
    read: list[Any] = field(default_factory=list)  # the same readings as the reader made them (``semantic.Reading``)
    torn: int = 0  # questions the turn's outcome asks instead of readings (``turn.extraction.torn``)

    @property
    def refused(self) -> bool:
        """Refused before the reader: set aside and never read (a model may read a turn and leave it alone, and
        the rules then name why it changed nothing; that turn was not refused)."""
        return self.screened is not None and not self.reached_reader


class TimedExtractor:
    """Wraps an extractor: times each call and keeps its raw output (for the confidences), the factors it was
    shown (None: the whole catalog) and the tokens it reported."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self.sees_whole_catalog = sees_whole_catalog(inner)
        self.forget()

    def forget(self) -> None:
        """Clear what the last call left (before each turn)."""
        self.last_ms: float | None = None
        self.last_updates: list[Any] = []
        self.last_readings: list[tuple[str, float, float, float]] = []
        self.last_read: list[Any] = []
        self.last_offered: set[str] | None = None
        self.last_candidates: list[str] = []  # the pre-selected candidates (a hint for a model shown the catalog)
        self.last_usage: tuple[int, int, int, int] | None = None

    def extract(self, request: Any) -> Any:
        self.last_candidates = [c.factor_id for c in request.candidates]
        self.last_offered = None if self.sees_whole_catalog else set(self.last_candidates)
        started = time.perf_counter()
        try:
            result = self.inner.extract(request)
        finally:
            self.last_ms = (time.perf_counter() - started) * 1000
        self.last_updates = list(result.raw_updates)
        self.last_read = self._read(request)
        model: Any = getattr(getattr(self.inner, "reader", None), "model", None)  # set whenever there are readings
        self.last_readings = [(r.factor_id, r.value, r.score, model.stated_confidence(r.score)) for r in self.last_read]
        self.last_usage = (result.prompt_tokens, result.cached_tokens, result.response_tokens, result.thinking_tokens)
        return result

    def _read(self, request: Any) -> list[Any]:
        """Every reading of the semantic reader (abstained ones too) among the request's candidates, as the
        pipeline would screen them; none for another extractor."""
        reader = getattr(self.inner, "reader", None)
        if reader is None:
            return []
        question = next((t.text for t in reversed(request.recent) if t.role == "assistant"), "")
        if request.recent and request.recent[-1].role != "assistant":
            question = ""  # the user spoke last: no question is being answered (as the extractor reads it)
        allowed = {c.factor_id for c in request.candidates}
        return [r for r in reader.readings(question, request.text) if r.factor_id in allowed]


def run_turn(store: Any, processor: Any, extractor: TimedExtractor, turn: CorpusTurn, run_id: str) -> TurnRecord:
    """One corpus turn through ``TurnProcessor.process`` for a fresh user; failures become failed records."""
    from factor_journal.models import UserProfile

    record = TurnRecord(turn.id, turn.kind, turn.tags, dict(turn.expected))
    extractor.forget()
    try:
        user_id = f"eval-{run_id}-{turn.id}"[:120]
        store.register_user(UserProfile(user_id=user_id, display_name=f"eval {turn.id}"))
        session = store.start_session(user_id)
        at = datetime.now(UTC) - timedelta(minutes=5)
        if turn.question:
            store.add_turn(user_id, session, "assistant", turn.question, created_at=at)
        turn_id = store.add_turn(user_id, session, "user", turn.answer, created_at=at + timedelta(seconds=20))
        outcome = processor.process(user_id, session, turn_id)
        record.status, record.error = outcome.status, outcome.error
        record.extractor_ms = extractor.last_ms
        record.readings, record.read = list(extractor.last_readings), list(extractor.last_read)
        record.reached_reader, record.usage = extractor.last_ms is not None, extractor.last_usage
        offered = extractor.last_offered
        if not record.reached_reader or offered is not None:
            record.not_offered = tuple(
                f for f in turn.expected if not record.reached_reader or f not in (offered or ())
            )
        extraction = (store.turn_data(user_id, session, turn_id) or {}).get("extraction") or {}
        screened = extraction.get("screened")
        record.screened = screened.get("kind") if isinstance(screened, dict) else None
        record.torn = len(extraction.get("torn") or [])
        if outcome.status in ("processed", "no_update"):
            summary = store.summary(user_id)
            stated = {u.get("factor_id"): u.get("confidence") for u in extractor.last_updates if isinstance(u, dict)}
            for fid, state in (summary.factors if summary else {}).items():
                derived = store.catalog.has_factor(fid) and store.catalog.factor(fid).is_composite
                if state.current_value is not None and not derived:  # composites are derived, never extracted
                    record.stored[fid] = float(state.current_value)
                    conf = stated.get(fid)
                    record.confidence[fid] = float(conf if isinstance(conf, int | float) else state.current_confidence)
    except Exception as error:  # counted as a miss, never skipped
        record.status, record.error = "failed", f"{type(error).__name__}: {error}"[:300]
        record.extractor_ms = extractor.last_ms
        record.reached_reader = extractor.last_ms is not None
    return record


def run_split(store: Any, extractor: Any, turns: Sequence[CorpusTurn], progress: bool = False) -> list[TurnRecord]:
    from factor_journal.pipeline import TurnProcessor

    timed = TimedExtractor(extractor)
    processor = TurnProcessor(store, timed)
    run_id = uuid.uuid4().hex[:8]
    records = []
    for number, turn in enumerate(turns, 1):
        records.append(run_turn(store, processor, timed, turn, run_id))
        if progress and number % 50 == 0:
            print(f"  {number}/{len(turns)}", file=sys.stderr, flush=True)
    return records


# Scoring -----------------------------------------------------------------------------------------


def _percentile(samples: Sequence[float], q: int) -> float | None:
    ordered = sorted(samples)
    if not ordered:
        return None
    if len(ordered) == 1:
        return round(ordered[0], 2)
    return round(statistics.quantiles(ordered, n=100, method="inclusive")[q - 1], 2)


def _ratio(a: float, b: float) -> float | None:
    return round(a / b, 4) if b else None


def read_results(path: Path) -> dict[str, Any]:
    """``eval/results.json`` as it stands (empty when there is none), with its ``extractors`` table."""
    results = json.loads(path.read_text()) if path.exists() else {}
    results.setdefault("extractors", {})
    return results


def write_results(path: Path, results: dict[str, Any]) -> None:
    """``results`` to ``path`` the one way every tool writes it (sorted keys, one-space indent), so a run that
    changes one figure changes one line."""
    path.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")


def shipped_threshold() -> float:
    """The abstention threshold the packaged semantic model ships with."""
    from factor_journal.extraction.semantic import load_model_artefact

    return load_model_artefact().threshold


def score(records: Iterable[TurnRecord]) -> dict[str, Any]:
    """The figures for a list of turn records (pure; a failed turn stores nothing, so it scores as misses)."""
    records = list(records)
    tp = fp = fn = band_correct = 0
    errors: list[float] = []
    confusion = {band: {b: 0 for b in (*BANDS, "none")} for band in BANDS}
    per_factor: dict[str, dict[str, int]] = defaultdict(
        lambda: {"expected": 0, "detected": 0, "band_correct": 0, "spurious": 0}
    )
    by_kind_updates = {kind: 0 for kind in KINDS}
    by_tag: dict[str, dict[str, int]] = defaultdict(
        lambda: {"expected": 0, "detected": 0, "band_correct": 0, "turns": 0, "spurious": 0}
    )
    buckets = [{"n": 0, "correct": 0, "confidence": 0.0} for _ in CALIBRATION_EDGES[:-1]]
    for record in records:
        by_kind_updates[record.kind] = by_kind_updates.get(record.kind, 0) + len(record.stored)
        for tag in record.tags:
            by_tag[tag]["turns"] += 1
        for fid, value in record.expected.items():
            row = per_factor[fid]
            row["expected"] += 1
            for tag in record.tags:
                by_tag[tag]["expected"] += 1
            got = record.stored.get(fid)
            if got is None:
                fn += 1
                confusion[band_of(value)]["none"] += 1
                continue
            tp += 1
            row["detected"] += 1
            errors.append(abs(got - value))
            confusion[band_of(value)][band_of(got)] += 1
            hit = band_of(got) == band_of(value)
            band_correct += hit
            row["band_correct"] += hit
            for tag in record.tags:
                by_tag[tag]["detected"] += 1
                by_tag[tag]["band_correct"] += hit
        for fid, got in record.stored.items():
            correct = fid in record.expected and band_of(got) == band_of(record.expected[fid])
            if fid not in record.expected:
                fp += 1
                per_factor[fid]["spurious"] += 1
                for tag in record.tags:
                    by_tag[tag]["spurious"] += 1
            confidence = record.confidence.get(fid, 0.0)
            for index, (low, high) in enumerate(zip(CALIBRATION_EDGES, CALIBRATION_EDGES[1:], strict=False)):
                if low <= confidence < high:
                    buckets[index]["n"] += 1
                    buckets[index]["correct"] += correct
                    buckets[index]["confidence"] += confidence
    expected_total = tp + fn
    timings = [r.extractor_ms for r in records if r.extractor_ms is not None]
    curve = abstention_curve(records)
    torn = torn_curve(records, shipped_threshold()) if any(r.read for r in records) else []
    return {
        "turns": len(records),
        "turns_by_kind": {kind: sum(1 for r in records if r.kind == kind) for kind in KINDS},
        "failed_turns": sum(1 for r in records if r.status not in ("processed", "no_update")),
        "expected_factors": expected_total,
        "updates": tp + fp,
        "detection": {
            "true_positive": tp,
            "false_positive": fp,
            "false_negative": fn,
            "precision": _ratio(tp, tp + fp),
            "recall": _ratio(tp, expected_total),
        },
        "band_accuracy": _ratio(band_correct, expected_total),
        "band_accuracy_when_detected": _ratio(band_correct, tp),
        "mae": round(statistics.fmean(errors), 2) if errors else None,
        "spurious_per_turn": _ratio(fp, len(records)),
        "updates_on_off_topic": by_kind_updates.get("off_topic", 0),
        "updates_on_hostile": by_kind_updates.get("hostile", 0),
        "must_change_nothing": must_change_nothing(records),
        "factor_turns_refused": sum(1 for r in records if r.kind == "factor" and r.refused),
        "expected_reaching_reader": _ratio(expected_total - sum(len(r.not_offered) for r in records), expected_total),
        "tokens": mean_tokens(records),
        "abstention_curve": curve,
        "abstention_choice": choose_threshold(curve),
        "torn_curve": torn,
        "torn_choice": choose_margin(torn),
        "torn_questions": sum(r.torn for r in records),
        "confusion": confusion,
        "per_factor": {fid: per_factor[fid] for fid in sorted(per_factor)},
        "by_tag": {
            tag: {
                **row,
                "recall": _ratio(row["detected"], row["expected"]),
                "band_accuracy": _ratio(row["band_correct"], row["expected"]),
            }
            for tag, row in sorted(by_tag.items())
        },
        "extractor_ms": {"p50": _percentile(timings, 50), "p95": _percentile(timings, 95), "n": len(timings)},
        "calibration": [
            {
                "confidence": f"{low:.2f}-{min(high, 1.0):.2f}",
                "n": b["n"],
                "accuracy": _ratio(b["correct"], b["n"]),
                "mean_confidence": _ratio(b["confidence"], b["n"]),
            }
            for (low, high), b in zip(zip(CALIBRATION_EDGES, CALIBRATION_EDGES[1:], strict=False), buckets, strict=True)
        ],
    }


def mean_tokens(records: Iterable[TurnRecord]) -> dict[str, Any]:
    """Tokens per call of the turns whose extractor reported usage: mean prompt (all input), cached, response and
    thinking tokens, and the number of calls.  Pure."""
    usages = [r.usage for r in records if r.usage is not None]
    names = ("prompt", "cached", "response", "thinking")
    means = {name: round(statistics.fmean(u[i] for u in usages), 1) if usages else None for i, name in enumerate(names)}
    return {**means, "calls": len(usages)}


def must_change_nothing(records: Iterable[TurnRecord]) -> dict[str, dict[str, Any]]:
    """Per kind of turn that must change nothing (hostile, each ``NO_UPDATE_TAGS`` tag, other off-topic turns):
    turns, turns that got an update, updates, and turns refused before the reader (in all, and as that kind). Pure."""
    rows: dict[str, dict[str, Any]] = {}
    for record in records:
        if record.kind == "factor":
            continue
        tagged = [t for t in record.tags if t in NO_UPDATE_TAGS]
        key = "hostile" if record.kind == "hostile" else (tagged[0] if tagged else "other_off_topic")
        row = rows.setdefault(key, {"turns": 0, "updated_turns": 0, "updates": 0, "refused": 0, "refused_as_kind": 0})
        row["turns"] += 1
        row["updated_turns"] += bool(record.stored)
        row["updates"] += len(record.stored)
        row["refused"] += record.refused
        row["refused_as_kind"] += record.refused and record.screened == key
    order = ["hostile", *NO_UPDATE_TAGS, "other_off_topic"]
    return {key: rows[key] for key in order if key in rows}


def abstention_curve(records: Iterable[TurnRecord], thresholds: Sequence[float] = CURVE_THRESHOLDS) -> list[dict]:
    """What the semantic reader would have stored at each abstention threshold on its score (P(detected) x
    P(band)), from every reading it made in the run (abstained ones too) on turns the screening let through:
    band accuracy over every expected factor (a miss is wrong), readings kept (and their share of all
    readings), the share of kept readings with the right factor and band, spurious updates per turn and
    updates on turns that must change nothing.  Empty when the run kept no readings (another extractor). Pure."""
    records = list(records)
    if not any(r.readings for r in records):
        return []
    everything = sum(len(r.readings) for r in records if not r.refused)
    curve = []
    for threshold in thresholds:
        kept = right = band_right = spurious = on_no_update = 0
        lowest: float | None = None
        for record in records:
            stored = {} if record.refused else {f: (v, c) for f, v, sc, c in record.readings if sc >= threshold}
            kept += len(stored)
            for fid, (value, confidence) in stored.items():
                lowest = confidence if lowest is None else min(lowest, confidence)
                expected = record.expected.get(fid)
                if expected is None:
                    spurious += 1
                    on_no_update += record.kind != "factor"
                elif band_of(value) == band_of(expected):
                    right += 1
            band_right += sum(
                1
                for fid, value in record.expected.items()
                if fid in stored and band_of(stored[fid][0]) == band_of(value)
            )
        expected_total = sum(len(r.expected) for r in records)
        curve.append(
            {
                "threshold": threshold,
                "band_accuracy": _ratio(band_right, expected_total),
                "kept": kept,
                "kept_share": _ratio(kept, everything),
                "kept_right": _ratio(right, kept),
                "lowest_confidence": round(lowest, 3) if lowest is not None else None,
                "spurious_per_turn": _ratio(spurious, len(records)),
                "updates_on_no_update_turns": on_no_update,
            }
        )
    return curve


def choose_threshold(curve: Sequence[dict], max_spurious: float = MAX_SPURIOUS_PER_TURN) -> dict[str, Any] | None:
    """The threshold with the best band accuracy among those at or under ``max_spurious`` spurious updates per
    turn (a tie goes to the higher threshold: fewer readings for the same accuracy); without one, the threshold
    with the fewest spurious updates.  Chosen on validation, never on test.  Pure."""
    if not curve:
        return None
    within = [row for row in curve if (row["spurious_per_turn"] or 0) <= max_spurious]
    if within:
        best = max(within, key=lambda row: (row["band_accuracy"] or 0, row["threshold"]))
        return {"threshold": best["threshold"], "rule": f"best band accuracy at <= {max_spurious} spurious/turn"}
    best = min(curve, key=lambda row: (row["spurious_per_turn"] or 0, -row["threshold"]))
    return {"threshold": best["threshold"], "rule": f"no threshold within {max_spurious} spurious/turn: fewest"}


# Report ------------------------------------------------------------------------------------------

TARGETS = {"band_accuracy": 0.85, "recall": 0.85, "spurious_per_turn": 0.1}


# Command -----------------------------------------------------------------------------------------


def evaluate(
    extractor: Any,
    splits: Sequence[str],
    database: str = DATABASE,
    progress: bool = True,
    corpus_dir: Path = CORPUS,
) -> dict[str, Any]:
    """Run and score each split with ``extractor`` on the emulator database ``database``; each split's figures
    carry the model and the time of its own run."""
    from factor_journal.runtime import project_id
    from factor_journal.store import FactorJournalStore

    if not os.environ.get("FIRESTORE_EMULATOR_HOST"):
        raise SystemExit("FIRESTORE_EMULATOR_HOST is not set: run the eval with `make eval` (it starts the emulators)")
    catalog = load_catalog()
    store = FactorJournalStore.connect(project_id(), database, catalog)
    model = model_of(extractor)
    out: dict[str, Any] = {"name": extractor.name, "model": model, "splits": {}}
    for split in splits:
        turns = load_corpus(corpus_dir / f"{split}.jsonl", catalog)
        if progress:
            print(f"== {extractor.name} · {split}: {len(turns)} turns", file=sys.stderr, flush=True)
        figures = score(run_split(store, extractor, turns, progress))
        figures["model"], figures["measured_at"] = model, datetime.now(UTC).isoformat(timespec="seconds")
        out["splits"][split] = figures
    out["measured_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    return out


def model_of(extractor: Any) -> str | None:
    """The model version an extractor names (None when it names none)."""
    model = getattr(extractor, "model", None)
    return model if isinstance(model, str) and model else None


def training_of(extractor: Any) -> dict[str, Any] | None:
    """What a trained extractor's artefact says of its training: version, data, cross-validated figures and the
    abstention threshold (None for an extractor that is not trained here)."""
    trained = getattr(getattr(extractor, "reader", None), "model", None)
    metadata = getattr(trained, "metadata", None)
    if not isinstance(metadata, dict):
        return None
    return {**metadata, "threshold": getattr(trained, "threshold", None)}


def main(argv: Sequence[str] | None = None) -> int:
    from factor_journal.runtime import make_extractor

    parser = argparse.ArgumentParser(prog="python -m factor_journal_tools.evaluate")
    parser.add_argument(
        "--extractor", nargs="*", help="extractors to evaluate (default: FJ_EXTRACTOR, else the default)"
    )
    parser.add_argument(
        "--split", nargs="*", choices=SPLITS, help="splits (default: dev and validation; test only when named)"
    )
    parser.add_argument("--rescore-test", metavar="REASON", help="score test for a model it was scored for already")
    parser.add_argument("--report-only", action="store_true", help="write the report from the results; run nothing")
    parser.add_argument("--database", default=DATABASE)
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--report", type=Path, default=REPORT)
    parser.add_argument("--test-ledger", type=Path, default=TEST_LEDGER)
    args = parser.parse_args(argv)
    try:
        ledger = read_test_scorings(args.test_ledger)
    except ValueError as error:
        parser.error(f"the test ledger does not read: {error}")
    results = read_results(args.results)
    results.setdefault("extractors", {})
    extractors = [make_extractor(kind) for kind in args.extractor or [os.environ.get("FJ_EXTRACTOR") or ""]]
    for extractor in extractors:
        if (training := training_of(extractor)) is not None:
            results["extractors"].setdefault(extractor.name, {"splits": {}})["training"] = training
    splits = [] if args.report_only else splits_to_run(args.split, available_splits())
    if not splits and not args.report_only:
        parser.error(f"no corpus split found in {CORPUS}")
    if "test" in splits:
        for extractor in extractors:
            if refusal := why_test_is_refused(ledger, model_of(extractor), args.rescore_test):
                parser.error(f"{extractor.name}: {refusal}")
    for extractor in extractors:
        if not splits:
            break
        figures = evaluate(extractor, splits, args.database)
        entry = results["extractors"].setdefault(figures["name"], {"splits": {}})
        entry["splits"].update(figures["splits"])
        entry["model"], entry["measured_at"] = figures["model"], figures["measured_at"]
        for split in splits:
            print(
                f"{figures['name']} · {split}: "
                + ", ".join(f"{k} {v}" for k, v in headline(figures["splits"][split]).items())
            )
        if "test" in splits:
            test = figures["splits"]["test"]
            why = args.rescore_test or "first scoring of this model"
            ledger.append(ledger_line(figures["name"], figures["model"], test["measured_at"], test, why))
            with args.test_ledger.open("a", encoding="utf-8") as out:
                out.write(json.dumps(ledger[-1], sort_keys=True) + "\n")
    results["targets"] = TARGETS
    args.results.parent.mkdir(parents=True, exist_ok=True)
    write_results(args.results, results)
    args.report.write_text(render_report(results, ledger))
    print(f"wrote {args.results} and {args.report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
