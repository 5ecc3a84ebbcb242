"""The label audit (``label_audit``): the raters' view shows no split, label or reading; agreement is scored as the
eval scores bands."""

from __future__ import annotations

import json

import pytest

from factor_journal_tools.corpus import CorpusTurn
from factor_journal_tools.label_audit import (
    SCREENING_RULES,
    agreement,
    audit_items,
    item_id,
    labels_raters_put_elsewhere,
    main,
    rated,
    rater_folders,
    raters_agree_elsewhere,
    read_rater,
    readings_of,
    render_review,
    render_screening_view,
    render_view,
    screening_figures,
    second_reading,
    sides,
)


def turn(turn_id: str, answer: str, expected: dict[str, float] | None = None, kind: str = "factor") -> CorpusTurn:
    return CorpusTurn(turn_id, "How is your data?", answer, expected or {}, kind)


def test_the_items_are_every_test_factor_turn_and_as_many_validation_ones_shuffled_the_same_each_time():
    test = [turn(f"test-{n}", f"t{n}", {"data_quality": 20}) for n in range(5)]
    test.append(turn("test-x", "hi", kind="off_topic"))
    validation = [turn(f"validation-{n}", f"v{n}", {"data_quality": 80}) for n in range(20)]
    items = audit_items(test, validation)
    assert sorted(t.id for t in items if t.id.startswith("test")) == [f"test-{n}" for n in range(5)]
    assert sum(t.id.startswith("validation") for t in items) == 5
    assert [t.id for t in items] == [t.id for t in audit_items(test, validation)]  # seeded
    assert [t.id for t in items][:5] != [f"test-{n}" for n in range(5)]  # shuffled together


def test_the_view_gives_each_item_an_opaque_id_and_never_its_split_labels_or_tags():
    item = CorpusTurn(
        "test-0042", "Where does data live?", 'In "the" cloud.', {"data_infrastructure": 85}, "factor", ("multi",)
    )
    view = render_view([item], "- rules here", "Catalog:\n- data_infrastructure")
    assert f"ITEM 1 of 1 {item_id('test-0042')}" in view and len(item_id("test-0042")) == 12
    assert 'Answer: "In \\"the\\" cloud."' in view and "- rules here" in view and "Catalog:" in view
    assert "test-0042" not in view and "85" not in view and "multi" not in view and "test" not in view.lower()


def test_agreement_counts_named_factors_and_those_in_the_same_band():
    gold = {"t1": {"data_quality": 20, "data_governance": 50}, "t2": {"ml_expertise": 80}}
    other = {"t1": {"data_quality": 35, "data_governance": 75, "cloud_adoption": 10}}
    assert agreement(gold, other, ["t1", "t2"]) == {"expected": 3, "named": 2, "right": 1}


def test_sides_says_whose_band_each_rater_gives_where_the_reader_and_the_label_differ():
    gold = {"t1": {"data_quality": 50, "data_governance": 20, "ml_expertise": 80}}
    reader = {"t1": {"data_quality": 20, "data_governance": 20, "ml_expertise": 50}}
    first = {"t1": {"data_quality": 25, "ml_expertise": 85}}
    second = {"t1": {"data_quality": 90}}
    assert sides(gold, reader, [first, second], ["t1"]) == {
        "reader_in_another_band": 2,
        "rater_gives_reader_band": 1,
        "rater_gives_third_band": 1,
        "rater_gives_label_band": 1,
        "rater_names_nothing": 1,
    }


def test_labels_every_rater_puts_in_one_other_band_are_counted():
    gold = {"t1": {"data_quality": 50, "data_governance": 20, "ml_expertise": 80, "cloud_adoption": 50}}
    first = {"t1": {"data_quality": 20, "data_governance": 60, "ml_expertise": 50, "cloud_adoption": 20}}
    second = {"t1": {"data_quality": 30, "data_governance": 25, "ml_expertise": 55}}
    assert raters_agree_elsewhere(gold, [first, second], ["t1"]) == 2  # data_quality low, ml_expertise mid
    assert raters_agree_elsewhere(gold, [], ["t1"]) == 0
    assert labels_raters_put_elsewhere(gold, [first, second], ["t1"]) == [
        ("t1", "data_quality"),
        ("t1", "ml_expertise"),
    ]


def test_the_review_sheet_lists_each_label_with_its_turn_and_every_rating_and_proposes_nothing():
    turns = {"test-0001": turn("test-0001", 'We have "no" catalog.', {"data_quality": 50, "data_governance": 20})}
    raters = {"pass1": {"test-0001": {"data_quality": 20}}, "pass2": {"test-0001": {"data_quality": 30}}}
    reader = {"test-0001": {"data_governance": 25}}
    sheet = render_review("test", turns, reader, raters, [("test-0001", "data_quality")])
    assert sheet.startswith("# Label review: test") and "1 labels of `eval/corpus/test.jsonl`" in sheet
    assert "## 1. `test-0001`: `data_quality`" in sheet and 'Answer: "We have \\"no\\" catalog."' in sheet
    assert "- Label: 50 (mid)" in sheet and "- Rater pass1: 20 (low)" in sheet and "- Rater pass2: 30 (low)" in sheet
    assert "- The reader in Gemini's seat: not named" in sheet
    assert "data_governance`" not in sheet  # only the labels found are listed
    assert render_review("test", turns, reader, {}, []).count("## ") == 0


def test_review_needs_a_file_so_nothing_held_out_is_printed(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["review", "--split", "test"])
    assert exit_.value.code == 2
    assert "--out" in capsys.readouterr().err


def test_the_screening_view_gives_the_definitions_and_items_never_their_kind():
    answer = "My cousin's firm uses ChatGPT."
    item = CorpusTurn("screening_heldout-0007", "Any AI plans?", answer, {}, "other_organisation")
    view = render_screening_view([item], SCREENING_RULES)
    assert "other_organisation: about another organisation" in view and item_id(item.id) in view
    assert "My cousin's firm uses ChatGPT." in view and "screening_heldout-0007" not in view
    assert view.count("other_organisation") == SCREENING_RULES.count("other_organisation")  # the kind only as defined


def test_screening_figures_count_evidence_per_kind_and_the_raters_verdict_on_each_sets_writes():
    kinds = {"a": "hypothetical", "b": "hypothetical", "c": "evidence", "d": "pause"}
    raters = [{"a": True, "c": True}, {"c": True}]
    figures = screening_figures(kinds, raters, {"one": {"a", "c"}, "two": {"b", "d"}})
    assert figures["per_kind"]["hypothetical"] == {"turns": 2, "evidence": [1, 0]}
    assert figures["per_kind"]["evidence"] == {"turns": 1, "evidence": [1, 1]}
    assert figures["written"] == {
        "one": {"written": 1, "raters_call_evidence": [1, 0]},  # the look-alike is not a must-change-nothing write
        "two": {"written": 2, "raters_call_evidence": [0, 0]},
    }


def test_a_second_readings_request_is_the_one_the_extractor_posts(catalog):
    """``second_reading`` rebuilds the request ``GeminiExtractor`` sends for the second reading from the first's."""
    from factor_journal.extraction.base import ExtractionRequest
    from factor_journal.extraction.gemini import GeminiExtractor, GeminiSettings
    from factor_journal_tools.seat import SeatAnswers
    from factor_journal_tools.vertex_stand_in import VertexStandIn

    seat = SeatAnswers({})
    with VertexStandIn(respond=seat.respond) as vertex:
        settings = GeminiSettings(project="p", base_url=vertex.url, max_attempts=1, readings=2, evidence_check=False)
        try:
            request = ExtractionRequest(user_id="u", session_id="s", turn_id="t", text="Spreadsheets.")
            GeminiExtractor(settings, catalog=catalog).extract(request)
        except Exception:
            pass  # no answers in the seat: both requests are recorded all the same
    first, second = sorted(seat.seen.values(), key=lambda r: "seed" in r.body["generationConfig"])
    assert second_reading(first).key == second.key and second_reading(first).key != first.key


def test_a_turns_reading_is_the_readers_answer_never_its_evidence_checks():
    """With the evidence check on, a turn sends two requests; only the reader's answer says what the turn was read
    as, whichever comes first in the file."""
    from factor_journal.extraction.prompts import EVIDENCE_RULES, TURN_LINE
    from factor_journal_tools.seat import Answer, SeatRequest

    def request(instruction: str, answer: str) -> SeatRequest:
        contents = [{"role": "user", "parts": [{"text": f'Recent exchanges:\n{TURN_LINE}"{answer}"'}]}]
        return SeatRequest.of({"systemInstruction": {"parts": [{"text": instruction}]}, "contents": contents})

    reader, check = request("reader rules", "Spreadsheets."), request(EVIDENCE_RULES, "Spreadsheets.")
    given = {
        reader.key: Answer(reader.key, json.dumps({"updates": [{"factor_id": "data_quality", "value": 20}]}), "m"),
        check.key: Answer(check.key, '{"turn": "evidence"}', "m"),
    }
    turns = {"t1": turn("t1", "Spreadsheets.")}
    assert readings_of([reader, check], given, turns) == {"t1": {"data_quality": 20.0}}
    assert readings_of([check, reader], given, turns) == {"t1": {"data_quality": 20.0}}
    aside = {**given, reader.key: Answer(reader.key, '{"turn": "hypothetical", "updates": []}', "m")}
    assert readings_of([reader, check], aside, turns) == {"t1": {}}


def test_the_raters_are_the_folders_holding_label_files_not_another_audit_beneath(tmp_path):
    for name in ("pass1", "pass2", "screening/pass1"):
        (tmp_path / name).mkdir(parents=True)
        (tmp_path / name / "part1.jsonl").write_text("")
    (tmp_path / "empty").mkdir()
    assert [folder.name for folder in rater_folders(tmp_path)] == ["pass1", "pass2"]
    assert [folder.name for folder in rater_folders(tmp_path / "screening")] == ["pass1"]


def test_a_raters_records_stand_for_their_turns_and_an_unknown_item_fails_saying_where(tmp_path):
    key = {"a1": "test-0001", "b2": "validation-0002"}
    (tmp_path / "part1.jsonl").write_text(
        '{"item": "a1", "labels": [{"factor_id": "data_quality", "value": 20}], "evidence": true}\n\n'
        '{"item": "b2", "labels": [], "evidence": false}\n'
    )
    assert read_rater(tmp_path, key) == {"test-0001": {"data_quality": 20.0}, "validation-0002": {}}
    assert [(turn_id, record["evidence"]) for turn_id, record in rated(tmp_path, key)] == [
        ("test-0001", True),
        ("validation-0002", False),
    ]
    (tmp_path / "part2.jsonl").write_text('{"item": "zz", "labels": []}\n')
    with pytest.raises(SystemExit, match=r"part2.jsonl:1: no such item 'zz'"):
        read_rater(tmp_path, key)
