"""The shape of the code, read from its imports (pure: the source is parsed, nothing is imported).

* The domain package's import graph has no cycle, counting imports inside functions too.
* The pure core (catalog, models, the state transitions, evidence, folding, composites, the summary, freshness,
  the say-back, guidance, the planner) imports nothing but the pure core: no repository, store, pipeline, runtime
  or extractor implementation.
* Only ``repositories/`` imports the Firestore SDK, in the package, the functions' entry points and the app.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "functions" / "factor_journal"

PURE_CORE = frozenset(
    f"factor_journal.{name}"
    for name in (
        "catalog", "catalog.models", "models", "errors", "documents", "validation", "vocabulary", "graph",
        "evidence", "transitions", "folding", "composites", "summary", "freshness", "sayback", "guidance", "planner",
        "conversation", "screening", "extraction.base",
    )
)  # fmt: skip


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path, modules: frozenset[str] = frozenset()) -> set[str]:
    """Every module ``path`` imports, anywhere in the file: ``from package import name`` imports the submodule
    ``package.name`` when ``modules`` has one, else ``package`` itself."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                found.add(submodule if submodule in modules else node.module)
    return found


def import_graph() -> nx.DiGraph:
    modules = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    names = frozenset(modules)
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        graph.add_edges_from((name, target) for target in imported(path, names) if target in names and target != name)
    return graph


def test_the_domain_package_has_no_import_cycle():
    cycles = [cycle for cycle in nx.simple_cycles(import_graph()) if len(cycle) > 1]
    assert cycles == [], "import cycles: " + "; ".join(" -> ".join(cycle) for cycle in cycles)


def test_the_pure_core_imports_only_the_pure_core():
    graph = import_graph()
    assert set(graph) >= PURE_CORE, PURE_CORE - set(graph)
    upward = sorted((m, t) for m in PURE_CORE for t in graph.successors(m) if t not in PURE_CORE)
    assert upward == [], f"the pure core imports above itself: {upward}"


def test_only_the_repositories_import_the_firestore_sdk():
    files = [*PACKAGE.rglob("*.py"), ROOT / "functions" / "main.py", *(ROOT / "dashboard").rglob("*.py")]
    offenders = sorted(
        str(path.relative_to(ROOT))
        for path in files
        if "repositories" not in path.parts
        and any(name.startswith(("google.cloud.firestore", "firebase_admin.firestore")) for name in imported(path))
    )
    assert offenders == [], f"the Firestore SDK imported outside repositories/: {offenders}"


def test_the_checks_see_a_cycle_and_an_upward_import():
    """The rules above would notice: a graph with a cycle has one, and a core module importing the store is upward."""
    graph = import_graph()
    graph.add_edge("factor_journal.models", "factor_journal.evidence")
    assert any(len(cycle) > 1 for cycle in nx.simple_cycles(graph))
    assert "factor_journal.store" not in PURE_CORE and "factor_journal.store" in graph
