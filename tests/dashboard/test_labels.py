"""Pure display helpers and chart builders: human labels, day-granular time axes, whole-number counts."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from dashboard import charts, labels
from factor_journal.catalog import load_catalog
from factor_journal.models import CategoryProgress, EntryKind, JournalEntry, Source
from factor_journal.organisation import OrgDay
from factor_journal.transitions import READING_RESTORED

CATALOG = load_catalog()
NAMES = labels.factor_names(CATALOG)


def test_factor_ids_in_rationales_read_as_names_and_nothing_else_changes():
    text = "Recomputed from data_governance, data_infrastructure after data_quality changed; see my_notes"
    assert labels.names_in(text, NAMES) == (
        "Recomputed from Data governance, Data infrastructure after Data quality changed; see my_notes"
    )
    assert labels.names_in("no ids here: data quality", NAMES) == "no ids here: data quality"


def test_a_rationale_speaks_to_its_person_in_plain_words_and_keeps_their_words():
    names = {"ml_expertise": "Machine learning expertise"}
    machine = (
        'User said "I don\'t know, ask Sam (P=0.99)" (answering "Who builds models?"): reads as low (P=0.72). '
        "(combined with 2 earlier observations: 39.4 → 30.48)"
    )
    plain = labels.in_plain_words(machine, names)
    assert plain == (
        'You said "I don\'t know, ask Sam (P=0.99)" (answering "Who builds models?"): read as low, fairly sure. '
        "(weighed with 2 earlier answers)"
    )
    assert labels.in_plain_words("User corrected ml_expertise: reads as high (P=0.91)", names) == (
        "You corrected Machine learning expertise: read as high, quite sure"
    )
    assert labels.in_plain_words("reads as mid (P=0.41) (combined with 1 earlier observation: 5 → -2.5)", {}) == (
        "reads as mid (P=0.41) (weighed with 1 earlier answer)"  # only the reader's own ": reads as" is reworded
    )
    assert labels.in_plain_words("Username said nothing", {}) == "Username said nothing"
    assert labels.in_plain_words("User confirmed what was understood from their answer", {}) == (
        "You confirmed what was understood from your answer"
    )
    assert labels.in_plain_words("User kept their value", {}) == "You kept your value"
    quoted = 'User said "their answer was late" (answering "Why?")'
    assert labels.in_plain_words(quoted, {}) == 'You said "their answer was late" (answering "Why?")'  # their words
    assert labels.status_label("user_provided") == "yours"
    assert labels.status_label("user_provided", read_only=True) == "given by them"


def test_an_entrys_kind_speaks_to_its_person_or_of_them_to_a_reader():
    assert labels.kind_label("confirmed", read_only=False) == "confirmed by you"
    assert labels.kind_label("confirmed", read_only=True) == "confirmed by them"
    assert labels.kind_label("conflict", read_only=True) == "a disagreeing reading, held for them"
    assert labels.kind_label("something_new", read_only=True) == "something_new"
    assert labels.kind_label("restored", read_only=False) == "restored by you"  # "doesn't apply" undone
    assert labels.kind_label("restored", read_only=True) == "restored by them"
    assert labels.in_plain_words(READING_RESTORED, {}) == (
        "You restored what was understood from your answer, after it was withdrawn"
    )


def test_the_say_back_buttons_of_two_readings_under_one_answer_each_name_their_factor():
    quality, expertise = CATALOG.factor("data_quality").name, CATALOG.factor("ml_expertise").name
    agree = [labels.confirm_label(quality, "low"), labels.confirm_label(expertise, "high")]
    disagree = [labels.correct_label(quality), labels.correct_label(expertise)]
    assert agree == ["That's right: Data quality is low", "That's right: Machine learning expertise is high"]
    assert disagree == ["Not quite: Data quality", "Not quite: Machine learning expertise"]
    assert len(set(agree + disagree)) == 4  # no two buttons share a name


def test_controls_repeated_once_per_factor_each_name_their_factor():
    quality, expertise = CATALOG.factor("data_quality").name, CATALOG.factor("ml_expertise").name
    for control in labels.FACTOR_CONTROLS:
        named = labels.factor_control(control, quality)
        assert quality in named and named != labels.factor_control(control, expertise)
    assert labels.factor_control("confirm", quality) == "Confirm Data quality"
    assert labels.factor_control("value", quality) == "Correct value for Data quality"
    assert labels.factor_control("save", quality) == "Save correction to Data quality"
    assert labels.factor_control("holds", quality) == "Data quality still holds"
    assert labels.factor_control("talk", quality) == "Talk about Data quality"
    every = [labels.factor_control(control, quality) for control in labels.FACTOR_CONTROLS]
    assert len(set(every)) == len(every)  # no two controls of one factor share a name


def test_the_category_chart_reads_as_text_row_by_row_in_its_order():
    readiness = CategoryProgress(
        name="Data readiness", completeness=0.6, avg_confidence=0.725, factor_count=3, total_factors=5
    )
    people = CategoryProgress(name="People", completeness=0.0, avg_confidence=0.0, factor_count=0, total_factors=4)
    assert labels.category_rows([readiness, people]) == [
        {"Category": "Data readiness", "Mapped": "3 of 5 (60%)", "Confidence": "72%"},
        {"Category": "People", "Mapped": "0 of 4 (0%)", "Confidence": "0%"},
    ]


def test_tiers_statuses_and_missing_dates_have_human_labels():
    assert labels.tier_name(CATALOG, "low_risk") == "Low-risk pilots"
    assert labels.tier_name(CATALOG, "exploratory") == "Exploratory"
    assert labels.tier_name(CATALOG, "some_new_tier") == "some new tier"
    assert labels.status_label("user_provided") == "yours"
    assert labels.day(None) == "not yet" and labels.day(date(2026, 11, 5)) == "05 Nov 2026"
    now = datetime(2026, 11, 22, tzinfo=UTC)
    assert labels.ago(None, now) == "never active yet"
    assert labels.ago(now - timedelta(hours=3), now) == "today"
    assert labels.ago(now - timedelta(days=1, hours=2), now) == "1 day ago"
    assert labels.ago(now - timedelta(days=12), now) == "12 days ago"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0, "low"),
        (20, "low"),
        (36, "low"),
        (39.99, "low"),
        (40, "mid"),
        (66, "mid"),
        (69.9, "mid"),
        (70, "high"),
        (100, "high"),
    ],
)
def test_band_is_the_band_the_extractors_and_the_eval_use(value, expected):
    assert labels.band(CATALOG, "data_quality", value) == expected


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (20, "20"),
        (39.96, "39.9"),
        (39.99999999, "39.9"),
        (40, "40"),
        (69.95, "69.9"),
        (70.0000001, "70"),
        (55.25, "55.2"),
    ],
)
def test_a_value_is_shown_without_reading_across_a_band_edge(value, shown):
    assert labels.amount(value) == shown
    assert labels.band(CATALOG, "data_quality", float(shown)) == labels.band(CATALOG, "data_quality", value)


def test_every_turn_status_has_a_plain_message_and_failures_say_when_they_are_retried():
    for status in (
        "processing",
        "processed",
        "no_update",
        "failed",
        "needs_attention",
        "invalid",
        "rate_limited",
        None,
    ):
        assert labels.turn_status_message(status)
    assert "retried automatically" in labels.turn_status_message("failed")
    at = datetime(2026, 11, 22, 14, 5, tzinfo=UTC)
    assert "14:05 UTC" in labels.turn_status_message("failed", at)
    assert "team will look" in labels.turn_status_message("needs_attention")
    assert "will not change" in labels.turn_status_message("invalid")
    assert "not analysed" in labels.turn_status_message("rate_limited")
    assert labels.turn_status_message("something_new") == labels.turn_status_message(None)


def _entry(observed: datetime, value: float, recorded: datetime | None = None) -> JournalEntry:
    return JournalEntry(
        entry_id=f"e{observed.timestamp()}-{value}",
        user_id="u",
        factor_id="data_quality",
        kind=EntryKind.inferred,
        source=Source.llm,
        previous_value=None,
        new_value=value,
        change_rationale="Recomputed from data_governance",
        confidence=0.7,
        observed_at=observed,
        recorded_at=recorded or observed,
        applied=True,
        effective=True,
        value_after=value,
        confidence_after=0.7,
        status_after="unconfirmed",
    )


def test_the_timeline_has_one_point_per_day_of_observation_on_a_day_axis():
    day1 = datetime(2026, 11, 3, 9, tzinfo=UTC)
    entries = [_entry(day1, 20), _entry(day1 + timedelta(hours=5), 30), _entry(day1 + timedelta(days=4), 45)]
    figure = charts.factor_timeline(entries, describe=lambda text: labels.names_in(text, NAMES))
    value = figure.data[0]
    assert list(value.x) == [date(2026, 11, 3), date(2026, 11, 7)] and list(value.y) == [30, 45]  # the day's last state
    assert "Data governance" in value.text[0]
    axis = figure.layout.xaxis
    assert axis.type == "date" and axis.dtick == charts.DAY_MS and "%H" not in axis.tickformat


def test_day_axes_widen_their_step_with_the_span_and_never_tick_below_a_day():
    assert charts.day_axis([date(2026, 1, 1), date(2026, 1, 10)])["dtick"] == charts.DAY_MS
    assert charts.day_axis([date(2026, 1, 1), date(2026, 3, 1)])["dtick"] == 7 * charts.DAY_MS
    assert charts.day_axis([date(2025, 1, 1), date(2026, 3, 1)])["dtick"] == "M1"
    single = charts.day_axis([date(2026, 1, 1)])
    assert single["dtick"] == charts.DAY_MS and single["range"][0] < single["range"][1]


def test_day_axes_draw_the_label_at_their_edge_instead_of_hiding_it():
    """Plotly hides a tick label that runs past the chart (on a phone, a week's slanted labels lost the last day);
    a day axis lets it be drawn and grows the margin for it (the browser test checks it is drawn whole)."""
    for days in ([date(2026, 1, 1), date(2026, 1, 8)], [date(2025, 1, 1), date(2026, 3, 1)]):
        axis = charts.progress_over_time([(day, 0.3, 0.5) for day in days]).layout.xaxis
        assert axis.ticklabeloverflow == "allow" and axis.automargin is True


def test_count_axes_only_have_whole_numbers():
    for largest in (0, 1, 2, 3, 7, 40, 2000):
        axis = charts.count_axis(largest)
        assert isinstance(axis["dtick"], int) and axis["dtick"] >= 1 and axis["tickformat"] == ",d"
    figure = charts.tier_distribution({"Exploratory": 2, "Low-risk pilots": 1})
    assert figure.layout.yaxis.dtick == 1 and figure.layout.yaxis.tickformat == ",d"


def test_a_blockers_shortfall_reads_as_words():
    assert labels.shortfall(["unassessed"]) == "not assessed yet"
    assert labels.shortfall(["value"]) == "value too low"
    assert labels.shortfall(["value", "confidence"]) == "value and confidence too low"


def test_a_day_when_nobody_had_assessed_anything_is_a_gap_in_the_confidence_line_not_a_zero():
    days = [(date(2026, 11, 20), 0.0, None), (date(2026, 11, 21), 0.1, 0.7), (date(2026, 11, 22), 0.2, 0.75)]
    mapped, confidence = charts.progress_over_time(days).data
    assert list(mapped.y) == [0.0, 10.0, 20.0]
    assert list(confidence.y) == [None, 70.0, 75.0]


def test_days_without_figures_are_a_gap_in_the_progress_lines_not_a_straight_line_across_them():
    """The nightly job did not run on 24-27 Nov: the lines stop at the 23rd and start again on the 28th, where they
    were drawn straight across the missing days as if figures had been recorded."""
    days = [(date(2026, 11, 22), 0.04, 0.75), (date(2026, 11, 23), 0.05, 0.74), (date(2026, 11, 28), 0.06, 0.73)]
    mapped, confidence = charts.progress_over_time(days).data
    assert list(mapped.x) == [date(2026, 11, 22), date(2026, 11, 23), date(2026, 11, 24), date(2026, 11, 28)]
    assert list(mapped.y) == [4.0, 5.0, None, 6.0] and list(confidence.y) == [75.0, 74.0, None, 73.0]
    assert not mapped.connectgaps and not confidence.connectgaps


def test_ask_whys_evidence_keeps_a_readers_longest_rationale_whole_so_it_reads_in_plain_words_to_its_end():
    from factor_journal.graph import graph_for
    from factor_journal.questions.context import cite_entry

    said, asked = "word " * 40, "question " * 20  # the reader quotes at most 160 and 100 characters of them
    rationale = (
        f'User said "{said[:159]}…" (answering "{asked[:99]}…"): reads as low (P=0.72). '
        "(combined with 12 earlier observations: 39.4 → 30.48)"
    )
    entry = _entry(datetime(2026, 11, 1, tzinfo=UTC), 30.48).model_copy(update={"change_rationale": rationale})
    shown = labels.in_plain_words(cite_entry(graph_for(CATALOG), entry).rationale, NAMES)
    assert shown.endswith(": read as low, fairly sure. (weighed with 12 earlier answers)"), shown


def test_the_team_table_holds_whole_percents_and_words_where_there_is_no_figure():
    from factor_journal.rollup import PersonRow

    started = PersonRow(
        user_id="u1",
        display_name="Anna Berg",
        completeness=0.11540000000000001,
        assessed=3,
        due=1,
        due_share=1 / 3,
        aged_confidence=0.6503,
        tier="low_risk",  # as the row was last aged
    )
    new = PersonRow(user_id="u2", completeness=0.0)
    anna, nobody = labels.team_rows(CATALOG, [started, new])
    # rounded as the eye reads it (and aged: the confidence and tier as the answers count today)
    read = (anna["Person"], anna["Mapped"], anna["Confidence"], anna["To re-check"])
    assert read == ("Anna Berg", "12%", "65%", "33%")
    assert anna["Tier"] == labels.tier_name(CATALOG, "low_risk") != "low_risk"
    assert (nobody["Person"], nobody["Mapped"], nobody["Last active"]) == ("u2", "0%", labels.NOT_YET)
    assert nobody["Confidence"] == nobody["To re-check"] == labels.NO_ANSWERS  # not an empty cell, not a 0%
    assert list(anna) == labels.TEAM_COLUMNS


def test_a_count_chart_and_the_mapped_buckets_read_as_text_in_the_charts_order():
    assert labels.count_rows([("Data quality", 1200), ("Sensor data", 3)], "Factor", "People") == [
        {"Factor": "Data quality", "People": "1,200"},
        {"Factor": "Sensor data", "People": "3"},
    ]
    rows = labels.bucket_rows(["Data", "People"], ["0–49%", "50–100%"], [[2, 0], [1, 1]])
    assert rows == [
        {"Category": "Data", "0–49% mapped": "2", "50–100% mapped": "0"},
        {"Category": "People", "0–49% mapped": "1", "50–100% mapped": "1"},
    ]


def test_each_mapped_bucket_carries_its_count_not_its_shade_alone():
    figure = charts.mapped_distribution(["Data", "People"], ["0–49%", "50–100%"], [[2, 0], [1, 1]]).to_dict()
    assert [bar["text"] for bar in figure["data"]] == [["2", "1"], ["", "1"]]  # no "0" drawn on an empty segment
    assert [bar["name"] for bar in figure["data"]] == ["0–49%", "50–100%"]  # the legend spells out the ranges


def test_progress_rows_name_the_live_day_and_say_no_answers_in_words():
    days = [
        OrgDay(date="2026-11-27", people=4, avg_completeness=0.06, avg_confidence=None, tiers={}),
        OrgDay(date="2026-11-28", people=4, avg_completeness=0.08, avg_confidence=0.78, tiers={}),
    ]
    rows = labels.progress_rows(days, datetime(2026, 11, 28, 14, 5, 30, tzinfo=UTC))
    assert rows == [
        {"Day": "27 Nov 2026", "Mapped on average": "6%", "Average confidence": "no answers yet", "People": "4"},
        {"Day": "Today, 14:05 UTC (as above)", "Mapped on average": "8%", "Average confidence": "78%", "People": "4"},
    ]


def test_a_tie_note_names_who_stands_level_with_the_last_bar():
    assert labels.tied_note(["Privacy protection"], 1) == (
        "Also holding back 1 person each, as many as the last bar: Privacy protection."
    )
    people = labels.tied_note(["A", "B", "C"], 4)
    assert people == "Also holding back 4 people each, as many as the last bar: A, B and C."
    times = labels.tied_note(["A", "B"], 3, times=True)
    assert times == "Also blocking 3 times each, as often as the last bar: A and B."
    many = labels.tied_note([f"F{i}" for i in range(15)], 2)
    assert many.endswith("F10, F11 and 3 more.")


def test_the_team_tables_width_is_estimated_from_its_longest_texts_and_its_cue_names_the_columns():
    import pandas as pd

    table = pd.DataFrame(
        [{"Person": "Anna Berg", "Mapped": "6%", "Tier": "Exploratory"}, {"Person": "Nils", "Mapped": "0%", "Tier": ""}]
    )
    per_char, padding = labels.TABLE_CHAR_PX, labels.TABLE_CELL_PX
    assert labels.table_width(table) == 3 * padding + per_char * (len("Anna Berg") + len("Mapped") + len("Exploratory"))
    cue = labels.sideways_cue(list(table.columns))
    assert cue == "The table scrolls sideways, the names staying in place: Mapped and Tier."
    every = labels.sideways_cue(labels.TEAM_COLUMNS)
    assert every.endswith(": Mapped, Confidence, Tier, To re-check, Unconfirmed, Needs attention and Last active.")


def test_a_persons_things_read_right_whatever_their_name_ends_in():
    assert labels.open_pages_label("Anna Berg") == "Open Anna Berg's pages"
    assert labels.open_pages_label("Anna Berg (Head of Data)") == "Open the pages of Anna Berg (Head of Data)"
    assert labels.of_person("answers", r"Anna Berg \(Head of Data\)", start=True) == (
        r"The answers of Anna Berg \(Head of Data\)"  # escaped for Markdown, still no possessive after ")"
    )
    assert labels.of_person("tier", "Chloé Martin", start=True) == "Chloé Martin's tier"


def test_a_count_names_its_things_in_the_singular_or_plural():
    counted = [labels.count(n, "project type") for n in (0, 1, 3)]
    assert counted == ["0 project types", "1 project type", "3 project types"]
    assert [labels.count(n, "person", "people") for n in (1, 2000)] == ["1 person", "2,000 people"]
