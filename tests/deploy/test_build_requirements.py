"""The virtualenv `make install` creates (the one the tests run in) meets the build
requirements pyproject.toml declares: building the wheel from it uses what the project asks."""

from __future__ import annotations

import tomllib
from importlib.metadata import version
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]


def test_the_made_virtualenv_has_the_declared_build_requirements():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
    unmet = []
    for line in declared:
        requirement = Requirement(line)
        installed = version(requirement.name)
        if not requirement.specifier.contains(installed, prereleases=True):
            unmet.append(f"{requirement} (installed {installed})")
    assert not unmet, unmet
