"""The labelled corpus loads and is valid against the catalog; invalid records are refused by name."""

from __future__ import annotations

import json

import pytest

from factor_journal_tools.corpus import CORPUS, CorpusError, available_splits, load_corpus, load_screening


@pytest.mark.parametrize("split", ["dev", "validation", "test"])
def test_each_split_loads_and_is_valid_against_the_catalog(split, catalog):
    if split not in available_splits():
        pytest.skip(f"{split} split not written yet")
    turns = load_corpus(CORPUS / f"{split}.jsonl", catalog)
    assert len(turns) >= 100
    kinds = {turn.kind for turn in turns}
    assert kinds == {"factor", "off_topic", "hostile"}
    assert all(not turn.expected for turn in turns if turn.kind != "factor")
    factors = {fid for turn in turns for fid in turn.expected}
    assert len(factors) >= 20 and all(not catalog.factor(fid).is_composite for fid in factors)


def test_the_splits_do_not_share_turns(catalog):
    splits = available_splits()
    if len(splits) < 2:
        pytest.skip("needs two splits")
    answers = {split: {t.answer for t in load_corpus(CORPUS / f"{split}.jsonl", catalog)} for split in splits}
    for i, first in enumerate(splits):
        for second in splits[i + 1 :]:
            assert not answers[first] & answers[second], (first, second)


def test_invalid_records_are_refused_naming_the_line(tmp_path, catalog):
    path = tmp_path / "bad.jsonl"
    records = [
        {
            "id": "a",
            "question": "q",
            "answer": "fine",
            "expected": [{"factor_id": "no_such", "value": 20}],
            "kind": "factor",
        },
        {
            "id": "b",
            "question": "q",
            "answer": "hi",
            "expected": [{"factor_id": "data_quality", "value": 20}],
            "kind": "off_topic",
        },
        {
            "id": "c",
            "question": "q",
            "answer": "x",
            "expected": [{"factor_id": "ai_readiness_score", "value": 20}],
            "kind": "factor",
        },
        {
            "id": "d",
            "question": "q",
            "answer": "x",
            "expected": [{"factor_id": "data_quality", "value": 140}],
            "kind": "factor",
        },
    ]
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n{not json\n")
    with pytest.raises(CorpusError) as raised:
        load_corpus(path, catalog)
    message = str(raised.value)
    for expected in (
        "bad.jsonl:1",
        "'no_such'",
        "bad.jsonl:2",
        "must expect no update",
        "bad.jsonl:3",
        "off its scale",
        "bad.jsonl:5",
    ):
        assert expected in message


def test_the_labelling_guide_states_every_catalog_boundary_in_the_catalogs_words(catalog):
    guide = " ".join((CORPUS / "README.md").read_text(encoding="utf-8").split())
    for factor in catalog.factors:
        for neighbour, text in factor.boundaries.items():
            assert f"{' '.join(text.split())} is `{neighbour}`" in guide, (factor.id, neighbour)


def test_a_screening_set_reads_as_turns_that_expect_nothing_keeping_their_kind(tmp_path):
    path = tmp_path / "screening.jsonl"
    rows = [
        {"id": "s-1", "question": "Q?", "answer": "My cousin's firm has a CRM.", "kind": "other_organisation"},
        {"id": "s-2", "answer": "Our own CRM is clean.", "kind": "evidence", "note": "look-alike"},
    ]
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n", encoding="utf-8")
    turns = load_screening(path)
    assert [(t.id, t.kind, t.tags, t.expected, t.question) for t in turns] == [
        ("s-1", "other_organisation", ("other_organisation",), {}, "Q?"),
        ("s-2", "evidence", ("evidence",), {}, ""),
    ]


def test_a_screening_set_with_an_unknown_kind_or_a_duplicate_id_is_refused_naming_the_lines(tmp_path):
    path = tmp_path / "screening.jsonl"
    rows = [{"id": "s-1", "answer": "x", "kind": "gossip"}, {"id": "s-1", "answer": "y", "kind": "pause"}]
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"screening.jsonl:1: kind 'gossip'.*screening.jsonl:2: duplicate id"):
        load_screening(path)


def test_the_committed_screening_sets_load():
    for name in ("screening", "screening_heldout"):
        turns = load_screening(CORPUS / f"{name}.jsonl")
        assert turns and all(not t.expected for t in turns)
