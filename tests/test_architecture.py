"""The shape of the code, read from its imports (pure: the source is parsed, nothing is imported).

* The domain package's import graph (and the tools' above it) has no cycle, counting imports inside functions too.
* Every module of the package sits in exactly one layer of ``LAYERS`` and imports only its own layer or those
  below: the pure core, then compute without Firestore (extractors, embeddings, settings), the repositories,
  the store, the services, the entry points (runtime, CLI); the tools (``factor_journal_tools``: eval, training,
  catalog check) above them all.  A new module fails the test until it is given a layer.
* The pure core (catalog, models, the state transitions, evidence, folding, composites, the summary, the
  roll-up rows, freshness, the say-back, guidance, the planner) imports nothing but the pure core.
* The functions' entry points (``functions/main.py``) and the app (``dashboard/``) sit above the package: it
  imports neither; and nothing under ``functions/`` (what ``firebase deploy`` uploads) nor the app (whose image
  holds only the package) imports the tools.
* Only ``repositories/`` imports the Firestore SDK, in the package, the functions' entry points and the app.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "functions" / "factor_journal"
TOOLS = ROOT / "tools" / "factor_journal_tools"
ENTRY_POINTS = ROOT / "functions" / "main.py"
APP = ROOT / "dashboard"
FIRESTORE_SDK = ("google.cloud.firestore", "google.cloud.firestore_v1", "firebase_admin.firestore")


def _modules(names: str, package: str = "factor_journal") -> frozenset[str]:
    """The modules ``names`` (space-separated, relative to ``package``) by their full dotted names."""
    return frozenset(f"{package}.{name}" for name in names.split())


PURE_CORE = _modules("""
    catalog catalog.models models errors documents validation vocabulary graph evidence transitions folding composites
    summary rollup figures freshness sayback guidance planner conversation output_checks extraction.base page_models
    extraction.agreement
    questions.intent setaside team_export
""")

LAYERS: tuple[tuple[str, frozenset[str]], ...] = (
    # the package's and the extractors' __init__ only name what lives below them
    ("pure core", PURE_CORE | {"factor_journal", "factor_journal.extraction"}),
    (
        "compute without Firestore: extractors, embeddings, candidate selection, settings",
        _modules("""
            settings embedding candidates extraction.sentence_model extraction.gemini extraction.lexical
            extraction.linear extraction.listening extraction.listening_phrases extraction.offline extraction.prompts
            extraction.quotes extraction.rules_answers extraction.rules_patterns extraction.rules_text
            extraction.semantic extraction.semantic_feature_names extraction.semantic_features extraction.signals
        """),
    ),
    (
        "repositories: the only holders of a Firestore client",
        {"factor_journal.repositories"}
        | _modules("""
            repositories.changes repositories.client repositories.journal repositories.links repositories.locks
            repositories.mail repositories.nightly_runs repositories.organisations repositories.paths
            repositories.people repositories.personal_data repositories.rows repositories.set_aside
            repositories.vectors repositories.ledger repositories.row_rewrites
        """),
    ),
    ("the store", _modules("store")),
    (
        "services: a turn's pipeline, the nightly job and its mail, organisations, links and their renewal, privacy, "
        "questions (Ask why: what a question is about, the evidence found and its context, the answer composed)",
        _modules("""
            pipeline nightly upkeep reminders organisation links access renewal privacy questions questions.search
            questions.context questions.routing questions.composing
        """),
    ),
    ("entry points: the functions' runtime and the command line", _modules("runtime cli __main__")),
    (
        "tools: eval, training, catalog check",
        {TOOLS.name}
        | _modules(
            """evaluate corpus report train catalog_check screen_check browser vertex_stand_in seat seat_run seat_demo
            emulator_hub torn_margin ask_sets seat_ask scorings label_audit""",
            TOOLS.name,
        ),
    ),
)


def module_name(path: Path, package: Path = PACKAGE) -> str:
    """The dotted name of ``path``, a file of the package folder ``package``."""
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path, modules: frozenset[str] = frozenset()) -> set[str]:
    """Every module ``path`` imports, anywhere in the file: ``from package import name`` imports the submodule
    ``package.name`` when ``modules`` has one, else ``package`` itself; the dotted ``package.name`` is listed
    either way, so ``from google.cloud import firestore`` counts as importing ``google.cloud.firestore``."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                found.update((submodule,) if submodule in modules else (submodule, node.module))
    return found


def import_graph(folders: Iterable[Path] = (PACKAGE, TOOLS)) -> nx.DiGraph:
    """The imports among the modules of ``folders`` (the package and the tools)."""
    modules = {module_name(path, folder): path for folder in folders for path in folder.rglob("*.py")}
    names = frozenset(modules)
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        graph.add_edges_from((name, target) for target in imported(path, names) if target in names and target != name)
    return graph


def layer_of(layers: tuple[tuple[str, frozenset[str]], ...] = LAYERS) -> dict[str, int]:
    return {module: number for number, (_, modules) in enumerate(layers) for module in modules}


def unplaced(graph: nx.DiGraph, layers: tuple[tuple[str, frozenset[str]], ...] = LAYERS) -> list[str]:
    """The modules of ``graph`` no layer holds, and the modules two layers claim."""
    claimed = [module for _, modules in layers for module in modules]
    twice = {module for module in claimed if claimed.count(module) > 1}
    return sorted((set(graph) - set(claimed)) | twice)


def upward(graph: nx.DiGraph, layers: tuple[tuple[str, frozenset[str]], ...] = LAYERS) -> list[str]:
    """Every import from a module to one in a higher layer, as readable lines."""
    layer = layer_of(layers)
    return sorted(
        f"{source} ({layers[layer[source]][0]}) imports {target} ({layers[layer[target]][0]})"
        for source, target in graph.edges
        if source in layer and target in layer and layer[target] > layer[source]
    )


def importers_of(prefixes: tuple[str, ...], files: Iterable[Path]) -> list[str]:
    """The files among ``files`` that import any module named by or under ``prefixes``."""
    return sorted(
        str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
        for path in files
        if any(name == prefix or name.startswith(f"{prefix}.") for name in imported(path) for prefix in prefixes)
    )


def test_the_domain_package_has_no_import_cycle():
    cycles = [cycle for cycle in nx.simple_cycles(import_graph()) if len(cycle) > 1]
    assert cycles == [], "import cycles: " + "; ".join(" -> ".join(cycle) for cycle in cycles)


def test_every_module_sits_in_exactly_one_layer():
    graph = import_graph()
    assert unplaced(graph) == [], "give each module one layer in tests/test_architecture.py's LAYERS"
    assert set(layer_of()) == set(graph), f"LAYERS names modules that do not exist: {set(layer_of()) - set(graph)}"


def test_no_import_runs_upward():
    assert upward(import_graph()) == []


def test_the_pure_core_imports_only_the_pure_core():
    graph = import_graph()
    assert set(graph) >= PURE_CORE, PURE_CORE - set(graph)
    upward = sorted((m, t) for m in PURE_CORE for t in graph.successors(m) if t not in PURE_CORE)
    assert upward == [], f"the pure core imports above itself: {upward}"


def test_the_entry_points_the_app_and_the_tools_sit_above_the_package():
    package = [*PACKAGE.rglob("*.py")]
    assert importers_of(("main", "dashboard"), [*package, *TOOLS.rglob("*.py")]) == []
    deployed = [*(ROOT / "functions").rglob("*.py")]
    deployed = [path for path in deployed if "venv" not in path.relative_to(ROOT).parts]
    assert ENTRY_POINTS in deployed and set(package) <= set(deployed)
    assert importers_of((TOOLS.name,), [*deployed, *APP.rglob("*.py")]) == []


def test_only_the_repositories_import_the_firestore_sdk():
    files = [*PACKAGE.rglob("*.py"), ENTRY_POINTS, *APP.rglob("*.py")]
    offenders = [path for path in importers_of(FIRESTORE_SDK, files) if "repositories" not in Path(path).parts]
    assert offenders == [], f"the Firestore SDK imported outside repositories/: {offenders}"


def test_the_checks_see_a_cycle_an_upward_import_a_module_without_a_layer_and_a_tool_imported(tmp_path):
    """The rules above would notice: a graph with a cycle has one, a core module importing the store or an
    extractor importing a repository runs upward, a new module is unplaced, and a deployed file importing the
    tools is found."""
    graph = import_graph()
    graph.add_edge("factor_journal.models", "factor_journal.evidence")
    assert any(len(cycle) > 1 for cycle in nx.simple_cycles(graph))

    graph = import_graph()
    assert "factor_journal.store" not in PURE_CORE and "factor_journal.store" in graph
    graph.add_edge("factor_journal.folding", "factor_journal.store")
    graph.add_edge("factor_journal.extraction.semantic", "factor_journal.repositories.vectors")
    graph.add_edge("factor_journal.runtime", "factor_journal_tools.evaluate")
    assert [line.split()[0] for line in upward(graph)] == [
        "factor_journal.extraction.semantic",
        "factor_journal.folding",
        "factor_journal.runtime",
    ]

    graph.add_node("factor_journal.newcomer")
    assert unplaced(graph) == ["factor_journal.newcomer"]
    assert unplaced(import_graph(), (*LAYERS, ("again", _modules("store")))) == ["factor_journal.store"]

    deployed = tmp_path / "main.py"
    deployed.write_text("def run():\n    from factor_journal_tools.evaluate import evaluate\n", encoding="utf-8")
    sdk = tmp_path / "page.py"
    sdk.write_text("from google.cloud import firestore\n", encoding="utf-8")
    assert importers_of((TOOLS.name,), [ENTRY_POINTS, deployed]) == [str(deployed)]
    assert importers_of(FIRESTORE_SDK, [sdk]) == [str(sdk)]


MAX_MODULE_LINES = 600  # issue 46: a module past this holds more than one concern; split it along its sections
CODE_ROOTS = ("functions/factor_journal", "dashboard", "tools/factor_journal_tools", "bench", "demo", "scripts")


def modules_over(limit: int, roots: Sequence[Path]) -> dict[str, int]:
    """The Python modules under ``roots`` longer than ``limit`` lines, with their lengths."""
    lengths = {
        path: len(path.read_text(encoding="utf-8").splitlines()) for root in roots for path in root.rglob("*.py")
    }
    return {str(path): lines for path, lines in lengths.items() if lines > limit}


def test_no_module_of_the_code_is_over_600_lines():
    assert modules_over(MAX_MODULE_LINES, [ROOT / root for root in CODE_ROOTS]) == {}


def test_the_line_limit_names_a_module_over_it(tmp_path):
    (tmp_path / "short.py").write_text("x = 1\n" * MAX_MODULE_LINES)
    (tmp_path / "long.py").write_text("x = 1\n" * (MAX_MODULE_LINES + 1))
    assert modules_over(MAX_MODULE_LINES, [tmp_path]) == {str(tmp_path / "long.py"): MAX_MODULE_LINES + 1}
