"""A damaged document never jams a person (issue 43), on the Firestore emulator: for each kind of document the
server keeps (a journal entry, a factor document, the summary, a session, a turn, a roll-up row), a malformed one is
set aside (never deleted: marked or copied into its record, listed on the person's profile and by
``python -m factor_journal set-aside``), and the person's next turn is analysed with nothing lost."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from doubles import ScriptedExtractor, reading
from factor_journal import cli, runtime
from factor_journal.organisation import OrganisationDirectory
from factor_journal.pipeline import TurnProcessor
from factor_journal.rollup import PersonRow
from factor_journal.setaside import MARK, DocumentKind


@pytest.fixture
def person(store, make_user):
    """A registered person in an organisation, with an open session; ``say`` writes their answer and has it
    analysed (the readings given), returning the turn's status."""
    org = f"org-aside-{make_user(store)}"
    OrganisationDirectory(store).create(org, "Aside Org")
    user = make_user(store, org_id=org)
    session = store.start_session(user)
    clock = [datetime.now(UTC) - timedelta(minutes=30)]

    def say(text: str, *readings: dict) -> str:
        clock[0] += timedelta(seconds=30)
        turn = store.add_turn(user, session, "user", text, created_at=clock[0])
        return TurnProcessor(store, ScriptedExtractor(list(readings))).process(user, session, turn).status

    return user, session, org, say


def records(store, user) -> dict[str, object]:
    """The person's set-aside records by where the document is."""
    return {record.path: record for record in store.set_aside.listed(user)}


def test_the_seed_that_jammed_every_turn_is_set_aside_and_the_next_turns_are_analysed(store, person):
    """The rules tests' seed: a journal entry holding only ``{'new_value': 20}``, a factor document without its
    category and a summary without its fields made every later turn fail with "15 validation errors for
    JournalEntry"; now they are set aside and the turn is analysed."""
    user, _, _, say = person
    assert say("Our data is all over the place", reading("data_quality", 20)) == "processed"
    [kept] = store.history(user, "data_quality").entries
    factor = store.client.document(f"users/{user}/factors/data_quality")
    entry = factor.collection("journal").document("seeded-entry")
    summary = store.client.document(f"users/{user}/metadata/assessment")
    entry.set({"new_value": 20})
    factor.set({"factor_id": "data_quality", "current_value": 20})
    summary.set({"assessment_summary": {"overall": {}}})

    assert say("The CRM clean-up finished last month", reading("data_quality", 45)) == "processed"

    assert entry.get().to_dict() == {"new_value": 20, MARK: entry.get().to_dict()[MARK]}  # kept, only marked
    assert "invalid field(s) of JournalEntry" in entry.get().get(MARK)["error"]
    found = records(store, user)
    assert set(found) == {entry.path, factor.path, summary.path}
    assert found[entry.path].kind == DocumentKind.journal_entry and found[entry.path].stored == {"new_value": 20}
    assert found[entry.path].error.startswith("15 invalid field(s) of JournalEntry: ")
    assert found[factor.path].stored == {"factor_id": "data_quality", "current_value": 20}  # what it held, kept
    assert found[summary.path].stored == {"assessment_summary": {"overall": {}}}
    assert sorted(store.get_user(user).set_aside) == sorted(found)  # listed where the team looks
    history = store.history(user, "data_quality").entries
    assert kept.entry_id in {e.entry_id for e in history} and len(history) == 2  # folded without the damaged one
    state = store.factor(user, "data_quality")
    assert state.evidence_count == 2 and 20 < state.current_value <= 45
    assert store.journal.summary(user).factors["data_quality"] == store.journal.factor(user, "data_quality")

    assert say("Our data quality is much better now", reading("data_quality", 50)) == "processed"
    assert set(records(store, user)) == set(found)  # passed over from then on, not listed again
    assert entry.get().get("new_value") == 20


def test_a_damaged_entry_found_by_a_late_reading_is_left_out_of_the_refold(store, person):
    user, session, _, say = person
    assert say("Our data is all over the place", reading("data_quality", 20)) == "processed"
    assert say("The finance data is clean", reading("data_quality", 60)) == "processed"
    damaged = store.client.document(f"users/{user}/factors/data_quality/journal/zz-hand-edit")
    damaged.set({"factor_id": "data_quality", "new_value": "sixty", "observed_at": datetime.now(UTC)})
    late = store.add_turn(  # said before both: the factor is folded again from its journal
        user, session, "user", "Nobody trusts the reports", created_at=datetime.now(UTC) - timedelta(hours=2)
    )
    outcome = TurnProcessor(store, ScriptedExtractor([reading("data_quality", 30)])).process(user, session, late)
    assert outcome.status == "processed"
    assert damaged.get().get("new_value") == "sixty" and damaged.get().get(MARK)  # kept, marked
    assert set(records(store, user)) == {damaged.path}
    assert store.factor(user, "data_quality").evidence_count == 3  # the three readings; the damaged entry left out
    assert len(store.history(user, "data_quality").entries) == 3


def test_a_damaged_factor_document_is_copied_into_its_record_and_rewritten(store, person):
    user, _, _, say = person
    assert say("Our data is all over the place", reading("data_quality", 20)) == "processed"
    document = store.client.document(f"users/{user}/factors/data_quality")
    held = {**document.get().to_dict(), "current_value": "not a number"}
    document.set(held)
    assert say("The CRM clean-up finished", reading("data_quality", 45)) == "processed"
    [record] = records(store, user).values()
    assert (record.kind, record.path, record.stored) == (DocumentKind.factor, document.path, held)
    assert "current_value" in record.error
    assert isinstance(document.get().get("current_value"), float)  # rewritten: it reads again


def test_a_damaged_summary_is_copied_into_its_record_and_rebuilt(store, person):
    user, _, _, say = person
    assert say("Our data is all over the place", reading("data_quality", 20)) == "processed"
    summary = store.client.document(f"users/{user}/metadata/assessment")
    held = summary.get().to_dict()
    held["assessment_summary"]["overall"] = "half written"
    summary.set(held)
    assert say("We have a written AI strategy", reading("ai_strategy", 70)) == "processed"
    [record] = records(store, user).values()
    assert (record.kind, record.stored["assessment_summary"]["overall"]) == (DocumentKind.summary, "half written")
    healed = store.journal.summary(user)
    assert healed.factors["data_quality"].current_value == 20 and healed.factors["ai_strategy"].current_value == 70


def test_a_damaged_session_is_copied_into_its_record_and_rewritten(store, person):
    user, session, _, say = person
    assert say("Our data is all over the place", reading("data_quality", 20)) == "processed"
    document = store.client.document(f"users/{user}/conversations/{session}")
    document.update({"usage": "lots"})
    assert say("We have a written AI strategy", reading("ai_strategy", 70)) == "processed"
    [record] = records(store, user).values()
    assert (record.kind, record.stored["usage"], record.error) == (
        DocumentKind.session,
        "lots",
        "fields that no longer read: usage",
    )
    assert document.get().to_dict()["analysed_turns"] == 2


def test_a_turn_that_does_not_read_is_set_aside_and_the_next_turn_is_analysed_without_it(store, person):
    user, session, _, say = person
    broken = store.turns(user, session).document("broken-turn")
    broken.set({"role": "user", "text": 42, "created_at": datetime.now(UTC) - timedelta(minutes=20)})
    outcome = TurnProcessor(store, ScriptedExtractor([])).process(user, session, broken.id)
    assert outcome.status == "invalid"
    stored = broken.get().to_dict()
    assert stored["text"] == 42 and stored["extraction"]["status"] == "invalid"  # kept as written
    assert "text" in stored[MARK]["error"]
    [record] = records(store, user).values()
    assert (record.kind, record.path, record.stored["text"]) == (DocumentKind.turn, broken.path, 42)
    assert store.get_user(user).set_aside == [broken.path]

    assert say("Our data is all over the place", reading("data_quality", 20)) == "processed"  # no context from it
    assert store.factor(user, "data_quality").current_value == 20


def test_a_damaged_roll_up_row_is_set_aside_where_it_is_read_and_the_turns_go_on(store, person):
    """A row is read in every change's transaction (the figures move by what changed) and by the team page: a
    damaged one is set aside by the read that finds it, and rewritten from the person."""
    user, _, org, say = person
    assert say("Our data is all over the place", reading("data_quality", 20)) == "processed"
    row_document = store.org_ref(org).collection("people").document(user)
    in_a_change = {"user_id": user, "completeness": "most of it"}
    row_document.set(in_a_change)
    assert say("We have a written AI strategy", reading("ai_strategy", 70)) == "processed"  # found by the change
    assert PersonRow.model_validate(row_document.get().to_dict()).assessed == 2  # rewritten

    on_the_page = {**row_document.get().to_dict(), "assessed": "two"}  # still found by the page's query
    row_document.set(on_the_page)
    [row] = [r for r in OrganisationDirectory(store).rows(org) if r.user_id == user]  # the team page's read
    assert row.assessed == 2
    assert PersonRow.model_validate(row_document.get().to_dict()) == row  # rewritten
    found = store.set_aside.listed(user)  # two records: what the row held each time
    assert {(r.kind, r.path) for r in found} == {(DocumentKind.rollup_row, row_document.path)}
    assert in_a_change in [r.stored for r in found]
    assert [r.stored.keys() == on_the_page.keys() for r in found].count(True) == 1
    assert [r.stored.get("assessed") for r in found].count("two") == 1
    assert store.get_user(user).set_aside == [row_document.path]
    assert say("The lines log every sensor reading", reading("sensor_data", 60)) == "processed"


@pytest.fixture
def cli_database(monkeypatch):
    monkeypatch.setenv("FJ_FIRESTORE_DATABASE", "fj-tests")
    runtime.reset()
    yield
    runtime.reset()


def test_the_command_line_lists_what_is_set_aside(cli_database, store, person, capsys):
    user, session, _, _ = person
    broken = store.turns(user, session).document("unreadable")
    broken.set({"role": "robot", "text": "hi", "created_at": datetime.now(UTC)})
    TurnProcessor(store, ScriptedExtractor([])).process(user, session, broken.id)

    assert cli.main(["set-aside", "--user", user]) == 0
    out, err = capsys.readouterr()
    [line] = out.splitlines()
    assert f"  turn  {user}  {broken.path}  invalid turn: role must be 'user' or 'assistant'" in line
    assert "1 document(s) set aside" in err
    assert cli.main(["set-aside"]) == 0  # everyone's
    assert broken.path in capsys.readouterr().out
    assert cli.main(["set-aside", "--user", "nobody-here"]) == 0
    assert "nothing set aside" in capsys.readouterr().err
