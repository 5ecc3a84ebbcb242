"""Export and erasure of everything held about a person, on the emulator.

These tests use a database of their own (``fj-privacy``), so that after an erasure every
document of every collection can be scanned for anything of the erased person.
"""

from __future__ import annotations

import json
import logging
import os
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from google.cloud import firestore

from doubles import ScriptedExtractor, reading
from factor_journal import cli, runtime
from factor_journal.links import LinkSigner
from factor_journal.models import UserProfile
from factor_journal.organisation import OrganisationDirectory
from factor_journal.pipeline import TurnProcessor
from factor_journal.privacy import PRIVACY_LOG, PersonalData, subject_of
from factor_journal.repositories.links import LinkRecords
from factor_journal.repositories.personal_data import legacy_shard_of
from factor_journal.rollup import PersonRow
from factor_journal.store import FactorJournalStore

DATABASE = "fj-privacy"
PROJECT_ID = os.environ.get("GCLOUD_PROJECT", "demo-factor-journal")
SECRET_WORDS = "Zorblax data lake"  # what the person said, to be found nowhere afterwards


pytestmark = pytest.mark.emulator


@pytest.fixture
def client() -> firestore.Client:
    httpx.delete(
        f"http://{os.environ['FIRESTORE_EMULATOR_HOST']}/emulator/v1/projects/{PROJECT_ID}/databases/{DATABASE}/documents"
    ).raise_for_status()
    return firestore.Client(project=PROJECT_ID, database=DATABASE)


def every_document(client: firestore.Client) -> Iterator[tuple[str, dict[str, Any]]]:
    """(path, data) of every document in the database, however deep."""

    def below(collection: firestore.CollectionReference) -> Iterator[tuple[str, dict[str, Any]]]:
        for reference in collection.list_documents():
            snapshot = reference.get()
            if snapshot.exists:
                yield reference.path, snapshot.to_dict() or {}
            for sub in reference.collections():
                yield from below(sub)

    for collection in client.collections():
        yield from below(collection)


@pytest.fixture
def person(client, catalog):
    """Someone with everything a person can have: an assessment from real turns, a manager's role,
    a past organisation's stale row, links and queued mail; and a colleague who must be untouched."""
    store = FactorJournalStore(client, catalog)
    directory = OrganisationDirectory(store)
    org, old_org = f"org-{uuid.uuid4().hex[:6]}", f"old-{uuid.uuid4().hex[:6]}"
    directory.create(org, "Current")
    directory.create(old_org, "Former")
    uid = f"p-{uuid.uuid4().hex[:10]}"
    email = f"{uid}@example.com"
    store.register_user(UserProfile(user_id=uid, display_name="Petra Privatova", email=email, org_id=org))
    directory.assign_manager(org, uid)
    colleague = f"c-{uuid.uuid4().hex[:10]}"
    store.register_user(UserProfile(user_id=colleague, display_name="Colin", email="colin@example.com", org_id=org))

    processor = TurnProcessor(store, runtime.make_extractor("offline"))
    session = store.start_session(uid)
    for text in [
        f"Honestly our data is all over the place, 5 different systems and a {SECRET_WORDS}.",
        "We have two data scientists in BI.",
    ]:
        turn = store.add_turn(uid, session, "user", text, created_at=datetime.now(UTC))
        processor.process(uid, session, turn)
    colleague_session = store.start_session(colleague)
    turn = store.add_turn(colleague, colleague_session, "user", "Two data scientists.", created_at=datetime.now(UTC))
    processor.process(colleague, colleague_session, turn)
    assert store.summary(uid).overall.total_factors_assessed >= 1

    stale = PersonRow(user_id=uid, display_name="Petra Privatova", email=email).to_document()  # an old, stale row
    store.org_ref(old_org).collection("people").document(uid).set(stale)
    legacy = store.org_ref(old_org).collection("rollup").document(legacy_shard_of(uid))  # of the earlier format
    legacy.set({"rows": {uid: stale}}, merge=True)
    signer = LinkSigner(LinkRecords(client))
    signer.issue(uid, session)
    signer.issue(uid, kind="manager", org_id=org)
    signer.issue(colleague)
    client.collection("mail").add({"to": [email], "user_id": uid, "message": {"subject": "Hi Petra"}})
    client.collection("mail").add({"to": [email], "message": {"subject": "sent by hand"}})
    client.collection("mail").add({"to": ["colin@example.com"], "user_id": colleague, "message": {"subject": "Hi"}})
    return store, uid, email, colleague, org, old_org


def traces(uid: str, email: str) -> list[str]:
    return [uid, email, "Petra", "Privatova", "Zorblax"]


def test_export_holds_everything_about_the_person(client, person):
    store, uid, email, colleague, org, old_org = person
    exported = json.loads(PersonalData(client).export_json(uid))
    assert exported["profile"]["email"] == email
    paths = exported["documents"]
    kinds = {path.split("/")[2] for path in paths}
    assert {"factors", "metadata", "snapshots", "conversations"} <= kinds
    assert any("/journal/" in p for p in paths) and any("/turns/" in p for p in paths)
    assert any(SECRET_WORDS in json.dumps(doc) for path, doc in paths.items() if "/turns/" in path)
    assert set(exported["organisation_rows"]) == {org, old_org}
    assert exported["manages"] == [org]
    assert len(exported["links"]) == 2 and len(exported["mail"]) == 2
    assert colleague not in json.dumps(exported)  # nobody else's data


def test_erasure_leaves_nothing_of_the_person_anywhere(client, person, caplog):
    store, uid, email, colleague, org, old_org = person
    before = sum(1 for _ in every_document(client))
    with caplog.at_level(logging.INFO, logger="factor_journal.privacy"):
        report = PersonalData(client).erase(uid)
    assert report.total > 10 and report.deleted["links"] == 2 and report.deleted["mail"] == 2
    assert report.steps[:2] == ["mail", "profile"] and report.steps[-1] == "user documents"
    assert report.deleted["organisation rows"] == 3 and report.deleted["managers lists"] == 1

    left = list(every_document(client))
    for path, data in left:
        blob = path + json.dumps(data, default=str)
        for trace in traces(uid, email):
            assert trace not in blob, f"{trace!r} left in {path}"
    edited = 1 + report.deleted["managers lists"]  # the earlier format's shard and the organisations stay
    assert len(left) == before - (report.total - edited) + 1  # + the erasure's own record
    # Everyone else's data is untouched.
    assert store.get_user(colleague) is not None and store.summary(colleague) is not None
    assert colleague in {p.user_id for p in OrganisationDirectory(store).rows(org)}
    # The erasure is logged, without personal data.
    record = client.collection(PRIVACY_LOG).document(subject_of(uid)).get().to_dict()
    assert record["completed_at"] is not None and record["total"] == report.total
    logged = "\n".join(r.getMessage() for r in caplog.records) + json.dumps(record, default=str)
    assert "erasure complete" in logged
    for trace in traces(uid, email):
        assert trace not in logged


def test_an_interrupted_erasure_is_finished_by_running_it_again(client, person, monkeypatch):
    store, uid, email, *_ = person
    data = PersonalData(client)
    real = data._erase_below

    def crash_half_way(user_ref):
        first = next(iter(user_ref.collections()))
        client.recursive_delete(first)
        raise ConnectionError("the process was killed")

    monkeypatch.setattr(data, "_erase_below", crash_half_way)
    with pytest.raises(ConnectionError):
        data.erase(uid)
    record = client.collection(PRIVACY_LOG).document(subject_of(uid)).get().to_dict()
    assert record["completed_at"] is None
    assert store.get_user(uid) is None  # the profile goes early, after the mail found only by the address

    monkeypatch.setattr(data, "_erase_below", real)
    data.erase(uid)
    for path, document in every_document(client):
        blob = path + json.dumps(document, default=str)
        assert not any(trace in blob for trace in traces(uid, email)), path
    assert data.erase(uid).total == 0  # and once more: nothing left to do


def test_the_command_line_exports_and_erases(client, person, monkeypatch, tmp_path, capsys):
    store, uid, email, *_ = person
    monkeypatch.setenv("FJ_FIRESTORE_DATABASE", DATABASE)
    runtime.reset()  # the settings too: the database comes from them
    try:
        out = tmp_path / "export.json"
        assert cli.main(["export", "--user", uid, "--out", str(out)]) == 0
        assert json.loads(out.read_text())["profile"]["email"] == email
        assert cli.main(["erase", "--user", uid]) == 2  # not without --yes
        assert store.get_user(uid) is not None
        capsys.readouterr()
        assert cli.main(["erase", "--user", uid, "--yes"]) == 0
        printed = capsys.readouterr()
        assert "erased subject" in printed.out and uid not in printed.out + printed.err
        assert store.get_user(uid) is None
    finally:
        runtime.reset()  # the settings too: the database comes from them


def test_people_who_share_an_address_never_get_or_erase_each_others_mail(client, catalog):
    """Addresses are not unique (a team mailbox): a reminder carries its recipient's resume link, so it
    belongs to the person it was written for, never to someone else who shares the address."""
    from factor_journal.reminders import ReminderPolicy, remind

    store = FactorJournalStore(client, catalog)
    shared = f"team-{uuid.uuid4().hex[:8]}@example.com"
    vera, otto = (f"{name}-{uuid.uuid4().hex[:8]}" for name in ("vera", "otto"))
    for uid, name in ((vera, "Vera"), (otto, "Otto")):
        store.register_user(UserProfile(user_id=uid, display_name=name, email=shared))
    signer = LinkSigner(LinkRecords(client))
    veras = store.get_user(vera)
    assert veras is not None
    [veras_reminder] = remind(store, signer, "https://app.example", [veras], datetime.now(UTC), ReminderPolicy())
    privacy = PersonalData(client)

    ottos = privacy.export(otto)
    assert ottos["mail"] == {} and vera not in json.dumps(ottos)
    assert set(privacy.export(vera)["mail"]) == {veras_reminder}

    privacy.erase(otto)
    assert client.collection("mail").document(veras_reminder).get().exists


def test_a_turn_being_analysed_while_its_person_is_erased_leaves_nothing_behind(client, catalog):
    """The model is answering while the erasure runs: the turn's commit, and its outcome, write nothing."""
    store = FactorJournalStore(client, catalog)
    uid = f"p-{uuid.uuid4().hex[:10]}"
    store.register_user(UserProfile(user_id=uid, display_name="Petra Privatova", email=f"{uid}@example.com"))
    session = store.start_session(uid)
    turn = store.add_turn(uid, session, "user", f"Our {SECRET_WORDS} is a mess", created_at=datetime.now(UTC))

    class ErasedWhileAnswering(ScriptedExtractor):
        def extract(self, request):
            PersonalData(client).erase(uid)
            return super().extract(request)

    outcome = TurnProcessor(store, ErasedWhileAnswering([reading("data_quality", 20)])).process(uid, session, turn)
    assert outcome.status == "invalid"  # the person is gone
    left = [path for path, document in every_document(client) if uid in path + json.dumps(document, default=str)]
    assert left == []


def _erased_person(store: FactorJournalStore) -> str:
    uid = f"p-{uuid.uuid4().hex[:10]}"
    store.register_user(UserProfile(user_id=uid, display_name="Petra Privatova", email=f"{uid}@example.com"))
    return uid


def _traces_of(client: firestore.Client, uid: str) -> list[str]:
    return [path for path, document in every_document(client) if uid in path + json.dumps(document, default=str)]


def test_a_reminder_composed_while_its_person_is_erased_leaves_no_link_and_the_page_goes_on(client, catalog):
    from factor_journal.reminders import ReminderPolicy, remind

    store = FactorJournalStore(client, catalog)
    erased, kept = _erased_person(store), _erased_person(store)
    people = [store.get_user(erased), store.get_user(kept)]
    signer = LinkSigner(LinkRecords(client))
    issue = signer.issue

    def erased_while_composing(user_id, *args, **kwargs):
        if user_id == erased:
            PersonalData(client).erase(erased)
        return issue(user_id, *args, **kwargs)

    signer.issue = erased_while_composing  # type: ignore[method-assign]
    mail_ids = remind(store, signer, "https://app.example", people, datetime.now(UTC), ReminderPolicy())  # type: ignore[arg-type]
    assert len(mail_ids) == 1 and client.collection("mail").document(mail_ids[0]).get().to_dict()["user_id"] == kept
    assert _traces_of(client, erased) == []


def test_a_profile_written_back_after_its_person_was_erased_brings_nobody_back(client, catalog):
    """A move read-modify-write racing the erasure: the write-back is refused, not an upsert."""
    from factor_journal.errors import UnknownUserError

    store = FactorJournalStore(client, catalog)
    uid = _erased_person(store)
    profile = store.get_user(uid)
    PersonalData(client).erase(uid)
    with pytest.raises(UnknownUserError):
        store.register_user(profile.model_copy(update={"org_id": "org-elsewhere"}))  # type: ignore[union-attr]
    assert _traces_of(client, uid) == []


def test_a_turn_counted_for_the_rate_limit_after_its_person_was_erased_writes_nothing(client, catalog, monkeypatch):
    from factor_journal.repositories.people import People

    store = FactorJournalStore(client, catalog)
    uid = _erased_person(store)
    session = store.start_session(uid)
    turn = store.add_turn(uid, session, "user", "Our data is a mess", created_at=datetime.now(UTC))
    count = People.count_turn

    def erased_first(people, ref, written_at, now):
        PersonalData(client).erase(uid)
        return count(people, ref, written_at, now)

    monkeypatch.setattr(People, "count_turn", erased_first)
    processor = TurnProcessor(store, ScriptedExtractor([reading("data_quality", 20)]), enforce_rate_limits=True)
    assert processor.process(uid, session, turn).status == "missing"
    assert _traces_of(client, uid) == []
