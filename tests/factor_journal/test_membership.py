"""Who manages whom and who belongs where, under change (on the emulator).

The organisation's ``managers`` list alone makes a manager; a move to another organisation takes
the person's roll-up row (and their place on the managers list) out of the old organisation in the
same transaction as the move.
"""

from __future__ import annotations

import contextlib
import threading
import uuid
from datetime import UTC, datetime
from functools import partial

import pytest

from factor_journal.errors import FactorJournalError
from factor_journal.models import InferredUpdate, UserProfile
from factor_journal.organisation import NotAManagerError, OrganisationDirectory, UnknownOrganisationError
from factor_journal.store import FactorJournalStore


def reading(factor: str, value: float) -> InferredUpdate:
    return InferredUpdate(factor_id=factor, value=value, confidence=0.7, rationale="said so")


@pytest.fixture
def orgs(small_store, make_user):
    directory = OrganisationDirectory(small_store)
    a, b = f"org-a-{uuid.uuid4().hex[:6]}", f"org-b-{uuid.uuid4().hex[:6]}"
    directory.create(a, "Alpha")
    directory.create(b, "Beta")
    manager_a = make_user(small_store, org_id=a, display_name="Manager A")
    directory.assign_manager(a, manager_a)
    manager_b = make_user(small_store, org_id=b, display_name="Manager B")
    directory.assign_manager(b, manager_b)
    return directory, a, b, manager_a, manager_b


def test_a_role_without_a_place_on_the_list_manages_nothing(small_store, make_user, orgs):
    directory, a, _, manager_a, _ = orgs
    pretender = make_user(small_store, org_id=a, role="manager")  # never added to the list
    with pytest.raises(NotAManagerError):
        directory.require_manager(pretender, a)
    with pytest.raises(NotAManagerError):
        directory.team(pretender, a)
    assert directory.require_manager(manager_a, a).user_id == manager_a


def test_removing_a_manager_takes_effect_at_once(small_store, orgs):
    directory, a, _, manager_a, _ = orgs
    directory.team(manager_a, a)
    directory.remove_manager(a, manager_a)
    with pytest.raises(NotAManagerError):
        directory.require_manager(manager_a, a)
    assert small_store.get_user(manager_a).role == "member"
    assert manager_a not in directory.get(a).managers


def test_changing_the_managers_of_an_organisation_that_does_not_exist_creates_nothing(small_store, make_user, orgs):
    """A mistyped organisation id is refused, either way, and no nameless organisation document is left behind (it
    would no longer read as an organisation: its team page and nightly figures would fail)."""
    directory, a, _, manager_a, _ = orgs
    typo = f"{a}-typo"
    with pytest.raises(UnknownOrganisationError) as refused:
        directory.remove_manager(typo, manager_a)
    assert refused.value.org_id == typo and typo in str(refused.value)
    stranded = make_user(small_store, org_id=typo, display_name="Stranded")  # a member of an id with no document
    with pytest.raises(UnknownOrganisationError):
        directory.assign_manager(typo, stranded)
    with pytest.raises(UnknownOrganisationError):
        directory.remove_manager(typo, stranded)
    assert not small_store.org_ref(typo).get().exists
    assert directory.get(typo) is None
    assert small_store.get_user(manager_a).role == "manager"  # nothing of the people was written either
    assert small_store.get_user(stranded).role == "member"
    assert directory.require_manager(manager_a, a).user_id == manager_a


def test_a_list_entry_left_behind_after_the_role_changed_is_still_the_truth(small_store, orgs):
    """The role on the profile is display only: a manager whose profile was edited stays one until removed."""
    directory, a, _, manager_a, _ = orgs
    small_store.client.document(f"users/{manager_a}").update({"role": "member"})
    assert directory.require_manager(manager_a, a).user_id == manager_a


def test_moving_a_person_removes_their_row_from_the_old_organisation(small_store, make_user, orgs):
    directory, a, b, manager_a, manager_b = orgs
    person = make_user(small_store, org_id=a, display_name="Mover", email="mover@example.com")
    small_store.record_inference(person, reading("quality", 65))
    assert person in {p.user_id for p in directory.rows(a)}
    assert directory.team(manager_a, a).started() == 1

    profile = small_store.get_user(person)
    small_store.register_user(profile.model_copy(update={"org_id": b}))

    assert person not in {p.user_id for p in directory.rows(a)}
    assert not small_store.org_ref(a).collection("people").document(person).get().exists
    assert directory.team(manager_a, a).started() == 0  # the figures moved with the row
    moved = next(p for p in directory.rows(b) if p.user_id == person)
    assert moved.assessed == 1 and directory.team(manager_b, b).started() == 1  # the row went with them


def test_a_manager_who_moves_leaves_the_old_managers_list(small_store, orgs):
    directory, a, b, manager_a, _ = orgs
    profile = small_store.get_user(manager_a)
    small_store.register_user(profile.model_copy(update={"org_id": b, "role": "member"}))
    assert manager_a not in directory.get(a).managers
    with pytest.raises(NotAManagerError):
        directory.require_manager(manager_a, a)


def test_a_move_out_of_an_organisation_that_has_no_document_still_removes_the_row(small_store, make_user):
    person = make_user(small_store, org_id=f"undocumented-{uuid.uuid4().hex[:6]}")
    old = small_store.get_user(person).org_id
    small_store.register_user(small_store.get_user(person).model_copy(update={"org_id": None}))
    assert not small_store.org_ref(old).collection("people").document(person).get().exists
    assert not small_store.org_ref(old).get().exists  # no organisation document is conjured up


def test_every_change_of_who_is_in_an_organisation_raises_its_roster(store, make_user, firestore_client):
    """Kept copies of an organisation's rows are keyed on its roster: a join, a move away, an erasure and a
    removed stray row each raise it; a person's progress (their row rewritten) does not."""
    from factor_journal.privacy import PersonalData

    directory = OrganisationDirectory(store)
    a, b = f"org-{make_user(store)}", f"org-{make_user(store)}"
    directory.create(a, "A")
    directory.create(b, "B")

    def roster(org: str) -> int:
        return directory.get(org).roster  # type: ignore[union-attr]

    person = make_user(store, org_id=a)
    assert (roster(a), roster(b)) == (1, 0)  # joined A
    store.record_inference(person, InferredUpdate(factor_id="data_quality", value=40, confidence=0.7, rationale="x"))
    assert roster(a) == 1  # progress is not a change of who is in
    store.register_user(store.get_user(person).model_copy(update={"org_id": b}))  # type: ignore[union-attr]
    assert (roster(a), roster(b)) == (2, 1)  # left A, joined B
    store.register_user(store.get_user(person))  # type: ignore[arg-type]
    assert (roster(a), roster(b)) == (2, 1)  # registered again where they are: nothing changes

    stray = store.org_ref(a).collection("people").document(person)
    stray.set({"user_id": person, "total": "damaged"})  # a damaged stray row
    assert person not in {row.user_id for row in directory.rows(a)}  # left out of the pages
    assert store.rewrite_row(person, a) is None and not stray.get().exists
    assert roster(a) == 3  # the stray row was removed

    PersonalData(firestore_client).erase(person)
    assert roster(b) == 2


ROUNDS = 12


def _race(*steps) -> None:
    """Run the steps at the same moment on their own threads (two instances of the app)."""
    barrier = threading.Barrier(len(steps))

    def run(step) -> None:
        barrier.wait()
        step()

    threads = [threading.Thread(target=run, args=(step,)) for step in steps]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def test_taking_a_managers_role_away_never_undoes_their_unsubscribe(store, catalog, firestore_client):
    """The person is told "you are unsubscribed": whatever ran at the same time, they stay unsubscribed."""
    directory, other = OrganisationDirectory(store), FactorJournalStore(firestore_client, catalog)
    org = f"org-{uuid.uuid4().hex[:8]}"
    directory.create(org, "Race")
    for _ in range(ROUNDS):
        person = f"race-{uuid.uuid4().hex[:8]}"
        store.register_user(UserProfile(user_id=person, org_id=org, email="p@example.com"))
        directory.assign_manager(org, person)
        unsubscribe = partial(other.mail.opt_out, person, datetime.now(UTC))
        _race(partial(directory.remove_manager, org, person), unsubscribe)
        profile = store.get_user(person)
        assert profile is not None and profile.reminders_opt_out and profile.role == "member"
        assert person not in directory.get(org).managers  # type: ignore[union-attr]


def _assign_unless_refused(directory: OrganisationDirectory, org_id: str, person: str) -> None:
    with contextlib.suppress(FactorJournalError):  # refused: they already belong to another organisation
        directory.assign_manager(org_id, person)


def test_making_someone_a_manager_never_undoes_their_move(store, catalog, firestore_client):
    """A move and a manager assignment at once end as one of the two orders would: moved (and no manager of
    the old organisation) or refused."""
    directory, other = OrganisationDirectory(store), FactorJournalStore(firestore_client, catalog)
    a, b = f"org-a-{uuid.uuid4().hex[:8]}", f"org-b-{uuid.uuid4().hex[:8]}"
    directory.create(a, "A")
    directory.create(b, "B")
    for _ in range(ROUNDS):
        person = f"race-{uuid.uuid4().hex[:8]}"
        store.register_user(UserProfile(user_id=person, org_id=a, email="p@example.com"))

        _race(
            partial(_assign_unless_refused, directory, a, person),
            partial(other.register_user, UserProfile(user_id=person, org_id=b, email="p@example.com")),
        )
        assert store.get_user(person).org_id == b  # type: ignore[union-attr]
        assert person not in directory.get(a).managers  # type: ignore[union-attr]
        assert person not in {row.user_id for row in directory.rows(a)}
