"""The store is the one door to Firestore (pure: the source is parsed, nothing is imported).

Outside ``functions/factor_journal/repositories/`` and ``store.py`` (the door), no module of the package,
the functions' entry points or the app

* imports the Firestore SDK (``google.cloud.firestore*``, ``firebase_admin.firestore``) or the repositories'
  client module (``factor_journal.repositories.client``: the counted client, ``connect``, transactions);
* constructs a repository (a class of ``repositories/`` built over a client: ``Mail(...)``, ``People(...)``);
* reaches past the store's named facades to what lies behind them: ``store.client``, ``store.people``,
  ``store.paths``, ``store.org_ref``, ``store.turns`` or ``store.run_transaction``, whether the store is
  ``store``, ``self.store``, ``small_store`` or ``context.store()``.

Tests, benchmarks, the demo and scripts may still set documents up directly.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "functions" / "factor_journal"
REPOSITORIES = PACKAGE / "repositories"
DOOR = PACKAGE / "store.py"

FIRESTORE_SDK = ("google.cloud.firestore", "firebase_admin.firestore")
CLIENT_MODULE = "factor_journal.repositories.client"
BEHIND_THE_DOOR = frozenset({"client", "people", "_people", "paths", "org_ref", "turns", "run_transaction"})


def repository_classes() -> frozenset[str]:
    """Classes of ``repositories/`` built over a client: subclasses of ``Repository`` (and of those), and any
    class whose ``__init__`` takes a ``client``."""
    bases: dict[str, set[str]] = {}
    over_a_client: set[str] = set()
    for path in REPOSITORIES.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef):
                continue
            bases[node.name] = {ast.unparse(base).rsplit(".", 1)[-1] for base in node.bases}
            init = [item for item in node.body if isinstance(item, ast.FunctionDef) and item.name == "__init__"]
            if any(arg.arg == "client" for item in init for arg in item.args.args):
                over_a_client.add(node.name)
    found = set(over_a_client) | {"Repository"}
    while True:
        more = {name for name, parents in bases.items() if parents & found} - found
        if not more:
            return frozenset(found)
        found |= more


def _is_store(node: ast.expr) -> bool:
    """``store``, ``small_store``, ``self.store``, ``processor.store``, ``store()``, ``context.store()``."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Name):
        return node.id == "store" or node.id.endswith("_store")
    return isinstance(node, ast.Attribute) and node.attr == "store"


def offences(source: str, repositories: frozenset[str]) -> list[str]:
    """Every way ``source`` goes around the door, as ``line: what``."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        else:
            names = []
        for name in names:
            if name.startswith(FIRESTORE_SDK):
                found.append(f"{node.lineno}: imports the Firestore SDK ({name})")
                break
            if name == CLIENT_MODULE or name.startswith(CLIENT_MODULE + "."):
                found.append(f"{node.lineno}: imports the repositories' client module")
                break
        if isinstance(node, ast.Call):
            called = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
            if called in repositories:
                found.append(f"{node.lineno}: constructs the repository {called}")
        if isinstance(node, ast.Attribute) and node.attr in BEHIND_THE_DOOR and _is_store(node.value):
            found.append(f"{node.lineno}: reaches behind the store ({ast.unparse(node)})")
    return found


def outside_the_door() -> list[Path]:
    package = [path for path in PACKAGE.rglob("*.py") if REPOSITORIES not in path.parents and path != DOOR]
    return [*package, ROOT / "functions" / "main.py", *(ROOT / "dashboard").rglob("*.py")]


def test_nothing_outside_the_repositories_and_the_store_reaches_firestore():
    repositories = repository_classes()
    found = [
        f"{path.relative_to(ROOT)}:{offence}"
        for path in outside_the_door()
        for offence in offences(path.read_text(encoding="utf-8"), repositories)
    ]
    assert found == [], "Firestore reached around the store:\n" + "\n".join(found)


def test_the_repository_classes_are_recognised():
    expected = "People FactorChanges JournalReads JournalVectors OrganisationRecords Mail LinkRecords PersonalData"
    assert repository_classes() >= {*expected.split(), "NightlyRuns", "Paths", "CommitLeases"}
    assert not repository_classes() & {"TurnRef", "Claim", "MailDocument", "LinkRecord", "ErasureReport"}


def test_the_rule_catches_each_way_around_the_door():
    offending = """
from google.cloud import firestore
import google.cloud.firestore_v1.base_query
from firebase_admin import firestore as admin_firestore
from factor_journal.repositories.client import CountedClient
from factor_journal.repositories import client
from factor_journal.repositories.mail import Mail

def service(store, small_store, processor, context):
    Mail(store.client).opt_out("u", None)
    store.people.claim_turn(None)
    self.store.client.project
    processor.store.people.due_turns(None)
    context.store().client
    small_store.paths.user("u")
    store.org_ref("o")
    store.turns("u", "s")
    repositories.mail.Mail(object())
"""
    found = offences(offending, repository_classes())
    lines = sorted({int(offence.split(":")[0]) for offence in found})
    assert lines == [2, 3, 4, 5, 6, *range(10, 19)], found
    assert sum("constructs the repository Mail" in offence for offence in found) == 2


def test_the_rule_leaves_the_door_and_other_clients_alone():
    innocent = """
from firebase_functions import firestore_fn
from factor_journal.repositories.people import Claim, TurnRef
from factor_journal.repositories.mail import MailDocument

def service(store, self, response):
    store.ledger.claim(TurnRef("u", "s", "t"), lease=None)
    store.mail.opt_out("u", None)
    store.organisations.get("o")
    store.project
    self.client.models.generate_content(model="m", contents=[])
    response.client
"""
    assert offences(innocent, repository_classes()) == []
