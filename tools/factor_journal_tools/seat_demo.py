"""The Gemini path with a language model in Gemini's seat: the real ``GeminiExtractor`` pointed at a local stand-in
that serves the seat's answers by the request's key, and the demo's conversations read through it.

``read_conversations`` is how the demo's seeded answers are read, by ``make demo`` (``demo/seed.py``) and by
``make seat-requests SPLIT=demo`` (``seat_run``) alike, so the requests the seat is asked are the very ones the demo
sends: each person's turns are written in order as a client writes them and analysed one at a time in this
process by ``TurnProcessor`` with that extractor.  A turn whose request has no answer in the seat is not read by
it: with a ``fallback`` (the demo: the configured reader, as the deployed trigger builds it) that turn and the
person's later turns are read by the fallback, since what a later turn's request says depends on what the earlier
ones were read as; without one (the requests run) the person stops there, until the seat has answered.  Nothing is
ever read from a file in place of a model's answer: an answer is served only for its request's exact key.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from factor_journal.extraction.gemini import GeminiExtractor, GeminiSettings
from factor_journal.pipeline import TurnProcessor
from factor_journal_tools.corpus import REPO
from factor_journal_tools.seat import SeatAnswers
from factor_journal_tools.vertex_stand_in import VertexStandIn

DEMO_SCRIPT = REPO / "demo" / "conversations.yaml"
TURN_SPACING = timedelta(seconds=90)  # between a session's turns (time never reaches a prompt)
SEAT = "seat"  # ``SeededTurn.reader`` of a turn the seat's answer was read for


def load_script(path: Path = DEMO_SCRIPT) -> dict[str, Any]:
    """The demo's scripted organisation and conversations (``demo/conversations.yaml``)."""
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def seat_settings(url: str) -> GeminiSettings:
    """The deployed extractor's settings (``FJ_GEMINI_*``, so the requests are the ones production sends), pointed
    at the stand-in, one attempt each (a 404 for a missing answer is final anyway)."""
    settings = GeminiSettings.from_env()
    return settings.model_copy(
        update={"base_url": url, "project": settings.project or "seat", "max_attempts": 1, "timeout_seconds": 120}
    )


@contextmanager
def seat_extractor(store: Any, seat: SeatAnswers) -> Iterator[GeminiExtractor]:
    """The real ``GeminiExtractor`` (reading against the store's catalog) pointed at a stand-in that answers each
    request from ``seat`` by its key, HTTP 404 when the seat has no answer for it; the stand-in stops with the
    block."""
    with VertexStandIn(respond=seat.respond) as vertex:
        yield GeminiExtractor(seat_settings(vertex.url), catalog=store.catalog)


@dataclass(frozen=True)
class SeededTurn:
    """One turn of a scripted conversation, written and analysed: who read it (``SEAT``, the fallback reader's
    name, or None for the assistant's turns, which nothing reads) and the seat's model when it was the seat."""

    person: str  # the script's user id
    user_id: str
    session_id: str
    index: int  # the turn's place in its session
    role: str
    text: str
    turn_id: str
    status: str  # the analysis outcome's status
    reader: str | None = None
    model: str | None = None
    no_answer: bool = False  # its request had no answer in the seat (the fallback read it, if any)

    @property
    def where(self) -> str:
        return f"{self.person}/{self.session_id}/{self.index}"


@dataclass
class DemoReading:
    """What reading the scripted conversations gave."""

    turns: list[SeededTurn] = field(default_factory=list)
    models: set[str] = field(default_factory=set)  # the seat models whose answers were read

    @property
    def no_answer(self) -> list[SeededTurn]:
        """The turns whose request had no answer in the seat (each person's first such turn)."""
        return [turn for turn in self.turns if turn.no_answer]

    @property
    def by_seat(self) -> list[SeededTurn]:
        return [turn for turn in self.turns if turn.reader == SEAT]

    @property
    def by_fallback(self) -> list[SeededTurn]:
        return [turn for turn in self.turns if turn.reader not in (None, SEAT)]


def read_conversations(
    store: Any,
    people: Iterable[dict[str, Any]],
    seat: SeatAnswers,
    *,
    fallback: Callable[[], TurnProcessor] | None = None,
    user_of: Callable[[str], str] = str,
    now: datetime | None = None,
    on_turn: Callable[[SeededTurn], None] | None = None,
) -> DemoReading:
    """Write and read the scripted sessions of ``people`` (``demo/conversations.yaml``'s ``users``; each a
    registered person ``user_of(person["user_id"])``), person by person and turn by turn, each session dated
    ``days_ago`` before ``now``; a session the person already has is left as it is.  Each turn is analysed through
    the Gemini path with ``seat``'s answers until a request has no answer; then ``fallback()`` (built once, when
    first needed) reads that turn again and the person's later turns, or, without a fallback, the person stops
    there.  ``on_turn`` hears of each turn as it is read."""
    now = now or datetime.now(UTC)
    reading = DemoReading()
    built: list[TurnProcessor] = []

    def fallback_processor() -> TurnProcessor | None:
        if fallback is not None and not built:
            built.append(fallback())
        return built[0] if built else None

    with seat_extractor(store, seat) as extractor:
        by_seat = TurnProcessor(store, extractor)
        for person in people:
            for turn in _read_person(store, person, user_of(person["user_id"]), seat, by_seat, fallback_processor, now):
                reading.turns.append(turn)
                if turn.model:
                    reading.models.add(turn.model)
                if on_turn is not None:
                    on_turn(turn)
    return reading


def _read_person(
    store: Any,
    person: dict[str, Any],
    user: str,
    seat: SeatAnswers,
    by_seat: TurnProcessor,
    fallback: Callable[[], TurnProcessor | None],
    now: datetime,
) -> Iterator[SeededTurn]:
    """One person's sessions, as ``read_conversations`` says."""
    processor: TurnProcessor | None = by_seat
    for session in person.get("sessions", []):
        if processor is None:
            return  # waiting for the seat's answer to an earlier turn
        if store.session_data(user, session["id"]) is not None:
            continue  # already there (seeded before)
        started = now - timedelta(days=session["days_ago"])
        store.start_session(user, session["id"], started_at=started)
        for index, (role, text) in enumerate(session["turns"]):
            if processor is None:
                return  # waiting for the seat's answer to an earlier turn
            turn_id = store.add_turn(user, session["id"], role, text, created_at=started + index * TURN_SPACING)
            seeded = SeededTurn(person["user_id"], user, session["id"], index, role, text, turn_id, "")
            before = len(seat.log)
            status = processor.process(user, session["id"], turn_id).status
            if role != "user":  # the assistant's turn: context for the answers, read by nothing
                yield replace(seeded, status=status)
                continue
            if processor is not by_seat:
                yield replace(seeded, status=status, reader=processor.extractor.name)
                continue
            # none when the turn was refused before the model (hostile, empty, oversized)
            asked = seat.turn_asked(before)
            answered = [seat.answers[key] for key in asked if key in seat.answers]
            if len(answered) == len(asked):
                model = "+".join(sorted({answer.model for answer in answered})) or None
                yield replace(seeded, status=status, reader=SEAT, model=model)
                continue
            processor = fallback()
            if processor is None:
                yield replace(seeded, status=status, no_answer=True)
                return
            # its failed attempt through the Gemini path is taken over at once, as a person's reprocess would
            status = processor.process(user, session["id"], turn_id, force=True).status
            yield replace(seeded, status=status, reader=processor.extractor.name, no_answer=True)
