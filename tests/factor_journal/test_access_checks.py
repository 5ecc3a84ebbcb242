"""Who a link lets in, re-checked on every call and cached for seconds (on the emulator)."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest

from doubles import Clock
from factor_journal.access import AccessChangedError, AccessChecker
from factor_journal.links import RECORD_TTL, LinkSigner, RevokedLinkError
from factor_journal.organisation import OrganisationDirectory
from factor_journal.repositories.links import LinkRecords


@pytest.fixture
def setup(firestore_client, small_store, make_user):
    clock = Clock()
    signer = LinkSigner(LinkRecords(firestore_client), secret="test-secret", clock=clock)
    directory = OrganisationDirectory(small_store)
    org = f"org-{uuid.uuid4().hex[:6]}"
    directory.create(org, "Checked")
    manager = make_user(small_store, org_id=org, display_name="Manager")
    directory.assign_manager(org, manager)
    return AccessChecker(signer, small_store), signer, clock, directory, org, manager


def test_a_check_is_cached_for_seconds_then_repeated(setup, small_store):
    access, signer, clock, directory, org, manager = setup
    token = signer.issue(manager, kind="manager", org_id=org)
    assert access.viewer(token).org_id == org
    small_store.stats.reset()
    assert access.viewer(token).kind == "manager"
    assert small_store.stats.reads == 0  # within the cache time: no reads
    clock.now += RECORD_TTL
    access.viewer(token)
    assert small_store.stats.reads == 2  # the managers list and the profile, once per few seconds


def test_removal_and_revocation_end_access_after_the_cache_time(setup, make_user, small_store):
    access, signer, clock, directory, org, manager = setup
    token = signer.issue(manager, kind="manager", org_id=org)
    access.viewer(token)
    directory.remove_manager(org, manager)
    clock.now += RECORD_TTL
    with pytest.raises(AccessChangedError):
        access.viewer(token)
    person = make_user(small_store, org_id=org)
    resume = signer.issue(person)
    assert access.viewer(resume).user_id == person
    signer.revoke(resume)
    clock.now += RECORD_TTL
    with pytest.raises(RevokedLinkError):
        access.viewer(resume)


def test_a_manager_link_to_an_organisation_whose_document_no_longer_reads_opens_nothing(setup, small_store):
    access, signer, clock, directory, org, manager = setup
    small_store.client.document(f"organisations/{org}").set({"managers": [manager]})  # its name lost: damaged
    with pytest.raises(AccessChangedError):
        access.viewer(signer.issue(manager, kind="manager", org_id=org))


def test_a_manager_link_for_an_organisation_the_list_does_not_name_opens_nothing(setup, small_store, make_user):
    access, signer, clock, directory, org, manager = setup
    other = f"org-{uuid.uuid4().hex[:6]}"
    directory.create(other, "Other")
    with pytest.raises(AccessChangedError):
        access.viewer(signer.issue(manager, kind="manager", org_id=other))
    with pytest.raises(AccessChangedError):
        access.viewer(signer.issue(manager, kind="manager", org_id=None))
    assert timedelta(0) < RECORD_TTL <= timedelta(seconds=10)
