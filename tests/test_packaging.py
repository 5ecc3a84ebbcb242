"""The deployed functions run with what the project declares: every runtime dependency in
pyproject.toml is pinned in functions/requirements.txt at a version its range admits."""

from __future__ import annotations

import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]


def test_function_requirements_pin_every_runtime_dependency_within_its_range():
    declared = {
        canonicalize_name(r.name): r
        for r in map(Requirement, tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"])
    }
    lines = (ROOT / "functions" / "requirements.txt").read_text().splitlines()
    pinned = {canonicalize_name(r.name): r for r in map(Requirement, (x for x in lines if x and not x.startswith("#")))}
    assert set(declared) == set(pinned)
    for name, requirement in pinned.items():
        [spec] = list(requirement.specifier)
        assert spec.operator == "==", f"{name} must be pinned"
        assert declared[name].specifier.contains(spec.version), (
            f"{name}=={spec.version} is outside {declared[name].specifier}"
        )


def test_the_catalog_ships_with_the_functions():
    assert (ROOT / "functions" / "factor_journal" / "catalog" / "factors.yaml").is_file()


def test_the_suite_has_no_blind_reruns():
    """A flake is fixed at its cause (docs/development.md): no rerun plugin among the dependencies, none switched on
    in pytest's options."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    requirements = [Requirement(r) for extra in project["project"]["optional-dependencies"].values() for r in extra]
    names = {canonicalize_name(r.name) for r in requirements} | {
        canonicalize_name(Requirement(r).name) for r in project["project"]["dependencies"]
    }
    rerunners = {"pytest-rerunfailures", "flaky", "pytest-retry"}
    assert not names & rerunners
    options = project["tool"]["pytest"]["ini_options"]["addopts"]
    assert "--reruns" not in options and "--retries" not in options and "-p flaky" not in options
