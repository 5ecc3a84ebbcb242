"""The extractors per turn: the semantic default beside the keyword rules.

Time per turn is what the pipeline spends on reading a turn: candidate selection (which runs the
semantic detector) plus ``extract``, over every corpus turn (both splits), in-process.  Memory is
the peak resident set of a fresh Python process that loads the extractor and reads the corpus, the
way a function instance would (the deployed function has 512 MB).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from bench.common import percentiles

ROOT = Path(__file__).resolve().parents[1]

_PROBE = r"""
import json, resource, sys, time
sys.path.insert(0, {functions!r})
started = time.perf_counter()
from factor_journal.catalog import load_catalog
from factor_journal.candidates import select_candidates
from factor_journal.graph import graph_for
from factor_journal.runtime import make_extractor
from factor_journal.extraction.base import ExchangeTurn, ExtractionRequest
import factor_journal.candidates
if {kind!r} == "rules":  # the rules alone: lexical candidates, as before the semantic extractor
    factor_journal.candidates._semantic = lambda *args: []
catalog = load_catalog(); graph = graph_for(catalog)
baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
extractor = make_extractor({kind!r})
paths = [{corpus!r} + f"/{{split}}.jsonl" for split in ("dev", "test")]
turns = [json.loads(line) for path in paths for line in open(path) if line.strip()]
def one(turn):
    recent = [ExchangeTurn(role="assistant", text=turn["question"])] if turn["question"] else []
    candidates = select_candidates(catalog, graph, turn["answer"], turn["question"], {{}})
    request = ExtractionRequest(user_id="u", session_id="s", turn_id="t", text=turn["answer"], recent=recent,
                                candidates=candidates)
    extractor.extract(request)
one(turns[0])
ready = time.perf_counter() - started
samples = []
for turn in turns:
    t0 = time.perf_counter(); one(turn); samples.append((time.perf_counter() - t0) * 1000)
print(json.dumps({{"samples": samples, "ready_s": ready, "baseline_mb": baseline,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""


def _measure(kind: str) -> dict:
    code = _PROBE.format(functions=str(ROOT / "functions"), kind=kind, corpus=str(ROOT / "eval" / "corpus"))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, check=True)
    data = json.loads(done.stdout.strip().splitlines()[-1])
    return {
        "per_turn": percentiles(data["samples"]),
        "first_turn_ready_s": round(data["ready_s"], 2),
        "peak_rss_mb": round(data["peak_mb"], 1),
        "rss_before_extractor_mb": round(data["baseline_mb"], 1),
    }


def run() -> dict:
    started = time.perf_counter()
    figures = {kind: _measure(kind) for kind in ("semantic", "rules")}
    semantic, rules = figures["semantic"]["per_turn"], figures["rules"]["per_turn"]
    figures["semantic_adds_p50_ms"] = round(semantic["p50_ms"] - rules["p50_ms"], 2)
    figures["function_memory_mb"] = 512
    figures["note"] = "per turn = candidate selection + extract, in-process, every dev and test corpus turn"
    figures["measured_s"] = round(time.perf_counter() - started, 1)
    for kind in ("semantic", "rules"):
        per = figures[kind]["per_turn"]
        print(f"  {kind}: p50 {per['p50_ms']} ms, p95 {per['p95_ms']} ms, peak RSS {figures[kind]['peak_rss_mb']} MB")
    return figures
