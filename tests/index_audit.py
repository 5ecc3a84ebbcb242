"""Which composite indexes the code's queries need, checked against firestore.indexes.json.

The emulator answers any query; production refuses one whose composite index is
not declared.  ``QueryRecorder`` records every query the code runs (it wraps
``Query.stream``); ``missing_indexes`` names each recorded query no declared
index serves, by Firestore's rules:

* a query on one field (filters and orders, ``__name__`` aside) needs none;
* a query with only equality filters (``==``, ``array-contains``, ``in``) and no order needs none (index
  merging);
* otherwise an index on that collection must list the equality fields first
  (any order), then the inequality and order fields in order with the query's
  directions; or, with index merging, several such indexes whose equality fields
  together are the query's, each followed by the same inequality and order fields;
* a nearest-neighbour (vector) query always needs a vector index: its
  pre-filter's equality fields first (any order), then the vector field with a
  ``vectorConfig`` of the query vector's dimension, in the query's scope
  (``QueryRecorder`` records ``VectorQuery.stream`` too).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from pathlib import Path

from google.cloud.firestore_v1 import query as query_module
from google.cloud.firestore_v1 import vector_query as vector_query_module
from google.cloud.firestore_v1.types import StructuredQuery

INDEXES = Path(__file__).resolve().parents[1] / "firestore.indexes.json"
# ``in`` is a disjunction of equalities: Firestore serves it with the equality's index
EQUALITY = {
    StructuredQuery.FieldFilter.Operator.EQUAL,
    StructuredQuery.FieldFilter.Operator.ARRAY_CONTAINS,
    StructuredQuery.FieldFilter.Operator.IN,
}


@dataclass(frozen=True)
class QueryShape:
    collection: str
    collection_group: bool
    equalities: frozenset[str]
    ordered: tuple[tuple[str, str], ...]  # (field, ASCENDING|DESCENDING) after the equalities
    vector: tuple[str, int] | None = None  # a nearest-neighbour query: (vector field, dimension)

    def describe(self) -> str:
        parts = [f"{f} ==" for f in sorted(self.equalities)] + [f"{f} {d}" for f, d in self.ordered]
        if self.vector is not None:
            parts.append(f"{self.vector[0]} nearest ({self.vector[1]}-d)")
        return f"{self.collection}: " + ", ".join(parts)


def _filters(proto: object) -> list[object]:
    if isinstance(proto, StructuredQuery.CompositeFilter):
        return [
            f for sub in proto.filters for f in _filters(sub.field_filter or sub.unary_filter or sub.composite_filter)
        ]
    return [proto]


def shape_of(query: query_module.Query) -> QueryShape:
    equalities: set[str] = set()
    inequalities: list[str] = []
    for raw in query._field_filters:
        for item in _filters(raw):
            if isinstance(item, StructuredQuery.UnaryFilter):
                equalities.add(item.field.field_path)  # IS NULL / IS NAN are equalities
            elif item.op in EQUALITY:
                equalities.add(item.field.field_path)
            else:
                inequalities.append(item.field.field_path)
    ordered: list[tuple[str, str]] = []
    for order in query._orders:
        field = order.field.field_path
        if field != "__name__" and field not in equalities:
            ordered.append((field, StructuredQuery.Direction(order.direction).name))
    for field in inequalities:
        if field not in [f for f, _ in ordered]:
            ordered.append((field, "ASCENDING"))
    return QueryShape(query._parent.id, bool(query._all_descendants), frozenset(equalities), tuple(ordered))


def vector_shape_of(query: vector_query_module.VectorQuery) -> QueryShape:
    """A nearest-neighbour query's shape: its pre-filter's, with the vector field and dimension."""
    inner = shape_of(query._nested_query)
    dimension = len(query._query_vector.to_map_value()["value"]) if query._query_vector is not None else 0
    return QueryShape(
        inner.collection, inner.collection_group, inner.equalities, inner.ordered, (str(query._vector_field), dimension)
    )


def needs_composite(shape: QueryShape) -> bool:
    if shape.vector is not None:
        return True
    fields = set(shape.equalities) | {f for f, _ in shape.ordered}
    if len(fields) <= 1:
        return False
    return bool(shape.ordered)


def declared(path: Path = INDEXES) -> list[dict]:
    return json.loads(path.read_text())["indexes"]


def served_by(shape: QueryShape, index: dict) -> bool:
    scope = "COLLECTION_GROUP" if shape.collection_group else "COLLECTION"
    if index["collectionGroup"] != shape.collection or index.get("queryScope", "COLLECTION") != scope:
        return False
    if shape.vector is not None:
        *head, last = index["fields"]
        config = last.get("vectorConfig")
        return (
            not shape.ordered
            and config is not None
            and (last["fieldPath"], int(config.get("dimension", 0))) == shape.vector
            and {f["fieldPath"] for f in head} == set(shape.equalities)
            and len(head) == len(shape.equalities)
        )
    if any("vectorConfig" in f for f in index["fields"]):
        return False
    fields = [(f["fieldPath"], f.get("order", "ASCENDING")) for f in index["fields"]]
    head, tail = fields[: len(shape.equalities)], fields[len(shape.equalities) :]
    return {f for f, _ in head} == set(shape.equalities) and tuple(tail) == shape.ordered


def served_by_merging(shape: QueryShape, indexes: list[dict]) -> bool:
    """Firestore's index merging: indexes on the query's collection, each listing some of its equality fields
    and then exactly its inequality and order fields, whose equality fields together are all of the query's."""
    if shape.vector is not None or not shape.equalities:
        return False
    covered: set[str] = set()
    for index in indexes:
        scope = "COLLECTION_GROUP" if shape.collection_group else "COLLECTION"
        if index["collectionGroup"] != shape.collection or index.get("queryScope", "COLLECTION") != scope:
            continue
        fields = [(f["fieldPath"], f.get("order", "ASCENDING")) for f in index["fields"]]
        head, tail = fields[: len(fields) - len(shape.ordered)], fields[len(fields) - len(shape.ordered) :]
        heads = {f for f, _ in head}
        if head and tuple(tail) == shape.ordered and heads <= shape.equalities:
            covered |= heads
    return covered == set(shape.equalities)


def declared_overrides(path: Path = INDEXES) -> list[dict]:
    return json.loads(path.read_text()).get("fieldOverrides", [])


def needs_group_override(shape: QueryShape) -> bool:
    """A collection-group query on one field needs that field's single-field index enabled for the group
    (Firestore creates single-field indexes for collection scope only)."""
    fields = set(shape.equalities) | {f for f, _ in shape.ordered}
    return shape.collection_group and len(fields) == 1  # none: a name-ordered scan, always served


def served_by_override(shape: QueryShape, override: dict) -> bool:
    fields = sorted(set(shape.equalities) | {f for f, _ in shape.ordered})
    direction = shape.ordered[0][1] if shape.ordered else "ASCENDING"
    return (
        override["collectionGroup"] == shape.collection
        and fields == [override["fieldPath"]]
        and any(i.get("queryScope") == "COLLECTION_GROUP" and i.get("order") == direction for i in override["indexes"])
    )


def missing_indexes(
    shapes: set[QueryShape], indexes: list[dict] | None = None, overrides: list[dict] | None = None
) -> list[str]:
    indexes = declared() if indexes is None else indexes
    overrides = declared_overrides() if overrides is None else overrides
    missing = [
        s.describe()
        for s in shapes
        if needs_composite(s) and not any(served_by(s, i) for i in indexes) and not served_by_merging(s, indexes)
    ]
    missing += [
        f"{s.describe()} (collection group: needs a fieldOverride)"
        for s in shapes
        if needs_group_override(s) and not any(served_by_override(s, o) for o in overrides)
    ]
    return sorted(missing)


class QueryRecorder:
    """Records the shape of every query streamed while installed (thread-safe)."""

    def __init__(self) -> None:
        self.shapes: set[QueryShape] = set()
        self._lock = threading.Lock()
        self._original = query_module.Query.stream
        self._original_vector = vector_query_module.VectorQuery.stream

    def install(self) -> None:
        recorder, original = self, self._original

        def stream(query: query_module.Query, *args: object, **kwargs: object):  # type: ignore[no-untyped-def]
            with recorder._lock:
                recorder.shapes.add(shape_of(query))
            return original(query, *args, **kwargs)

        query_module.Query.stream = stream  # type: ignore[method-assign]
        original_vector = self._original_vector

        def vector_stream(query: vector_query_module.VectorQuery, *args: object, **kwargs: object):  # type: ignore[no-untyped-def]
            with recorder._lock:
                recorder.shapes.add(vector_shape_of(query))
            return original_vector(query, *args, **kwargs)

        vector_query_module.VectorQuery.stream = vector_stream  # type: ignore[method-assign]

    def uninstall(self) -> None:
        query_module.Query.stream = self._original  # type: ignore[method-assign]
        vector_query_module.VectorQuery.stream = self._original_vector  # type: ignore[method-assign]
