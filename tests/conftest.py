"""Shared fixtures: every test talks to the real Firebase emulators started by `make test`.

Two Firestore databases of the same emulator keep tests apart: ``fj-tests``, where
no trigger listens (the pipeline is driven in-process, deterministically), and
``(default)``, where the deployed trigger runs in the Functions emulator
(end-to-end tests only).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from google.cloud import firestore

from factor_journal.catalog import Catalog, load_catalog
from factor_journal.models import UserProfile
from factor_journal.store import FactorJournalStore

PROJECT_ID = os.environ.get("GCLOUD_PROJECT", "demo-factor-journal")
FIXTURES = Path(__file__).parent / "fixtures"
# `make test` starts the emulators with FJ_UNCLAIMED_AFTER_SECONDS=5: the Functions emulator's worker, which inherits
# the environment, takes a turn no delivery claimed as lost after 5 s (tests/test_self_healing.py).  The tests' own
# process keeps the product's default (120 s): taken out of the environment here, before any setting is read.
WORKER_UNCLAIMED_AFTER = float(os.environ.pop("FJ_UNCLAIMED_AFTER_SECONDS", "") or 120)


def _emulator_host() -> str:
    host = os.environ.get("FIRESTORE_EMULATOR_HOST")
    if not host:
        pytest.exit(
            "FIRESTORE_EMULATOR_HOST is not set: run the tests with `make test`, which starts the "
            "Firebase Emulator Suite (or run pytest under `scripts/with-emulators.sh`).",
            returncode=2,
        )
    return host


TEST_DATABASE = "fj-tests"


def _fresh_client(database: str) -> firestore.Client:
    host = _emulator_host()
    httpx.delete(f"http://{host}/emulator/v1/projects/{PROJECT_ID}/databases/{database}/documents").raise_for_status()
    return firestore.Client(project=PROJECT_ID, database=database)


@pytest.fixture(scope="session")
def firestore_client() -> firestore.Client:
    """The emulator's ``fj-tests`` database: real Firestore, no triggers."""
    return _fresh_client(TEST_DATABASE)


@pytest.fixture(scope="session")
def trigger_client() -> firestore.Client:
    """The emulator's default database, where the Functions emulator's trigger listens."""
    return _fresh_client("(default)")


def own_database(prefix: str) -> firestore.Client:
    """A client on a database of the emulator of its own (named databases are created on first use):
    collection-group queries in it see only what its test wrote."""
    _emulator_host()
    return firestore.Client(project=PROJECT_ID, database=f"{prefix}-{uuid.uuid4().hex[:10]}")


@pytest.fixture
def database() -> firestore.Client:
    """This test's own emulator database."""
    return own_database("fj-own")


@pytest.fixture(scope="session")
def worker_unclaimed_after() -> float:
    """After how many seconds the Functions emulator's worker takes a turn no delivery claimed as lost."""
    return WORKER_UNCLAIMED_AFTER


@pytest.fixture(autouse=True)
def fresh_settings():
    """Settings are read once per process; a test that sets FJ_* variables sees them (and leaves none)."""
    from factor_journal.settings import settings

    settings.cache_clear()
    yield
    settings.cache_clear()


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return load_catalog()


@pytest.fixture(scope="session")
def small_catalog() -> Catalog:
    """A six-factor catalog with round thresholds, for exact rule tests."""
    return load_catalog(FIXTURES / "small_catalog.yaml")


@pytest.fixture
def store(firestore_client: firestore.Client, catalog: Catalog) -> FactorJournalStore:
    return FactorJournalStore(firestore_client, catalog)


@pytest.fixture(scope="module")
def ask_store(firestore_client: firestore.Client, catalog: Catalog) -> FactorJournalStore:
    """A store whose changes embed with the embedded model (WordLlama), for journals Ask searches by meaning (one per
    test module)."""
    from factor_journal.embedding import WordLlamaEmbedder

    store = FactorJournalStore(firestore_client, catalog)
    store.changes.embedder = WordLlamaEmbedder()
    return store


@pytest.fixture
def small_store(firestore_client: firestore.Client, small_catalog: Catalog) -> FactorJournalStore:
    return FactorJournalStore(firestore_client, small_catalog)


@pytest.fixture
def make_user(firestore_client: firestore.Client) -> Callable[..., str]:
    """Registers a fresh user (unique id, so tests never share state) and returns the id."""

    def make(store: FactorJournalStore, org_id: str | None = None, **profile: object) -> str:
        user_id = f"u-{uuid.uuid4().hex[:12]}"
        store.register_user(UserProfile(user_id=user_id, org_id=org_id, **profile))  # type: ignore[arg-type]
        return user_id

    return make


# Every query the code runs during the suite is recorded; the run fails if one lacks a declared
# composite index (see tests/index_audit.py and tests/test_indexes.py).
from index_audit import QueryRecorder, missing_indexes  # noqa: E402

QUERIES = QueryRecorder()


EMULATOR_FIXTURES = frozenset(
    {"firestore_client", "trigger_client", "store", "small_store", "make_user", "database", "instances"}
)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "emulator: needs the Firebase Emulator Suite (added automatically)")
    QUERIES.install()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests that use an emulator fixture (or a marker that implies the emulators) are marked
    ``emulator``; ``make test-fast`` runs the rest without starting any emulator."""
    for item in items:
        implied = {"functions", "browser"} & {m.name for m in item.iter_markers()}
        if implied or EMULATOR_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.emulator)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    QUERIES.uninstall()
    missing = missing_indexes(QUERIES.shapes)
    if missing:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line("Queries run without a declared composite index (firestore.indexes.json):", red=True)
            for line in missing:
                reporter.write_line(f"  {line}", red=True)
