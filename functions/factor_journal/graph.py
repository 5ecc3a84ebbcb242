"""The factor graph: dependencies between factors and the prerequisites of archetypes.

Nodes are factors and archetypes.  Edges point from what needs to what is
needed: ``factor -DEPENDS_ON-> factor``, ``composite -COMPOSED_OF-> factor`` and
``archetype -REQUIRES-> factor`` (the latter carrying the thresholds).
"""

from __future__ import annotations

from collections.abc import Mapping

import networkx as nx

from factor_journal.catalog import Catalog, Prerequisite, load_catalog
from factor_journal.models import FactorState

DEPENDS_ON = "depends_on"
COMPOSED_OF = "composed_of"
REQUIRES = "requires"


def meets(prerequisite: Prerequisite, state: FactorState | None) -> bool:
    """Whether a factor's state satisfies an archetype prerequisite."""
    return (
        state is not None
        and state.current_value is not None
        and state.current_value >= prerequisite.min_value
        and state.current_confidence >= prerequisite.min_confidence
    )


class FactorGraph:
    """Read-only navigation over the catalog's factors and archetypes."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        graph = nx.DiGraph()
        for factor in catalog.factors:
            graph.add_node(factor.id, kind="factor", category=factor.category, name=factor.name)
        for archetype in catalog.archetypes:
            graph.add_node(archetype.id, kind="archetype", name=archetype.name)
        for factor in catalog.factors:
            for dependency in factor.depends_on:
                graph.add_edge(factor.id, dependency, relation=DEPENDS_ON)
            for component, weight in (factor.composite or {}).items():
                graph.add_edge(factor.id, component, relation=COMPOSED_OF, weight=weight)
        for archetype in catalog.archetypes:
            for prerequisite in archetype.prerequisites:
                graph.add_edge(archetype.id, prerequisite.factor, relation=REQUIRES, prerequisite=prerequisite)
        self.graph = graph

    def _targets(self, node: str, relation: str) -> list[str]:
        return sorted(t for _, t, r in self.graph.out_edges(node, data="relation") if r == relation)

    def _sources(self, node: str, relation: str) -> list[str]:
        return sorted(s for s, _, r in self.graph.in_edges(node, data="relation") if r == relation)

    def depends_on(self, factor_id: str) -> list[str]:
        """Factors this factor directly depends on."""
        return self._targets(factor_id, DEPENDS_ON)

    def dependents(self, factor_id: str) -> list[str]:
        """Factors that directly depend on this one."""
        return self._sources(factor_id, DEPENDS_ON)

    def all_dependencies(self, factor_id: str) -> set[str]:
        """Every factor this one depends on, directly or through others."""
        dependency_graph = self.graph.edge_subgraph(
            (s, t) for s, t, r in self.graph.edges(data="relation") if r == DEPENDS_ON
        )
        return set(nx.descendants(dependency_graph, factor_id)) if factor_id in dependency_graph else set()

    def composites_of(self, factor_id: str) -> list[str]:
        """Composite factors that this factor is a component of."""
        return self._sources(factor_id, COMPOSED_OF)

    def archetypes_needing(self, factor_id: str) -> list[tuple[str, Prerequisite]]:
        """Archetypes with this factor as a prerequisite, with the threshold they ask."""
        return sorted(
            (source, data["prerequisite"])
            for source, _, data in self.graph.in_edges(factor_id, data=True)
            if data["relation"] == REQUIRES
        )

    def unlocks_if_improved(self, factor_id: str, states: Mapping[str, FactorState]) -> list[str]:
        """Archetypes blocked now that meeting this factor's threshold alone would unlock."""
        unlocked = []
        for archetype_id, _ in self.archetypes_needing(factor_id):
            archetype = self.catalog.archetype(archetype_id)
            unmet = [p.factor for p in archetype.prerequisites if not meets(p, states.get(p.factor))]
            if unmet == [factor_id]:
                unlocked.append(archetype_id)
        return unlocked

    def name(self, node_id: str) -> str:
        return self.graph.nodes[node_id]["name"]


_GRAPHS: dict[int, FactorGraph] = {}


def graph_for(catalog: Catalog | None = None) -> FactorGraph:
    """The graph of a catalog (default: the packaged one), built once per catalog."""
    catalog = catalog or load_catalog()
    graph = _GRAPHS.get(id(catalog))
    if graph is None or graph.catalog is not catalog:
        graph = _GRAPHS[id(catalog)] = FactorGraph(catalog)
    return graph
