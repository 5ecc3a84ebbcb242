"""Pydantic schema of the factor catalog and its loader.

The catalog is data (``factors.yaml`` beside this module), versioned, and
validated in full when loaded: every reference resolves, every threshold lies
on its factor's scale, the dependency graph has no cycle, and decision tiers
are ordered.  A catalog that loads is safe for the rest of the domain to trust.
"""

from __future__ import annotations

import math
import re
from enum import StrEnum
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any

import networkx as nx
import yaml
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator, model_validator

DEFAULT_CATALOG_PATH = Path(__file__).with_name("factors.yaml")

_ID_PATTERN = r"^[a-z][a-z0-9_]*$"
Identifier = Annotated[str, Field(pattern=_ID_PATTERN, max_length=64)]


class CatalogError(ValueError):
    """The catalog file is missing, unreadable or inconsistent."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Level(StrEnum):
    """Coarse rubric level; the catalog maps each level to a value on the scale."""

    low = "low"
    mid = "mid"
    high = "high"


BAND_FLOORS: dict[Level, float] = {Level.mid: 40.0, Level.high: 70.0}  # on 0-100: low 0-39, mid 40-69, high 70-100


def band_of(value: float) -> Level:
    """The band a value on the 0-100 scale falls in: low below 40, mid below 70, high from 70.

    The one definition of a band: the eval's labels, the extractors and the pages all read it.
    """
    return Level.low if value < BAND_FLOORS[Level.mid] else Level.mid if value < BAND_FLOORS[Level.high] else Level.high


_DAYS_PER_UNIT = {"day": 1.0, "week": 7.0, "month": 365.25 / 12, "year": 365.25}
_HALF_LIFE_TEXT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(day|week|month|year)s?\s*$", re.IGNORECASE)
NEVER = "never"


class HalfLife(_Strict):
    """How long until what was said about a factor counts for half as much: ``days`` (None: it never ages).

    Written in the catalog as ``never`` or ``<number> days|weeks|months|years`` ("6 months", "18 months");
    a bare number, a unit it does not know, zero, a negative length or more than a century is refused."""

    text: str
    days: float | None

    @property
    def never(self) -> bool:
        return self.days is None


def parse_half_life(raw: Any) -> Any:
    """A half-life from the catalog's words (see ``HalfLife``); ``ValueError`` saying what is accepted."""
    if raw is None or isinstance(raw, HalfLife | dict):
        return raw
    accepted = "expected 'never' or '<number> days|weeks|months|years' (e.g. '6 months')"
    if not isinstance(raw, str):
        raise ValueError(f"half-life {raw!r} has no unit: {accepted}")
    if raw.strip().casefold() == NEVER:
        return HalfLife(text=NEVER, days=None)
    match = _HALF_LIFE_TEXT.match(raw)
    if match is None:
        raise ValueError(f"half-life {raw!r} is not understood: {accepted}")
    days = float(match.group(1)) * _DAYS_PER_UNIT[match.group(2).lower()]
    if not 1.0 <= days <= 100 * 365.25 or not math.isfinite(days):
        raise ValueError(f"half-life {raw!r} must lie between 1 day and 100 years (or be 'never')")
    return HalfLife(text=raw.strip(), days=days)


HalfLifeField = Annotated[HalfLife, BeforeValidator(parse_half_life)]


class Freshness(_Strict):
    """How what was said ages (docs/freshness.md): versioned on its own, since ageing never changes what a
    turn says (the extractor, trained against the catalog's ``version``, is unaffected)."""

    version: str = Field(min_length=1)
    default_half_life: HalfLifeField = Field(description="For a category that names none.")
    recheck_below: float = Field(
        gt=0, lt=1, description="An answer whose confidence time has taken below this is due for a re-check."
    )


class Scale(_Strict):
    min: float = 0
    max: float = 100

    @model_validator(mode="after")
    def _ordered(self) -> Scale:
        if self.min >= self.max:
            raise ValueError(f"scale min {self.min} must be below max {self.max}")
        return self

    def contains(self, value: float) -> bool:
        return self.min <= value <= self.max


class Rubric(_Strict):
    """What low, mid and high look like for a factor, in words a person can check."""

    low: str = Field(min_length=1)
    mid: str = Field(min_length=1)
    high: str = Field(min_length=1)


class Cue(_Strict):
    """A phrase whose presence in a user's words suggests a level of the factor.

    ``negated_level`` applies when the phrase is negated ("we don't have a data
    catalog"); when absent, negation flips high and low and turns mid into low.
    """

    phrase: str = Field(min_length=2)
    level: Level
    negated_level: Level | None = None


class NumericBand(_Strict):
    """Counts up to ``max`` (inclusive) suggest ``level``; the last band has no max."""

    max: float | None = None
    level: Level


class NumericCue(_Strict):
    """A count of things ("5 different systems") that suggests a level by bands."""

    nouns: list[str] = Field(min_length=1)
    bands: list[NumericBand] = Field(min_length=1)

    @model_validator(mode="after")
    def _bands_ascending(self) -> NumericCue:
        bounded = [band.max for band in self.bands[:-1]]
        if any(bound is None for bound in bounded):
            raise ValueError("only the last numeric band may omit max")
        if bounded != sorted(bounded):  # type: ignore[type-var]
            raise ValueError("numeric bands must be in ascending order of max")
        return self


class Factor(_Strict):
    id: Identifier
    name: str = Field(min_length=1)
    category: Identifier
    description: str = ""
    scale: Scale = Scale()
    rubric: Rubric
    elicitation_questions: list[str] = Field(min_length=1)
    cues: list[Cue] = Field(default_factory=list)
    numeric_cues: list[NumericCue] = Field(default_factory=list)
    depends_on: list[Identifier] = Field(default_factory=list)
    boundaries: dict[Identifier, str] = Field(
        default_factory=dict,
        description=(
            "Neighbouring factor id -> what belongs to that neighbour rather than here, in words that complete "
            "'<this> is <neighbour>' (shown to extractors and readers). A boundary is declared from both sides."
        ),
    )
    composite: dict[Identifier, float] | None = Field(
        default=None,
        description="For a derived factor: component factor id -> weight. Never asked, never inferred.",
    )
    half_life: HalfLifeField | None = Field(
        default=None, description="Overrides the category's half-life (a composite ages with its components)."
    )

    @field_validator("composite")
    @classmethod
    def _positive_weights(cls, weights: dict[str, float] | None) -> dict[str, float] | None:
        if weights is not None:
            if not weights:
                raise ValueError("a composite needs at least one component")
            if any(weight <= 0 for weight in weights.values()):
                raise ValueError("composite weights must be positive")
        return weights

    @property
    def is_composite(self) -> bool:
        return self.composite is not None


class Category(_Strict):
    id: Identifier
    name: str = Field(min_length=1)
    description: str = ""
    half_life: HalfLifeField | None = None


class Prerequisite(_Strict):
    factor: Identifier
    min_value: float
    min_confidence: float = Field(ge=0, le=1)


class Archetype(_Strict):
    """A kind of AI project the user can evaluate once its prerequisites are met."""

    id: Identifier
    name: str = Field(min_length=1)
    description: str = ""
    prerequisites: list[Prerequisite] = Field(min_length=1)


class DecisionTier(_Strict):
    """A decision the user is ready to take, unlocked by overall completeness and confidence."""

    id: Identifier
    name: str = Field(min_length=1)
    budget: str = Field(description="The budget of decisions at this tier, in words, e.g. '< €25k'.")
    min_completeness: float = Field(ge=0, le=1)
    min_avg_confidence: float = Field(ge=0, le=1)


class Catalog(_Strict):
    version: str = Field(min_length=1)
    levels: dict[Level, float] = Field(
        default_factory=lambda: {Level.low: 20.0, Level.mid: 50.0, Level.high: 80.0},
        description="The value a rubric level stands for on a 0-100 scale; rescaled per factor.",
    )
    categories: list[Category] = Field(min_length=1)
    factors: list[Factor] = Field(min_length=1)
    archetypes: list[Archetype] = Field(default_factory=list)
    decision_tiers: list[DecisionTier] = Field(min_length=1)
    freshness: Freshness = Field(
        default_factory=lambda: Freshness(
            version="default", default_half_life=HalfLife(text="12 months", days=365.25), recheck_below=0.5
        )
    )

    @model_validator(mode="after")
    def _consistent(self) -> Catalog:
        problems: list[str] = []
        for kind, items in (
            ("category", self.categories),
            ("factor", self.factors),
            ("archetype", self.archetypes),
            ("decision tier", self.decision_tiers),
        ):
            seen: set[str] = set()
            for item in items:
                if item.id in seen:
                    problems.append(f"duplicate {kind} id {item.id!r}")
                seen.add(item.id)

        category_ids = {category.id for category in self.categories}
        factors = {factor.id: factor for factor in self.factors}
        for factor in self.factors:
            if factor.category not in category_ids:
                problems.append(f"factor {factor.id!r} has unknown category {factor.category!r}")
            for dependency in factor.depends_on:
                if dependency not in factors:
                    problems.append(f"factor {factor.id!r} depends on unknown factor {dependency!r}")
                elif dependency == factor.id:
                    problems.append(f"factor {factor.id!r} depends on itself")
            for neighbour in factor.boundaries:
                if neighbour not in factors or neighbour == factor.id:
                    problems.append(f"factor {factor.id!r} has a boundary with unknown factor {neighbour!r}")
                elif factor.id not in factors[neighbour].boundaries:
                    problems.append(
                        f"factor {factor.id!r} has a boundary with {neighbour!r} but {neighbour!r} has none with it: "
                        "say from both sides what belongs where"
                    )
            if factor.is_composite and factor.half_life is not None:
                problems.append(f"composite {factor.id!r} has a half-life: a composite ages with its components")
            for component in factor.composite or {}:
                if component not in factors:
                    problems.append(f"composite {factor.id!r} has unknown component {component!r}")
                elif factors[component].is_composite:
                    problems.append(f"composite {factor.id!r} nests composite {component!r}")
        for archetype in self.archetypes:
            for prerequisite in archetype.prerequisites:
                needed = factors.get(prerequisite.factor)
                if needed is None:
                    problems.append(f"archetype {archetype.id!r} needs unknown factor {prerequisite.factor!r}")
                elif not needed.scale.contains(prerequisite.min_value):
                    problems.append(
                        f"archetype {archetype.id!r}: min_value {prerequisite.min_value} "
                        f"is off the scale of {needed.id!r}"
                    )
        tiers = self.decision_tiers
        for lower, higher in zip(tiers, tiers[1:], strict=False):
            if higher.min_completeness < lower.min_completeness or higher.min_avg_confidence < lower.min_avg_confidence:
                problems.append(f"decision tier {higher.id!r} asks less than the tier below it")
        if tiers and (tiers[0].min_completeness, tiers[0].min_avg_confidence) != (0, 0):
            problems.append(f"the first decision tier {tiers[0].id!r} must have no thresholds")

        if not problems:
            graph = nx.DiGraph()
            graph.add_edges_from((f.id, d) for f in self.factors for d in f.depends_on)
            graph.add_edges_from((f.id, c) for f in self.factors for c in (f.composite or {}))
            if not nx.is_directed_acyclic_graph(graph):
                cycle = " -> ".join(edge[0] for edge in nx.find_cycle(graph))
                problems.append(f"factor dependencies form a cycle: {cycle}")
        if problems:
            raise ValueError("; ".join(problems))
        return self

    # Lookups -----------------------------------------------------------------

    def factor(self, factor_id: str) -> Factor:
        """The factor with this id; ``KeyError`` when there is none."""
        return self._factor_index()[factor_id]

    def has_factor(self, factor_id: str) -> bool:
        return factor_id in self._factor_index()

    def archetype(self, archetype_id: str) -> Archetype:
        return {archetype.id: archetype for archetype in self.archetypes}[archetype_id]

    def category(self, category_id: str) -> Category:
        return {category.id: category for category in self.categories}[category_id]

    def factors_named_in(self, text: str) -> list[str]:
        """The factors a person's text names, in catalog order: by id, by name, or by one of their cue phrases of
        several words ("data catalog"), whole words only, spaces, "_" and "-" alike, any case."""
        flat = " ".join(text.lower().split())
        return [
            factor.id
            for factor in self.factors
            if _names_any(flat, [factor.id, factor.name, *(cue.phrase for cue in factor.cues if " " in cue.phrase)])
        ]

    def archetypes_named_in(self, text: str) -> list[str]:
        """The capability archetypes a text names (by id or name, as ``factors_named_in``), in catalog order."""
        flat = " ".join(text.lower().split())
        return [archetype.id for archetype in self.archetypes if _names_any(flat, [archetype.id, archetype.name])]

    @property
    def assessable_factors(self) -> list[Factor]:
        """Factors that are asked about and inferred (every factor but the composites)."""
        return [factor for factor in self.factors if not factor.is_composite]

    @property
    def composite_factors(self) -> list[Factor]:
        return [factor for factor in self.factors if factor.is_composite]

    def half_life(self, factor_id: str) -> HalfLife:
        """How fast what was said about a factor ages: its own half-life, else its category's, else the default.

        (A composite has none of its own: it ages with its components, see ``freshness``.)"""
        found = self.__dict__.get("_half_lives")
        if found is None:
            categories = {category.id: category.half_life for category in self.categories}
            found = {
                factor.id: factor.half_life or categories.get(factor.category) or self.freshness.default_half_life
                for factor in self.factors
            }
            object.__setattr__(self, "_half_lives", found)  # frozen model: cache once
        if factor_id not in found:
            raise KeyError(factor_id)
        return found[factor_id]

    def ageing_days(self) -> dict[str, float | None]:
        """Every assessable factor's half-life in days (None: never ages); composites are absent (they age
        with their components).  Cached: read for every answer of every person on a team page."""
        found = self.__dict__.get("_ageing_days")
        if found is None:
            found = {factor.id: self.half_life(factor.id).days for factor in self.assessable_factors}
            object.__setattr__(self, "_ageing_days", found)  # frozen model: cache once
        return found

    def level_value(self, factor_id: str, level: Level) -> float:
        """The value a rubric level stands for on this factor's scale."""
        scale = self.factor(factor_id).scale
        fraction = self.levels[level] / 100.0
        return round(scale.min + fraction * (scale.max - scale.min), 2)

    def band(self, factor_id: str, value: float) -> Level:
        """The band a value falls in on this factor's scale (``band_of`` on the scale rescaled to 0-100)."""
        scale = self.factor(factor_id).scale
        return band_of(round(100.0 * (value - scale.min) / (scale.max - scale.min), 9))  # 9: float noise only

    def _factor_index(self) -> dict[str, Factor]:
        index = self.__dict__.get("_index")
        if index is None:
            index = {factor.id: factor for factor in self.factors}
            object.__setattr__(self, "_index", index)  # frozen model: cache once
        return index


def _where(raw: Any, loc: tuple[int | str, ...]) -> str:
    """A problem's place, naming list items by their id: ``factors[data_quality].half_life``, not ``factors.3``."""
    parts: list[str] = []
    node = raw
    for part in loc:
        item = None
        if isinstance(part, int) and isinstance(node, list) and 0 <= part < len(node):
            item = node[part]
            named = item.get("id") if isinstance(item, dict) else None
            parts.append(f"[{named}]" if isinstance(named, str) else f"[{part}]")
        else:
            if isinstance(node, dict):
                item = node.get(part)
            parts.append(f".{part}" if parts else str(part))
        node = item
    return "".join(parts) or "catalog"


def _format_validation_error(error: ValidationError, raw: Any = None) -> str:
    lines = []
    for problem in error.errors():
        lines.append(f"{_where(raw, problem['loc'])}: {problem['msg']}")
    return "; ".join(lines)


def parse_catalog(text: str, source: str = "<string>") -> Catalog:
    """Parse and validate catalog YAML; raises ``CatalogError`` naming every problem."""
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise CatalogError(f"{source}: not valid YAML: {error}") from error
    if not isinstance(raw, dict):
        raise CatalogError(f"{source}: the catalog must be a mapping at the top level")
    try:
        return Catalog.model_validate(raw)
    except ValidationError as error:
        raise CatalogError(f"{source}: {_format_validation_error(error, raw)}") from error


@lru_cache(maxsize=8)
def load_catalog(path: Path | str = DEFAULT_CATALOG_PATH) -> Catalog:
    """Load the catalog at ``path`` (default: the packaged one), validated, cached per path."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise CatalogError(f"cannot read catalog {path}: {error}") from error
    return parse_catalog(text, source=str(path))


def _names_any(text: str, phrases: list[str]) -> bool:
    """Whether lower-cased ``text`` holds any of ``phrases`` as whole words (spaces, "_" and "-" alike)."""
    for phrase in phrases:
        words = [re.escape(word) for word in re.split(r"[\s_-]+", phrase.lower()) if word]
        if words and re.search(r"(?<!\w)" + r"[\s_-]+".join(words) + r"(?!\w)", text):
            return True
    return False
