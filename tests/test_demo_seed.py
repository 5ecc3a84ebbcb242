"""``make demo``'s seeding (``demo/seed.py``): the demo's answers read as production reads them, through the Gemini path
with the recorded answers of a language model in Gemini's seat replayed by request key, and by the configured reader
where the seat has no answer; and the demo coming up on a fresh clone, where there are no answers at all.

The answers here are the test's own, written to a temporary file for the very requests the demo sends (never the
seat's: those are a model's, ``eval/seat/BRIEF.md``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from demo.seed import DEMO_ANSWERS, IN_THE_SEAT, account, opening, seed, turn_line
from factor_journal.documents import ExtractionOutcome
from factor_journal.extraction.offline import OfflineExtractor
from factor_journal.extraction.prompts import EVIDENCE_RULES
from factor_journal.pipeline import TurnProcessor
from factor_journal.sayback import read_by
from factor_journal.store import FactorJournalStore
from factor_journal_tools.seat import SeatAnswers, read_answers
from factor_journal_tools.seat_demo import SEAT, DemoReading, SeededTurn, load_script
from factor_journal_tools.seat_run import run_demo
from test_scheduler import SWEEP, scheduler
from waiting import wait_for_analysis

ROOT = Path(__file__).resolve().parents[1]
SEAT_MODEL = "test-seat-model"
# what the test's answers read each person's first answer as: (words of the answer, factor, value)
FIRST_READINGS = [
    ("our data is all over the place", "it_integration", 20),
    ("cloud data warehouse", "cloud_adoption", 80),
    ("Order entry is manual entry", "process_documentation", 15),
]


def answers_for(requests, path: Path) -> Path:
    """A tiny answers file in the seat's form, one answer for each request: a reading as ``FIRST_READINGS`` says, an
    evidence check saying evidence."""
    lines = []
    for request in requests:
        [(_, factor, value)] = [r for r in FIRST_READINGS if r[0] in request.turn_text.split("Turn to analyse")[1]]
        update = {"factor_id": factor, "value": value, "confidence": 0.7, "rationale": "said so", "quote": ""}
        checks = request.system_instruction == EVIDENCE_RULES
        text = json.dumps({"turn": "evidence"} if checks else {"updates": [update]})
        lines.append(json.dumps({"key": request.key, "text": text, "model": SEAT_MODEL}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def outcome(store: FactorJournalStore, turn: SeededTurn) -> ExtractionOutcome:
    found = ExtractionOutcome.of(store.turn_data(turn.user_id, turn.session_id, turn.turn_id))
    assert found is not None, turn
    return found


def test_the_demo_sends_the_seats_requests_reads_its_answers_and_where_it_has_none_the_configured_reader(
    store, database, catalog, tmp_path
):
    # what `make seat-requests SPLIT=demo` asks the seat before anything is answered: each person's first answer
    asked = run_demo(store, SeatAnswers({}))
    assert len(asked.requests) == 6 and len(asked.excluded) == 3  # a reading and an evidence check each
    answers = read_answers(answers_for(asked.requests, tmp_path / "demo.jsonl"))

    demo = FactorJournalStore(database, catalog)
    said: list[str] = []
    reading = seed(demo, load_script(), answers, lambda: TurnProcessor(demo, OfflineExtractor()), said.append)

    # each person's first answer is read through the Gemini path with the seat's answer, as the seat gave it
    firsts = reading.by_seat
    assert [turn.person for turn in firsts] == ["demo-anna", "demo-ben", "demo-chloe"]
    for turn, (words, factor, value) in zip(firsts, FIRST_READINGS, strict=True):
        stored = outcome(demo, turn)
        assert words in turn.text and turn.model == SEAT_MODEL
        assert (stored.extractor, stored.model) == ("gemini", SEAT_MODEL)
        assert [(r.factor_id, r.value) for r in stored.readings] == [(factor, value)]
        assert read_by(stored.extractor, stored.model) == (
            f"Read through the Gemini path by {SEAT_MODEL}, a language model in Gemini's seat, not by Gemini"
        )
    # their second answers' requests carry what the first set: the seat has no answer, so the demo says so and the
    # configured reader reads them and every later answer of theirs
    missing = reading.no_answer
    assert [(turn.person, turn.index) for turn in missing] == [("demo-anna", 3), ("demo-ben", 3), ("demo-chloe", 3)]
    later = reading.by_fallback
    assert len(later) == 7 and {turn.reader for turn in later} == {"offline"}
    for turn in later:
        stored = outcome(demo, turn)
        assert stored.extractor == "offline" and stored.is_done
        assert read_by(stored.extractor, stored.model) in ("Read offline", None)  # None: set aside before reading
    # nothing waits for another reading: every turn the demo wrote is settled
    assert all(turn.status in ("processed", "no_update", "context") for turn in reading.turns)
    assert len(reading.turns) == sum(len(s["turns"]) for p in load_script()["users"] for s in p.get("sessions", []))
    assert sum(f"[seat: {SEAT_MODEL}]" in line for line in said) == 3
    assert sum("[offline, no seat answer]" in line for line in said) == 3
    summary = account(reading, "rules")
    assert SEAT_MODEL in summary[0] and IN_THE_SEAT in summary[0] and "3 seeded answers" in summary[0]
    assert "no answer for 3 seeded answers (demo-anna, demo-ben, demo-chloe)" in summary[1]
    assert "7 in all, were read by the configured reader (rules)" in summary[1]
    first = opening(answers, tmp_path / "demo.jsonl", "rules")
    assert f"replaying 6 recorded answers of {SEAT_MODEL}, {IN_THE_SEAT}" in first

    # the seat answered: the requests run goes on to each person's next answer, which the demo sends too
    again = run_demo(store, SeatAnswers(answers))
    assert {request.key for request in again.requests} >= set(answers)
    assert len(again.missing) == 6


def test_the_committed_demo_answers_answer_every_request_the_demo_sends(store):
    """``make demo`` shows the seat's readings only while its answers are for the requests the demo sends now: a
    changed prompt, catalog or script changes them, and the demo would fall back to the configured reader."""
    answers = read_answers(DEMO_ANSWERS)
    if not answers:
        pytest.skip("no seat answers for the demo committed yet (eval/seat/answers/demo.jsonl): see eval/seat/BRIEF.md")
    run = run_demo(store, SeatAnswers(answers))
    assert not run.missing, (
        f"{len(run.missing)} of the demo's requests have no answer in the seat: the requests changed since the answers "
        "were given; run the seat's rounds again (`make seat-requests SPLIT=demo`, eval/seat/BRIEF.md)"
    )
    sessions = [session for person in load_script()["users"] for session in person.get("sessions", [])]
    answers_in_the_script = sum(role == "user" for session in sessions for role, _ in session["turns"])
    assert not run.excluded and len(run.requests) == 2 * answers_in_the_script  # a reading and a check per answer


def test_what_the_seeding_says_of_each_answer():
    def turn(**fields) -> SeededTurn:
        base = dict(person="demo-ben", user_id="demo-ben", session_id="infra", index=1, role="user", text="We moved")
        return SeededTurn(**{**base, "turn_id": "t", "status": "processed", **fields})

    assert "[seat: m-1] We moved" in str(turn_line(turn(reader=SEAT, model="m-1")))
    assert "[seat: set aside before the model]" in str(turn_line(turn(reader=SEAT, status="no_update")))
    assert "[semantic, no seat answer]" in str(turn_line(turn(reader="semantic", no_answer=True)))
    assert "[semantic]" in str(turn_line(turn(reader="semantic")))
    assert turn_line(turn(role="assistant")) is None
    assert account(DemoReading(), "semantic") == []
    assert "no recorded answers (eval/seat/answers/demo.jsonl: none)" in opening({}, DEMO_ANSWERS, "semantic")


@pytest.mark.functions
def test_make_demo_comes_up_on_a_fresh_clone_with_no_answers_and_the_trigger_reads_live_answers(
    trigger_client, catalog, tmp_path
):
    """What ``scripts/demo.sh`` runs before the dashboard, without an answers file: the seat has no answer for any
    seeded answer, the demo says so, the configured reader reads them all with the trigger off, and the trigger is
    on again afterwards for the answers typed in the demo."""
    env = {**os.environ, "FJ_APP_URL": "http://localhost:8599"}
    env.pop("FJ_EXTRACTOR", None)  # the configured reader: the default, the embedded one
    absent = tmp_path / "no-such-answers.jsonl"
    seeded = subprocess.run(
        [sys.executable, "-W", "ignore::UserWarning", "-m", "demo.seed", "--answers", str(absent)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert seeded.returncode == 0, seeded.stderr[-3000:]
    printed = seeded.stdout
    assert "The seat has no answer for 3 seeded answers (demo-anna, demo-ben, demo-chloe)" in printed
    assert "were read by the configured reader (semantic) instead" in printed
    assert "seeded answers were read through the Gemini path" not in printed  # no answer was the seat's
    assert printed.count("http://localhost:8599/") == 5  # a link per person and the manager's

    store = FactorJournalStore(trigger_client, catalog)
    for person in load_script()["users"]:
        for session in person.get("sessions", []):
            turns = store.session_turns(person["user_id"], session["id"])
            assert len(turns) == len(session["turns"])
            for _, data in turns:
                stored = ExtractionOutcome.of(data)
                assert stored is not None, data
                assert stored.status == "context" if data["role"] == "assistant" else stored.is_done, data
                assert data["role"] == "assistant" or stored.extractor == "semantic"

    # the background functions are on again (a scheduled one called now runs; switched off, it would answer that
    # nothing ran), and an answer typed in the demo is read by the configured reader
    scheduler.fire(scheduler.functions_origin(), "demo-factor-journal", SWEEP, datetime.now(UTC))
    session = store.start_session("demo-david")
    store.add_turn("demo-david", session, "assistant", "How is your data organised?")
    answer = store.add_turn("demo-david", session, "user", "Our data is all over the place, 5 different systems")
    read = wait_for_analysis(store, "demo-david", session, answer)
    assert read["status"] == "processed" and read["extractor"] == "semantic"
