"""The project-wide templates/ and static/ live at the top of the checkout and ship in the wheel.

A checkout renders from its own top-level folders; the wheel carries them as the packages
``benchforge_templates`` and ``benchforge_static`` (setup.py), with every other data file of the
apps, so an installed copy needs no source tree (the installed side is run for real in
tests/deploy/test_production_rehearsal.py).
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

from django.conf import settings
from django.contrib.staticfiles import finders
from django.template.loader import get_template

ROOT = Path(__file__).resolve().parents[2]
APPS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["root_packages"]
TOP = {"templates": "benchforge_templates", "static": "benchforge_static"}


def test_a_checkout_renders_from_its_top_level_templates_and_static():
    assert settings.TEMPLATES[0]["DIRS"] == [ROOT / "templates"]
    assert settings.STATICFILES_DIRS == [ROOT / "static"]
    assert Path(get_template("base.html").origin.name) == ROOT / "templates" / "base.html"
    assert Path(finders.find("css/app.css")) == ROOT / "static" / "css" / "app.css"
    # The apps' own pages and files stay in the apps.
    assert Path(get_template("review/queue.html").origin.name).is_relative_to(ROOT / "review")


def _tracked(*paths: str) -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", *paths],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    return [name.decode() for name in listed if name and (ROOT / name.decode()).is_file()]


def test_the_wheel_carries_every_file_of_the_apps_and_the_top_level_folders(tmp_path):
    source = tmp_path / "src"
    for name in _tracked("."):
        target = source / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((ROOT / name).read_bytes())
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
        + ["-w", str(tmp_path / "wheels"), str(source)],
        check=True,
        capture_output=True,
        cwd=tmp_path,
    )
    (wheel,) = (tmp_path / "wheels").glob("benchforge-*.whl")
    shipped = set(zipfile.ZipFile(wheel).namelist())

    expected = {name for name in _tracked(*APPS) if "__pycache__" not in name}
    for folder, package in TOP.items():
        expected |= {package + name[len(folder) :] for name in _tracked(folder)}
    assert "benchforge_templates/base.html" in expected
    assert "benchforge_static/css/app.css" in expected
    missing = sorted(expected - shipped)
    assert not missing, missing
