"""Label audit: how far independent raters reproduce a split's labels, beside how far the reader does.

    python -m factor_journal_tools.label_audit view    # eval/audit/view.txt and its key, for the raters
    python -m factor_journal_tools.label_audit score   # the agreement figures, from the raters' files
    python -m factor_journal_tools.label_audit view --screening    # the same for the screen's held-out set
    python -m factor_journal_tools.label_audit score --screening
    python -m factor_journal_tools.label_audit review --split test --out FILE   # the owner's review sheet

A reader's band accuracy on a split is bounded by how reproducible the split's labels are. To measure that without
anyone reading the labels, every factor turn of ``test`` and as many ``validation`` factor turns drawn at random
(seed ``SEED``) are shuffled together into one view (``eval/audit/view.txt``): the corpus's labelling rules (its
README, "How the turns are labelled"), the catalog as the reader is shown it, and per item only an opaque id, the
question and the answer, never the split, the labels or any reading. Raters (helpers, each reading only the view)
write ``{"item", "labels": [{"factor_id", "value"}]}`` lines into ``eval/audit/<rater>/<part>.jsonl``.

``score`` compares, per split, three label sets over the same expected factors, as ``make eval`` scores (right =
the factor named, in its band): each rater against the labels, the reader in Gemini's seat (the committed answers'
own readings, ``eval/seat/answers/<split>.jsonl``) against the labels, the reader against each rater, the raters
against each other; where the reader's band differs from the label's, whose band the raters give; and how many labels
every rater puts in one other band. Nothing here changes a label: ``review`` writes those labels, each with its turn,
the raters' and the reader's values, into a sheet for the split's owner, whose call a correction is.

``--screening`` audits the screen's held-out set the same way (``eval/audit/screening/``): all its turns shuffled, the
raters told the corpus's definitions of the turns that must change nothing and of evidence about this organisation
today, each saying per item whether it is such evidence (``{"item", "evidence": true|false, "kind"}``). ``score``
then gives, per kind of the set, how many turns the raters take as evidence, and, for each committed answer set of the
reader in Gemini's seat (its own readings: a turn it calls evidence with at least one update), the must-change-nothing
turns it writes and how many of those the raters take as evidence.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import random
import sys
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from factor_journal.catalog.models import band_of, load_catalog
from factor_journal.extraction.base import TurnKind
from factor_journal.extraction.gemini import GeminiSettings
from factor_journal.extraction.prompts import EVIDENCE_RULES, TURN_LINE, catalog_text
from factor_journal_tools.corpus import CORPUS, LOOK_ALIKE, REPO, CorpusTurn, load_corpus, load_screening
from factor_journal_tools.seat import ANSWERS, REQUESTS, Answer, SeatRequest, read_answers, read_requests

AUDIT = REPO / "eval" / "audit"
SCREENING_AUDIT = AUDIT / "screening"
HELD_OUT = "screening_heldout"
# What the raters of the screen's held-out set are told (the corpus README's definitions, issue 35's wording)
SCREENING_RULES = """An answer is evidence when any part of it states how things are in the speaker's own organisation
today, in a way that bears on the organisation's readiness for AI (its data, systems, people, processes, leadership,
budget, partners, risks, the pressure it is under). An answer that names another organisation, a plan or a question
can still be evidence about us when it also states how things are here now.

It is not evidence (it must change nothing) when a careful listener would not take it as evidence about this
organisation today, because it is:
- other_organisation: about another organisation (a relative's or friend's firm, a neighbour, a supplier's,
  customer's or competitor's own systems, a former employer);
- hypothetical: a wish, a what-if or a plan that says nothing about how things are now;
- deferral: "I don't know", "ask X", "I only joined";
- question_back: a question back to the interviewer;
- pause: a request to pause, stop or change the subject."""
SEED = 44
SPLITS = ("test", "validation")

Labels = Mapping[str, Mapping[str, float]]  # turn id -> factor id -> value
Label = tuple[str, str]  # turn id, factor id


def item_id(turn_id: str) -> str:
    """The opaque id a turn has in the view (12 hex characters of its id's sha256). Pure."""
    return hashlib.sha256(turn_id.encode("utf-8")).hexdigest()[:12]


def audit_items(test: Sequence[CorpusTurn], validation: Sequence[CorpusTurn], seed: int = SEED) -> list[CorpusTurn]:
    """Every factor turn of ``test`` and as many of ``validation``'s drawn at random, shuffled together. Pure."""
    rng = random.Random(seed)
    ours = [turn for turn in test if turn.kind == "factor"]
    theirs = [turn for turn in validation if turn.kind == "factor"]
    items = ours + rng.sample(theirs, min(len(ours), len(theirs)))
    rng.shuffle(items)
    return items


def _with_items(head: list[str], items: Sequence[CorpusTurn]) -> str:
    """``head`` then each item's heading (number and opaque id), question and answer, then the end line. Pure."""
    lines = list(head)
    for number, turn in enumerate(items, 1):
        lines += [
            f"======== ITEM {number} of {len(items)} {item_id(turn.id)} ========",
            "Question: " + json.dumps(turn.question, ensure_ascii=False),
            "Answer: " + json.dumps(turn.answer, ensure_ascii=False),
            "",
        ]
    lines.append(f"======== END ({len(items)} items) ========")
    return "\n".join(lines) + "\n"


def render_view(items: Sequence[CorpusTurn], rules: str, catalog: str) -> str:
    """What a rater reads: the task, the labelling rules, the catalog, then each item's id, question and answer.
    Pure."""
    lines = [
        "# Label audit: rate each interview answer as a careful human rater would",
        "",
        "Each item below is one answer a person gave in an interview about their company's AI readiness, with the "
        "interviewer's question before it (it may be empty). For each item, say which catalog factors the answer "
        "gives evidence about and the value (0-100) a careful rater would give each, following the labelling rules "
        "and the catalog below. Label only the factors the answer gives evidence about; the question gives context "
        "but is not evidence.",
        "",
        "## Labelling rules",
        rules.strip(),
        "",
        catalog,
        "",
        "## Items",
    ]
    return _with_items(lines, items)


def agreement(reference: Labels, other: Labels, turn_ids: Sequence[str]) -> dict[str, int]:
    """Over ``reference``'s factors of ``turn_ids``: how many, how many ``other`` names, and how many it names in the
    same band. Pure."""
    expected = named = right = 0
    for turn_id in turn_ids:
        theirs = other.get(turn_id, {})
        for factor_id, value in reference.get(turn_id, {}).items():
            expected += 1
            if factor_id in theirs:
                named += 1
                right += band_of(theirs[factor_id]) == band_of(value)
    return {"expected": expected, "named": named, "right": right}


def sides(gold: Labels, reader: Labels, raters: Sequence[Labels], turn_ids: Sequence[str]) -> dict[str, int]:
    """Where the reader names a labelled factor in another band than the label's: how often, and per rater reading
    whether that rater gives the label's band, the reader's, a third, or names nothing. Pure."""
    counts: Counter[str] = Counter()
    for turn_id in turn_ids:
        for factor_id, value in gold.get(turn_id, {}).items():
            read = reader.get(turn_id, {}).get(factor_id)
            if read is None or band_of(read) == band_of(value):
                continue
            counts["reader_in_another_band"] += 1
            for rater in raters:
                rated = rater.get(turn_id, {}).get(factor_id)
                if rated is None:
                    counts["rater_names_nothing"] += 1
                elif band_of(rated) == band_of(value):
                    counts["rater_gives_label_band"] += 1
                elif band_of(rated) == band_of(read):
                    counts["rater_gives_reader_band"] += 1
                else:
                    counts["rater_gives_third_band"] += 1
    return dict(counts)


def labels_raters_put_elsewhere(gold: Labels, raters: Sequence[Labels], turn_ids: Sequence[str]) -> list[Label]:
    """The labelled factors (turn id, factor id) every rater names in one and the same band, other than the label's,
    in ``turn_ids``' order. None without raters. Pure."""
    found = []
    for turn_id in turn_ids:
        for factor_id, value in gold.get(turn_id, {}).items():
            rated = [rater.get(turn_id, {}).get(factor_id) for rater in raters]
            bands = {band_of(v) for v in rated if v is not None}
            if raters and None not in rated and len(bands) == 1 and bands != {band_of(value)}:
                found.append((turn_id, factor_id))
    return found


def raters_agree_elsewhere(gold: Labels, raters: Sequence[Labels], turn_ids: Sequence[str]) -> int:
    """How many labelled factors every rater names in one and the same band, other than the label's. Pure."""
    return len(labels_raters_put_elsewhere(gold, raters, turn_ids))


def render_review(
    split: str,
    turns: Mapping[str, CorpusTurn],
    reader: Labels,
    raters: Mapping[str, Labels],
    found: Sequence[Label],
) -> str:
    """The owner's review sheet of ``found`` labels: per label its turn (id, question, answer), the label's value and
    band, each rater's and the reader's, and where the label is kept. It proposes nothing and changes nothing: whether
    a label is wrong is the owner's call. Pure."""

    def read(labels: Labels, turn_id: str, factor_id: str) -> str:
        value = labels.get(turn_id, {}).get(factor_id)
        return "not named" if value is None else f"{value:g} ({band_of(value)})"

    lines = [
        f"# Label review: {split}",
        "",
        f"{len(found)} labels of `eval/corpus/{split}.jsonl` that every independent rater "
        f"({', '.join(raters) or 'none'}) put in one and the same other band. Raters read only the labelling rules, "
        "the catalog and the answer (`eval/audit/view.txt`); they never saw a label or a reading. Nothing here is "
        "changed: a label is corrected, if at all, by its owner, in the corpus file, with the reason in "
        "`eval/HISTORY.md`, and the split's scores before and after are kept apart.",
        "",
    ]
    for number, (turn_id, factor_id) in enumerate(found, 1):
        turn = turns[turn_id]
        label = turn.expected[factor_id]
        lines += [
            f"## {number}. `{turn_id}`: `{factor_id}`",
            "",
            f"- Question: {json.dumps(turn.question, ensure_ascii=False)}",
            f"- Answer: {json.dumps(turn.answer, ensure_ascii=False)}",
            f"- Label: {label:g} ({band_of(label)})",
            *(f"- Rater {name}: {read(labels, turn_id, factor_id)}" for name, labels in raters.items()),
            f"- The reader in Gemini's seat: {read(reader, turn_id, factor_id)}",
            "",
        ]
    return "\n".join(lines)


def render_screening_view(items: Sequence[CorpusTurn], rules: str) -> str:
    """What a rater of the screen's set reads: the task, the definitions, then each item's id, question and answer.
    Pure."""
    lines = [
        "# Evidence audit: is each interview answer evidence about the speaker's own organisation today?",
        "",
        "Each item below is one answer a person gave in an interview about their company's AI readiness, with the "
        "interviewer's question before it (it may be empty). For each item, decide as a careful listener would "
        "whether it is evidence, by the definitions below; when it is not, say which kind it is.",
        "",
        "## Definitions",
        rules.strip(),
        "",
        "## Items",
    ]
    return _with_items(lines, items)


def screening_figures(
    kinds: Mapping[str, str], raters: Sequence[Mapping[str, bool]], writes: Mapping[str, set[str]]
) -> dict[str, object]:
    """Per kind of turn, how many there are and how many each rater takes as evidence; per answer set, the turns
    that must change nothing it writes and how many of those each rater takes as evidence. Pure."""
    per_kind: dict[str, dict[str, object]] = {}
    for kind in sorted(set(kinds.values())):
        ids = [turn_id for turn_id, k in kinds.items() if k == kind]
        per_kind[kind] = {"turns": len(ids), "evidence": [sum(bool(r.get(i)) for i in ids) for r in raters]}
    written = {}
    for name, turn_ids in writes.items():
        must = [turn_id for turn_id in turn_ids if kinds.get(turn_id) != LOOK_ALIKE]
        called = [sum(bool(rater.get(turn_id)) for turn_id in must) for rater in raters]
        written[name] = {"written": len(must), "raters_call_evidence": called}
    return {"per_kind": per_kind, "written": written}


def rater_folders(audit: Path) -> list[Path]:
    """The raters' folders of an audit, by name: its subfolders that hold label files (``*.jsonl``), not another
    audit's folder kept beneath it (``screening/`` under ``eval/audit/``)."""
    return sorted(folder for folder in audit.iterdir() if folder.is_dir() and any(folder.glob("*.jsonl")))


def rated(folder: Path, key: Mapping[str, str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """One rater's records (every ``*.jsonl`` of ``folder``, in order), each with the turn id its item stands for; a
    line naming an unknown item fails, saying where."""
    for path in sorted(folder.glob("*.jsonl")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            record = json.loads(line)
            if record["item"] not in key:
                raise SystemExit(f"{path}:{number}: no such item {record['item']!r}")
            yield key[record["item"]], record


def read_rater(folder: Path, key: Mapping[str, str]) -> dict[str, dict[str, float]]:
    """One rater's labels by turn id (``rated``)."""
    return {turn_id: {x["factor_id"]: float(x["value"]) for x in r["labels"]} for turn_id, r in rated(folder, key)}


def second_reading(request: SeatRequest) -> SeatRequest:
    """The request ``GeminiExtractor`` posts for a turn's second reading (``FJ_GEMINI_READINGS=2``): the first
    reading's, sampled at the settings' second temperature with their seed. Pure."""
    settings = GeminiSettings()
    body = copy.deepcopy(request.body)
    body["generationConfig"] |= {"temperature": settings.second_temperature, "seed": settings.second_seed}
    return SeatRequest.of(body)


def reader_labels(
    split: str, answers: Mapping[str, CorpusTurn], answers_file: Path | None = None, second: bool = False
) -> dict[str, dict[str, float]]:
    """The committed seat answers' own readings (``answers_file``, default the split's answers; of the second
    readings' requests with ``second``) of ``answers``' turns (``readings_of``)."""
    requests = read_requests(REQUESTS / f"{split}.jsonl")
    if second:
        requests = [second_reading(request) for request in requests if request.system_instruction != EVIDENCE_RULES]
    return readings_of(requests, read_answers(answers_file or ANSWERS / f"{split}.jsonl"), answers)


def readings_of(
    requests: Sequence[SeatRequest], given: Mapping[str, Answer], turns: Mapping[str, CorpusTurn]
) -> dict[str, dict[str, float]]:
    """What the reader's answers in ``given`` read ``turns`` as, found by their answer text: each factor with its
    value, none for a turn the model set aside. Only the reader's requests count (an evidence check's answer, which
    reads no factor, never stands for a reading); requests without an answer are left out. Pure."""
    by_text = {turn.answer: turn.id for turn in turns.values()}
    readings: dict[str, dict[str, float]] = {}
    for request in requests:
        if request.system_instruction == EVIDENCE_RULES:
            continue
        head, cut, quoted = request.turn_text.rpartition(TURN_LINE)
        turn_id = by_text.get(json.loads(quoted)) if cut else None
        if turn_id is None or request.key not in given:
            continue
        output = json.loads(given[request.key].text)
        evidence = output.get("turn", TurnKind.evidence.value) == TurnKind.evidence.value
        updates = output.get("updates", []) if evidence else []
        readings[turn_id] = {u["factor_id"]: float(u["value"]) for u in updates if isinstance(u, dict)}
    return readings


def _write_view(folder: Path, view: str, items: Sequence[CorpusTurn]) -> int:
    """The raters' ``view`` and its key (opaque item id -> turn id) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "view.txt").write_text(view, encoding="utf-8")
    key = {item_id(turn.id): turn.id for turn in items}
    (folder / "key.json").write_text(json.dumps(key, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{len(items)} items: {(folder / 'view.txt').relative_to(REPO)} (the raters' view) and its key.json")
    return 0


def screening_view_command() -> int:
    turns = load_screening(CORPUS / f"{HELD_OUT}.jsonl")
    items = list(turns)
    random.Random(SEED).shuffle(items)
    return _write_view(SCREENING_AUDIT, render_screening_view(items, SCREENING_RULES), items)


def screening_score_command() -> int:
    key = json.loads((SCREENING_AUDIT / "key.json").read_text(encoding="utf-8"))
    raters = [
        {turn_id: bool(record["evidence"]) for turn_id, record in rated(folder, key)}
        for folder in rater_folders(SCREENING_AUDIT)
    ]
    turns = {turn.id: turn for turn in load_screening(CORPUS / f"{HELD_OUT}.jsonl")}
    sets = {"v9 (committed)": ANSWERS / f"{HELD_OUT}.jsonl"}
    sets |= {f"second_reading/{p.name}": p for p in sorted((ANSWERS / "second_reading").glob(f"{HELD_OUT}*.jsonl"))}
    writes = {}
    for name, path in sets.items():
        readings = reader_labels(HELD_OUT, turns, path, second="second_reading" in name)
        writes[name] = {turn_id for turn_id, read in readings.items() if read}
    figures = screening_figures({t.id: t.kind for t in turns.values()}, raters, writes)
    print(json.dumps(figures, indent=1))
    return 0


def view_command() -> int:
    catalog = load_catalog()
    splits = {split: load_corpus(CORPUS / f"{split}.jsonl", catalog) for split in SPLITS}
    items = audit_items(splits["test"], splits["validation"])
    rules = (CORPUS / "README.md").read_text(encoding="utf-8").split("## How the turns are labelled", 1)[1]
    return _write_view(AUDIT, render_view(items, rules, catalog_text(catalog)), items)


def audited(splits: Sequence[str]) -> tuple[dict[str, dict[str, dict[str, float]]], dict[str, dict[str, CorpusTurn]]]:
    """The audit as rated: every rater's labels by rater name, and per split its turns the view holds, by id."""
    key = json.loads((AUDIT / "key.json").read_text(encoding="utf-8"))
    raters = {folder.name: read_rater(folder, key) for folder in rater_folders(AUDIT)}
    catalog = load_catalog()
    turns = {
        split: {t.id: t for t in load_corpus(CORPUS / f"{split}.jsonl", catalog) if item_id(t.id) in key}
        for split in splits
    }
    return raters, turns


def score_command() -> int:
    raters, audited_turns = audited(SPLITS)
    for split, turns in audited_turns.items():
        ids = sorted(turns)
        gold = {turn_id: turn.expected for turn_id, turn in turns.items()}
        reader = reader_labels(split, turns)
        print(f"{split}: {len(ids)} turns")
        rows = [(f"rater {name} vs the labels", gold, labels) for name, labels in raters.items()]
        rows.append(("the reader vs the labels", gold, reader))
        rows += [(f"the reader vs rater {name}", labels, reader) for name, labels in raters.items()]
        names = list(raters)
        rows += [(f"rater {b} vs rater {a}", raters[a], raters[b]) for i, a in enumerate(names) for b in names[i + 1 :]]
        for name, reference, other in rows:
            figures = agreement(reference, other, ids)
            print(f"  {name}: {figures['right']} of {figures['expected']} in the band ({figures['named']} named)")
        print(f"  where the reader's band differs from the label's: {sides(gold, reader, list(raters.values()), ids)}")
        elsewhere = raters_agree_elsewhere(gold, list(raters.values()), ids)
        print(f"  labels every rater puts in one other band: {elsewhere}")
    return 0


def review_command(split: str, out: Path) -> int:
    """Writes ``split``'s review sheet (``render_review``) to ``out``; prints only how many labels it holds, so that
    whoever runs it sees no held-out turn unless they open the file."""
    raters, audited_turns = audited([split])
    turns = audited_turns[split]
    gold = {turn_id: turn.expected for turn_id, turn in turns.items()}
    found = labels_raters_put_elsewhere(gold, list(raters.values()), sorted(turns))
    out.write_text(render_review(split, turns, reader_labels(split, turns), raters, found), encoding="utf-8")
    print(f"{len(found)} labels of {split} every rater puts in one other band: {out}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="label_audit", description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("view", "score", "review"))
    parser.add_argument("--screening", action="store_true", help="audit the screen's held-out set instead")
    parser.add_argument("--split", choices=SPLITS, default="test", help="review: the split whose labels to list")
    parser.add_argument("--out", type=Path, help="review: the sheet's file (required for review)")
    args = parser.parse_args(argv)
    if args.command == "review":
        if args.screening or args.out is None:
            parser.error("review takes --out FILE and no --screening (the screen's kinds were reproduced)")
        return review_command(args.split, args.out)
    if args.screening:
        return screening_view_command() if args.command == "view" else screening_score_command()
    return view_command() if args.command == "view" else score_command()


if __name__ == "__main__":
    sys.exit(main())
