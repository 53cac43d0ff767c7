"""Fixtures for the importer tests: the real LiveCodeBench record and pickle builders."""

from __future__ import annotations

import base64
import json
import pickle
import zlib
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"


@pytest.fixture
def lcb_sample_path() -> Path:
    """Codeforces 1873A exactly as LiveCodeBench ships it (copied from the shared data)."""
    return DATA / "lcb_sample.jsonl"


@pytest.fixture
def lcb_sample(lcb_sample_path) -> dict:
    return json.loads(lcb_sample_path.read_text(encoding="utf-8"))


def pack_private(value) -> str:
    """LiveCodeBench's packing of private tests: base64(zlib(pickle(value)))."""
    return base64.b64encode(zlib.compress(pickle.dumps(value))).decode()


def pack_raw_pickle(raw: bytes) -> str:
    return base64.b64encode(zlib.compress(raw)).decode()


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    """Personas hash four passwords per test; the production hasher makes that seconds."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
