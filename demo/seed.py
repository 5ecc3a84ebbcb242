"""Seed the emulators with the demo organisation, its answers read as production reads them: through the Gemini path
(the real ``GeminiExtractor``), replaying the recorded answers of a language model in Gemini's seat
(``eval/seat/answers/demo.jsonl``, served by a local stand-in by each request's key), never Gemini itself.

    python -m demo.seed [--answers FILE]

Each turn is written like a client writes it, and analysed in this process by ``TurnProcessor``, person by person
and in order (``factor_journal_tools.seat_demo.read_conversations``), with the Functions emulator's trigger switched
off meanwhile (the Emulator Hub), so that nothing else reads the seeded turns; it is switched on again afterwards,
and every answer typed in the demo is read by the deployed trigger with the configured reader (``FJ_EXTRACTOR``).
A seeded turn the seat has no answer for is said so, and it and that person's later turns are read by the configured
reader (built as the trigger builds it), so no reading is ever made up: a fresh clone without answers seeds that way.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from factor_journal import runtime
from factor_journal.cli import issue_link
from factor_journal.models import UserProfile
from factor_journal.organisation import OrganisationDirectory
from factor_journal.pipeline import TurnProcessor
from factor_journal.settings import settings
from factor_journal.store import FactorJournalStore
from factor_journal_tools.corpus import REPO
from factor_journal_tools.emulator_hub import triggers_stopped
from factor_journal_tools.seat import ANSWERS, Answer, SeatAnswers, SeatFileError, read_answers
from factor_journal_tools.seat_demo import SEAT, DemoReading, SeededTurn, load_script, read_conversations

DEMO_ANSWERS = ANSWERS / "demo.jsonl"
IN_THE_SEAT = "a language model in Gemini's seat, not Gemini"


def register(store: FactorJournalStore, script: dict[str, Any]) -> list[str]:
    """The organisation, its manager and its people (registering again changes nothing); the people's user ids."""
    organisation = script["organisation"]
    manager = organisation["manager"]
    directory = OrganisationDirectory(store)
    directory.create(organisation["id"], organisation["name"])
    store.register_user(
        UserProfile(
            user_id=manager["user_id"],
            display_name=manager["display_name"],
            email=manager["email"],
            org_id=organisation["id"],
        )
    )
    directory.assign_manager(organisation["id"], manager["user_id"])
    for person in script["users"]:
        store.register_user(
            UserProfile(
                user_id=person["user_id"],
                display_name=person["display_name"],
                email=person["email"],
                org_id=organisation["id"],
            )
        )
    return [person["user_id"] for person in script["users"]]


def turn_line(turn: SeededTurn) -> str | None:
    """What the seeding prints for an answer: who, where, what became of it and who read it (None for the
    assistant's turns)."""
    if turn.role != "user":
        return None
    if turn.reader == SEAT:
        by = f"seat: {turn.model}" if turn.model else "seat: set aside before the model"
    elif turn.reader is not None:
        by = f"{turn.reader}, no seat answer" if turn.no_answer else turn.reader
    else:
        by = "no seat answer"
    return f"  {turn.person:12} {turn.session_id:15} {turn.status:9} [{by}] {turn.text[:60]}"


def seed(
    store: FactorJournalStore,
    script: dict[str, Any],
    answers: dict[str, Answer],
    fallback: Callable[[], TurnProcessor],
    say: Callable[[str], None] = print,
) -> DemoReading:
    """Register the organisation and read its people's scripted sessions through the Gemini path with the seat's
    ``answers``, ``fallback()`` (the configured reader) reading a turn without one and that person's later turns
    (``seat_demo.read_conversations``); each answer is ``say``-ed as it is read.  Run it with the trigger off
    (``main``) where a trigger listens."""
    register(store, script)

    def heard(turn: SeededTurn) -> None:
        if (line := turn_line(turn)) is not None:
            say(line)

    return read_conversations(store, script["users"], SeatAnswers(answers), fallback=fallback, on_turn=heard)


def shown(path: Path) -> str:
    """A path as the seeding prints it: from the repository when it is in it."""
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)


def opening(answers: dict[str, Answer], path: Path, fallback: str) -> str:
    """What the seeding says first: how the seeded answers are read, and whose recorded answers are replayed.
    Pure."""
    if not answers:
        return (
            f"Seeding the demo organisation. The seat has no recorded answers ({shown(path)}: none), so every seeded "
            f"answer is read by the configured reader ({fallback}) …"
        )
    models = ", ".join(sorted({answer.model for answer in answers.values()}))
    return (
        "Seeding the demo organisation, its answers read as production reads them: through the Gemini path (the "
        f"real GeminiExtractor), replaying {len(answers)} recorded answers of {models}, {IN_THE_SEAT} "
        f"({shown(path)}) …"
    )


def account(reading: DemoReading, fallback: str) -> list[str]:
    """What the seeding says it did: how many answers the seat's recorded answers were read for and whose, and
    which answers the seat had no answer for, read by the configured reader instead.  Pure."""
    seat, others, missing = reading.by_seat, reading.by_fallback, reading.no_answer
    lines = []
    if seat:
        models = ", ".join(sorted(reading.models)) or "no model"
        lines.append(
            f"{len(seat)} seeded answers were read through the Gemini path with the recorded answers of {models}, "
            f"{IN_THE_SEAT}; the pages say so under each of them."
        )
    if missing:
        people = ", ".join(dict.fromkeys(turn.person for turn in missing))
        lines.append(
            f"The seat has no answer for {len(missing)} seeded answers ({people}): those and the same people's later "
            f"answers, {len(others)} in all, were read by the configured reader ({fallback}) instead. "
            "`make seat-requests SPLIT=demo` lists the requests waiting for an answer."
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m demo.seed", description=__doc__.split("\n\n")[0])
    parser.add_argument("--answers", type=Path, default=DEMO_ANSWERS, help="the seat's answers (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        answers = read_answers(args.answers)
    except SeatFileError as problem:
        print(f"The seat's answers do not read ({problem}): every seeded answer is read by the configured reader.")
        answers = {}
    store = runtime.store()
    script = load_script()
    print(opening(answers, args.answers, settings().extractor), flush=True)
    for name in ("google_genai", "httpx", "httpx2"):
        logging.getLogger(name).setLevel(logging.WARNING)
    quiet = logging.getLogger("factor_journal.pipeline")
    level = quiet.level
    quiet.setLevel(logging.CRITICAL)  # what became of each answer is printed as it is read
    try:
        with triggers_stopped():  # nothing but this process reads the seeded turns
            reading = seed(store, script, answers, runtime.turn_processor, lambda line: print(line, flush=True))
    finally:
        quiet.setLevel(level)
    for line in account(reading, settings().extractor):
        print(line)
    users = [person["user_id"] for person in script["users"]]
    for user in users:
        summary = store.summary(user)
        if summary:
            overall = summary.overall
            print(
                f"  {user:12} {overall.total_factors_assessed:>2}/{overall.total_factors} factors, "
                f"tier {overall.decision_tier}, can evaluate {len(summary.capabilities.can_evaluate)}"
            )
    OrganisationDirectory(store).record_day(script["organisation"]["id"])
    print("\nOpen the app through these links (valid 14 days):")
    for user in users:
        print(f"  {user:12} {issue_link(user)}")
    manager = script["organisation"]["manager"]["user_id"]
    print(f"  {'manager':12} {issue_link(manager, manager=True)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
