"""The layering contracts in pyproject.toml ([tool.importlinter]) hold: `lint-imports` passes.

A violation (review importing a kind by name, the engine importing review or releases, a new
cycle inside an app) fails this test, and with it `make test` and CI."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _lint_imports() -> str:
    # The console script installed next to the interpreter running the tests (the venv's).
    script = Path(sys.executable).with_name("lint-imports")
    return str(script) if script.exists() else shutil.which("lint-imports") or "lint-imports"


def _run(cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [_lint_imports(), "--no-cache"], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def test_every_import_linter_contract_is_kept():
    result = _run(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_a_kind_imported_by_review_breaks_the_contracts(tmp_path):
    # The contracts are not vacuous: the same configuration run over a copy of review/ with a
    # kind imported by name reports the violation.
    apps = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    for app in apps["root_packages"]:
        shutil.copytree(ROOT / app, tmp_path / app, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "review" / "leak.py").write_text("from reasoning.models import ReasoningItem\n")
    # Review reading BenchEvolver's tables instead of what its kind declares.
    (tmp_path / "review" / "lineage_leak.py").write_text(
        "from evolution.benchevolver.models import Lineage\n"
    )
    # ... or reaching it through a platform module that imports it.
    (tmp_path / "evolution" / "measurement" / "bridge.py").write_text(
        "from evolution.benchevolver.engine.config import EvolutionSettings\n"
    )
    (tmp_path / "review" / "indirect.py").write_text("from evolution.measurement import bridge\n")
    (tmp_path / "xcoder" / "indirect.py").write_text("from evolution.measurement import bridge\n")
    # A sibling method reaching into BenchEvolver's engine instead of the platform's judging.
    (tmp_path / "xcoder" / "leak.py").write_text(
        "from evolution.benchevolver.engine import judge\n"
    )
    result = _run(tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "review.leak -> reasoning.models" in result.stdout
    assert "review.lineage_leak -> evolution.benchevolver.models" in result.stdout
    assert "review.indirect -> evolution.measurement.bridge" in result.stdout
    assert "xcoder.indirect -> evolution.measurement.bridge" in result.stdout
    assert "xcoder.leak -> evolution.benchevolver.engine" in result.stdout
