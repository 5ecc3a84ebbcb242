"""The factor catalog: factors, categories, capability archetypes and decision tiers, as data."""

from factor_journal.catalog.models import (
    Archetype,
    Catalog,
    CatalogError,
    Category,
    Cue,
    DecisionTier,
    Factor,
    Freshness,
    HalfLife,
    Level,
    NumericBand,
    NumericCue,
    Prerequisite,
    Rubric,
    Scale,
    load_catalog,
)

__all__ = [
    "Archetype",
    "Catalog",
    "CatalogError",
    "Category",
    "Cue",
    "DecisionTier",
    "Factor",
    "Freshness",
    "HalfLife",
    "Level",
    "NumericBand",
    "NumericCue",
    "Prerequisite",
    "Rubric",
    "Scale",
    "load_catalog",
]
