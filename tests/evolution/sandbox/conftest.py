"""Helpers for the sandbox tests: the REAL default backend, and host-side observers."""

from __future__ import annotations

import uuid

import pytest

from evolution.sandbox import Limits, get_backend


@pytest.fixture(scope="session")
def backend():
    """The backend production uses by default (bwrap). Never substituted: if it cannot run
    here the tests fail, they are not skipped."""
    return get_backend("bwrap")


@pytest.fixture
def limits():
    return Limits(time_s=2.0, memory_mb=256)


@pytest.fixture
def marker():
    """A unique token hostile programs stamp on the processes they start (via their argv or
    comm), so the test can look for survivors on the host."""
    return "bfm" + uuid.uuid4().hex[:10]
