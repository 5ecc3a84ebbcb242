"""The command line on the emulator: reprocess (idempotent, --failed-only), links, rebuild."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from doubles import ScriptedExtractor
from factor_journal import cli, runtime
from factor_journal.extraction.base import ExtractionError
from factor_journal.links import LinkSigner
from factor_journal.pipeline import TurnProcessor
from factor_journal.repositories.links import LinkRecords


@pytest.fixture
def cli_database(monkeypatch):
    monkeypatch.setenv("FJ_FIRESTORE_DATABASE", "fj-tests")
    monkeypatch.setenv("FJ_EXTRACTOR", "offline")
    runtime.reset()  # the settings too: the database comes from them
    yield
    runtime.reset()  # the settings too: the database comes from them


def test_reprocess_replays_failed_turns_once(cli_database, store, make_user, capsys):
    user = make_user(store)
    session = store.start_session(user)
    start = datetime.now(UTC) - timedelta(minutes=10)
    turns = [
        store.add_turn(user, session, "user", text, created_at=start + timedelta(seconds=30 * i))
        for i, text in enumerate(["Our data is all over the place.", "We have two data scientists."])
    ]
    failing = TurnProcessor(store, ScriptedExtractor(ExtractionError("Vertex AI answered 503")))
    for turn in turns:
        assert failing.process(user, session, turn).status == "failed"

    assert cli.main(["reprocess", "--user", user, "--failed-only"]) == 0
    assert "processed: 2" in capsys.readouterr().out
    assert all(store.turn_data(user, session, t)["extraction"]["status"] == "processed" for t in turns)
    entries = len(store.history(user, "data_quality").entries)

    assert cli.main(["reprocess", "--user", user]) == 0  # everything again: nothing new
    assert "duplicate: 2" in capsys.readouterr().out
    assert len(store.history(user, "data_quality").entries) == entries
    assert cli.main(["reprocess", "--user", user, "--failed-only"]) == 0
    assert "no turns to replay" in capsys.readouterr().out


def test_link_command_issues_a_working_link_and_refuses_unknown_users(
    cli_database, store, make_user, capsys, firestore_client
):
    user = make_user(store)
    assert cli.main(["link", "--user", user, "--session", "s1"]) == 0
    url = capsys.readouterr().out.strip()
    token = url.split("?t=")[1]
    claims = LinkSigner(LinkRecords(firestore_client)).verify(token)
    assert (claims.user_id, claims.session_id) == (user, "s1")
    assert cli.main(["revoke-link", token]) == 0
    with pytest.raises(Exception, match="withdrawn"):
        LinkSigner(LinkRecords(firestore_client)).verify(token)
    assert cli.main(["link", "--user", "nobody-at-all"]) == 2
    assert "unknown user" in capsys.readouterr().err


def test_rebuild_summary_repairs_a_damaged_summary(cli_database, store, make_user):
    from factor_journal.models import InferredUpdate

    user = make_user(store)
    store.record_inference(user, InferredUpdate(factor_id="data_quality", value=40, confidence=0.7, rationale="r"))
    good = store.summary(user)
    store.client.document(f"users/{user}/metadata/assessment").update(
        {"assessment_summary.overall.total_factors_assessed": 99}
    )
    assert cli.main(["rebuild-summary", "--user", user]) == 0
    assert store.summary(user).overall == good.overall


def test_reprocess_failed_only_picks_up_turns_left_in_limbo(cli_database, store, make_user, capsys):
    """A worker killed mid-way leaves a claim whose lease runs out; one killed before claiming leaves a
    turn with no status at all.  Both are unsettled, so --failed-only takes them."""
    from factor_journal.repositories.people import TurnRef

    user = make_user(store)
    session = store.start_session(user)
    start = datetime.now(UTC) - timedelta(hours=2)
    crashed = store.add_turn(user, session, "user", "Our data is all over the place.", created_at=start)
    never = store.add_turn(
        user, session, "user", "We have two data scientists.", created_at=start + timedelta(seconds=5)
    )
    done = store.add_turn(user, session, "user", "We use the cloud.", created_at=start + timedelta(seconds=9))
    TurnProcessor(store, ScriptedExtractor([])).process(user, session, done)
    store.ledger.claim(TurnRef(user, session, crashed), lease=timedelta(minutes=5), now=start)  # then died

    assert cli.main(["reprocess", "--user", user, "--failed-only"]) == 0
    assert "processed: 2" in capsys.readouterr().out
    statuses = {t: store.turn_data(user, session, t)["extraction"]["status"] for t in (crashed, never, done)}
    assert statuses == {crashed: "processed", never: "processed", done: "no_update"}


def test_refresh_rows_rebuilds_an_organisation_built_for_another_catalog_once(cli_database, store, make_user, capsys):
    """After a catalog change is deployed: the rows (and summaries) are rebuilt and the figures checked; run again,
    nothing is rebuilt."""
    from factor_journal.organisation import OrganisationDirectory

    org = f"org-cli-{make_user(store)}"
    OrganisationDirectory(store).create(org, "Refreshed")
    members = [make_user(store, org_id=org) for _ in range(3)]
    store.org_ref(org).update({"rows_stamp": "1/an-older-catalog/x"})
    assert cli.main(["refresh-rows", "--org", org]) == 0
    assert f"{org}: {len(members)} rows rebuilt" in capsys.readouterr().out
    assert OrganisationDirectory(store).get(org).rows_stamp != "1/an-older-catalog/x"
    damaged = f"{org}-damaged"
    store.org_ref(damaged).set({"managers": []})  # no name: skipped, the others refreshed
    try:
        assert cli.main(["refresh-rows"]) == 0  # every organisation: this one is up to date
    finally:
        store.org_ref(damaged).delete()
    said = capsys.readouterr()
    assert f"{org}: 0 rows rebuilt" in said.out and f"{damaged}: skipped" in said.err
    assert cli.main(["refresh-rows", "--org", "no-such-organisation"]) == 2
