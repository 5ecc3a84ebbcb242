"""Validate the labelled eval corpus against the factor catalog and print its coverage.

Usage: ``python eval/corpus/check.py [dev|validation|test ...]`` (default: every split).

Promises: exits 1 and lists every problem when a line does not parse, an id repeats (across
splits too), a field is missing or mistyped, a factor id is unknown or composite, a value lies
outside 0-100, a factor appears twice in one turn, a kind or tag is not in the format, or an
off-topic/hostile turn expects an update.  Otherwise exits 0 and prints coverage counts (per
factor and band, per kind, per tag), the issue's coverage requirements, and dev/test answer
pairs that share most of their words (a hint that test paraphrases dev).  Stdlib + PyYAML only.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
CATALOG = HERE.parents[1] / "functions" / "factor_journal" / "catalog" / "factors.yaml"
KINDS = {"factor", "off_topic", "hostile"}
TAGS = {
    "negation",
    "hedge",
    "number",
    "sarcasm",
    "needs_question",
    "multi",
    "no_cue_words",
    "neighbour",
    "injection",
    "small_talk",
    # no-update turns a careful listener would not take as evidence about this organisation today (issue 35)
    "other_organisation",
    "hypothetical",
    "deferral",
    "question_back",
    "pause",
    # factor turns that name another organisation, a plan or a question and are still evidence about us
    "near_miss",
}
NO_UPDATE_TAGS = {"other_organisation", "hypothetical", "deferral", "question_back", "pause"}
FIELDS = {"id": str, "question": str, "answer": str, "expected": list, "kind": str, "tags": list}
# The six factors the main design names as examples (data_quality, governance, infrastructure,
# sensor data, ML expertise, ML infrastructure): they must be well covered.
DESIGN_FACTORS = (
    "data_quality",
    "data_governance",
    "data_infrastructure",
    "sensor_data",
    "ml_expertise",
    "ml_infrastructure",
)


def band(value: float) -> str:
    return "low" if value < 40 else "mid" if value < 70 else "high"


def load_catalog() -> tuple[set[str], set[str]]:
    data = yaml.safe_load(CATALOG.read_text(encoding="utf-8"))
    ids = {f["id"] for f in data["factors"]}
    composite = {f["id"] for f in data["factors"] if f.get("composite")}
    return ids, composite


def load_split(name: str, errors: list[str]) -> list[dict]:
    path = HERE / f"{name}.jsonl"
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            errors.append(f"{name}:{n}: blank line")
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            errors.append(f"{name}:{n}: not JSON ({exc})")
            continue
        row["_where"] = f"{name}:{n}"
        row["_split"] = name
        rows.append(row)
    return rows


def validate(rows: list[dict], factor_ids: set[str], composite: set[str], errors: list[str]) -> None:
    seen: dict[str, str] = {}
    for row in rows:
        where = row["_where"]
        for field, typ in FIELDS.items():
            if not isinstance(row.get(field), typ):
                errors.append(f"{where}: field {field!r} missing or not {typ.__name__}")
        extra = set(row) - set(FIELDS) - {"_where", "_split"}
        if extra:
            errors.append(f"{where}: unknown fields {sorted(extra)}")
        rid = row.get("id")
        if isinstance(rid, str):
            if not rid.startswith(row["_split"] + "-"):
                errors.append(f"{where}: id {rid!r} does not start with {row['_split']}-")
            if rid in seen:
                errors.append(f"{where}: id {rid!r} repeats {seen[rid]}")
            seen[rid] = where
        if isinstance(row.get("answer"), str) and not row["answer"].strip():
            errors.append(f"{where}: empty answer")
        kind = row.get("kind")
        if kind not in KINDS:
            errors.append(f"{where}: kind {kind!r} not in {sorted(KINDS)}")
        for tag in row.get("tags") or []:
            if tag not in TAGS:
                errors.append(f"{where}: tag {tag!r} not in the format")
        if len(set(row.get("tags") or [])) != len(row.get("tags") or []):
            errors.append(f"{where}: repeated tag")
        expected = row.get("expected") or []
        fids = []
        for item in expected:
            if not isinstance(item, dict) or set(item) != {"factor_id", "value"}:
                errors.append(f"{where}: expected item {item!r} must have exactly factor_id and value")
                continue
            fid, value = item["factor_id"], item["value"]
            fids.append(fid)
            if fid not in factor_ids:
                errors.append(f"{where}: unknown factor {fid!r}")
            if fid in composite:
                errors.append(f"{where}: composite factor {fid!r}")
            if not isinstance(value, int | float) or isinstance(value, bool) or not 0 <= value <= 100:
                errors.append(f"{where}: value {value!r} of {fid} not a number in 0-100")
        if len(set(fids)) != len(fids):
            errors.append(f"{where}: a factor appears twice")
        if kind in {"off_topic", "hostile"} and expected:
            errors.append(f"{where}: {kind} turn must expect no update")
        if kind == "factor" and not 1 <= len(expected) <= 3:
            errors.append(f"{where}: factor turn must expect 1-3 factors")
        tags = set(row.get("tags") or [])
        if kind == "factor" and ("multi" in tags) != (len(expected) > 1):
            errors.append(f"{where}: tag 'multi' must be set exactly when 2-3 factors are expected")
        if tags & NO_UPDATE_TAGS and kind != "off_topic":
            errors.append(f"{row.get('id')}: tags {sorted(tags & NO_UPDATE_TAGS)} mark an off_topic turn")
        if kind == "hostile" and "injection" not in tags:
            errors.append(f"{where}: hostile turn without tag 'injection'")


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-zäöüß0-9']+", text.lower()) if len(w) > 3}


def report(rows: list[dict], factor_ids: set[str]) -> list[str]:
    """Print coverage; return the issue's coverage requirements that are not met."""
    splits = sorted({r["_split"] for r in rows})
    by_factor: dict[str, Counter] = defaultdict(Counter)
    kinds: Counter = Counter()
    tags: Counter = Counter()
    for r in rows:
        kinds[(r["_split"], r["kind"])] += 1
        for t in r["tags"]:
            tags[(r["_split"], t)] += 1
        for e in r["expected"]:
            by_factor[e["factor_id"]][(r["_split"], band(e["value"]))] += 1
    header = "".join(f"{s + ' ' + b:>10}" for s in splits for b in ("low", "mid", "high"))
    print(f"{'factor':32}{header}{'total':>8}")
    for fid in sorted(by_factor, key=lambda f: (f not in DESIGN_FACTORS, f)):
        c = by_factor[fid]
        cells = "".join(f"{c[(s, b)]:>10}" for s in splits for b in ("low", "mid", "high"))
        mark = "*" if fid in DESIGN_FACTORS else " "
        print(f"{mark}{fid:31}{cells}{sum(c.values()):>8}")
    uncovered = sorted(factor_ids - set(by_factor))
    print(f"\nuncovered factors ({len(uncovered)}): {', '.join(uncovered)}")
    print("\nturns per split and kind:")
    for s in splits:
        n = sum(v for (sp, _), v in kinds.items() if sp == s)
        print(f"  {s}: {n} turns  " + "  ".join(f"{k}={kinds[(s, k)]}" for k in sorted(KINDS)))
    print("\ntags per split:")
    for t in sorted(TAGS):
        print(f"  {t:19}" + "".join(f"{s}={tags[(s, t)]:<5}" for s in splits))
    factor_bands = Counter((r["_split"], band(e["value"])) for r in rows for e in r["expected"])
    print(
        "\nexpected updates per band: "
        + "  ".join(f"{s} {b}={factor_bands[(s, b)]}" for s in splits for b in ("low", "mid", "high"))
    )
    print(
        f"words per answer: min {min(len(r['answer'].split()) for r in rows)}, "
        f"max {max(len(r['answer'].split()) for r in rows)}"
    )

    missing = []
    if {"dev", "test"} <= set(splits):
        total = len(rows)
        n_off = sum(r["kind"] == "off_topic" for r in rows)
        n_host = sum(r["kind"] == "hostile" for r in rows)
        covered = [f for f in by_factor]
        checks = [
            (total >= 340, f"at least 340 turns ({total})"),
            (len(covered) >= 25, f"at least 25 factors ({len(covered)})"),
            (n_off >= 40, f"at least 40 off-topic turns ({n_off})"),
            (n_host >= 25, f"at least 25 hostile turns ({n_host})"),
        ]
        for fid in DESIGN_FACTORS:
            c = by_factor[fid]
            checks.append((sum(c.values()) >= 8, f"{fid}: at least 8 turns ({sum(c.values())})"))
            for s in splits:
                bands = {b for b in ("low", "mid", "high") if c[(s, b)]}
                checks.append((len(bands) == 3, f"{fid}: all bands in {s} ({sorted(bands)})"))
        for fid in covered:
            n = sum(by_factor[fid].values())
            checks.append((n >= 4, f"{fid}: at least 4 turns ({n})"))
        n_dev = sum(r["_split"] == "dev" for r in rows)
        n_test = sum(r["_split"] == "test" for r in rows)
        checks.append((n_test >= 200, f"a held-out test split of at least 200 turns ({n_test})"))
        checks.append((n_dev >= n_test, f"dev (the training split) at least as large as test ({n_dev} vs {n_test})"))
        missing = [text for ok, text in checks if not ok]
        print(f"\nrequirements: {len(checks) - len(missing)}/{len(checks)} met")
        for text in missing:
            print(f"  NOT MET: {text}")
        dev = [(r["id"], words(r["answer"])) for r in rows if r["_split"] != "test"]
        close = []
        for r in rows:
            if r["_split"] != "test":
                continue
            tw = words(r["answer"])
            for did, dw in dev:
                if tw and dw and len(tw & dw) / len(tw | dw) >= 0.5:
                    close.append((r["id"], did))
        print(f"test answers sharing half their words with a dev or validation answer: {close or 'none'}")
    return missing


def main(argv: list[str]) -> int:
    names = argv or ["dev", "validation", "test"]
    names = [n for n in names if (HERE / f"{n}.jsonl").exists()]
    factor_ids, composite = load_catalog()
    errors: list[str] = []
    rows = [row for name in names for row in load_split(name, errors)]
    validate(rows, factor_ids, composite, errors)
    if errors:
        print("\n".join(errors))
        print(f"\n{len(errors)} problem(s)")
        return 1
    report(rows, factor_ids)
    print(f"\nOK: {len(rows)} turns valid in {', '.join(names)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
