"""The screen check counts, per kind, what the pipeline's own reading refuses and what it would still write."""

from __future__ import annotations

import json

from factor_journal import runtime
from factor_journal_tools.screen_check import check, main, table


def _write(path, rows):
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n", encoding="utf-8")


def test_a_refused_turn_writes_nothing_and_a_plain_answer_writes(tmp_path):
    corpus = tmp_path / "set.jsonl"
    _write(
        corpus,
        [
            {
                "id": "p1",
                "question": "How clean is your data?",
                "answer": "Can we take a break? I need a coffee.",
                "kind": "pause",
            },
            {
                "id": "o1",
                "question": "How clean is your data?",
                "answer": "My cousin runs a bakery and her tills are all over the place.",
                "kind": "other_organisation",
            },
            {
                "id": "e1",
                "question": "How much do you trust the numbers in your main systems?",
                "answer": "The numbers never match between systems; finance reconciles them by hand for days.",
                "kind": "evidence",
            },
        ],
    )
    figures = check(corpus, runtime.make_extractor("semantic"))
    assert figures["pause"] == {"turns": 1, "refused": 1, "updated": 0}
    assert figures["other_organisation"] == {"turns": 1, "refused": 1, "updated": 0}
    assert figures["evidence"] == {"turns": 1, "refused": 0, "updated": 1}
    assert "Must change nothing: 0 of 2 would write an update." in table("set", figures)


def test_the_figures_are_written_where_asked(tmp_path, capsys):
    corpus, results = tmp_path / "set.jsonl", tmp_path / "results.json"
    _write(corpus, [{"id": "q1", "question": "", "answer": "What do you mean by pipeline?", "kind": "question_back"}])
    assert main([str(corpus), "--extractor", "offline", "--results", str(results)]) == 0
    written = json.loads(results.read_text())
    assert written["extractor"] == "offline"
    assert written["sets"]["set.jsonl"]["question_back"] == {"turns": 1, "refused": 1, "updated": 0}
    assert "set.jsonl · offline" in capsys.readouterr().out
