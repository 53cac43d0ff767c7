"""The sandbox's settings, read from the environment with typed parsing.

``benchapp/settings.py`` takes its ``SANDBOX_*`` values from here, and the judge's command line
(``cli.py``) configures Django's settings with these alone: the judge then starts without
importing the web project, its apps or Celery. This module imports nothing from the project.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from types import SimpleNamespace

from .types import ISOLATION_MODES

BACKENDS = ("bwrap", "docker", "unsafe")
_TRUE, _FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off", ""}
_from_environ_cache: dict = {}


def ImproperlyConfigured(message: str) -> Exception:  # noqa: N802 - reads like the class
    """Django's exception, imported only when raised (importing django costs the CLI ~50 ms)."""
    from django.core.exceptions import ImproperlyConfigured as error

    return error(message)


def settings():
    """Where the sandbox reads its settings: Django's, in a process that uses Django (the web,
    workers, tests: overrides apply), else the environment, parsed once (the judge CLI, which
    starts without Django). Attribute access either way: ``settings().SANDBOX_BACKEND``."""
    if "django.conf" in sys.modules:
        from django.conf import settings as django_settings

        if django_settings.configured:
            return django_settings
    if "values" not in _from_environ_cache:
        _from_environ_cache["values"] = SimpleNamespace(**from_environ())
    return _from_environ_cache["values"]


def start_seconds() -> float:
    """SANDBOX_START_SECONDS, also in a process whose Django settings were configured by hand
    without it (its default then)."""
    return float(getattr(settings(), "SANDBOX_START_SECONDS", START_SECONDS_DEFAULT))


START_SECONDS_DEFAULT = 120


def _text(environ: Mapping[str, str], name: str, default: str) -> str:
    value = (environ.get(name) or "").strip()
    return value or default


def _int(environ: Mapping[str, str], name: str, default: int, minimum: int) -> int:
    value = _text(environ, name, "")
    if not value:
        return default
    try:
        number = int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, got {value!r}") from None
    if number < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, got {number}")
    return number


def _choice(environ: Mapping[str, str], name: str, default: str, choices: tuple) -> str:
    value = _text(environ, name, default)
    if value not in choices:
        raise ImproperlyConfigured(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return value


def _bool(environ: Mapping[str, str], name: str) -> bool:
    value = (environ.get(name) or "").strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (1/0, true/false, yes/no), got {value!r}")


BASE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))


def from_environ(environ: Mapping[str, str] | None = None) -> dict:
    """Every sandbox setting by name (see docs/configuration.md)."""
    env = os.environ if environ is None else environ
    data_dir = _text(env, "BENCHFORGE_DATA_DIR", os.path.join(BASE_DIR, "var"))
    return {
        "SANDBOX_BACKEND": _choice(env, "SANDBOX_BACKEND", "bwrap", BACKENDS),
        "SANDBOX_ALLOW_UNSAFE": _bool(env, "SANDBOX_ALLOW_UNSAFE"),
        "SANDBOX_MAX_PARALLEL": _int(env, "SANDBOX_MAX_PARALLEL", os.cpu_count() or 1, 1),
        "SANDBOX_PYTHON": _text(env, "SANDBOX_PYTHON", "/usr/bin/python3"),
        "SANDBOX_DOCKER_IMAGE": _text(env, "SANDBOX_DOCKER_IMAGE", "python:3.11-slim"),
        "SANDBOX_MAX_OUTPUT_BYTES": _int(env, "SANDBOX_MAX_OUTPUT_BYTES", 1_000_000, 1024),
        # How the tests of one submission share its sandbox: "fast" (one interpreter runs them
        # all, reset between tests) or "fork" (a process per test); docs/judge.md.
        "SANDBOX_ISOLATION": _choice(env, "SANDBOX_ISOLATION", "fast", ISOLATION_MODES),
        # Consecutive submissions of one batch (judge_many) judged one after another in one
        # sandbox's namespaces, reset between them; 1: fresh namespaces per submission.
        "SANDBOX_GROUP_SIZE": _int(env, "SANDBOX_GROUP_SIZE", 16, 1),
        # Seconds a new sandbox's runner has to announce itself (its interpreter started, in
        # its namespaces or container) before the start counts as failed (verdict SE). A
        # loaded machine (load 10 on 2 cores) needed more than 30.
        "SANDBOX_START_SECONDS": _int(env, "SANDBOX_START_SECONDS", START_SECONDS_DEFAULT, 5),
        # The interpreter's probed layout and the compiled runner, kept across processes.
        "SANDBOX_CACHE_DIR": os.path.join(data_dir, "sandbox-cache"),
    }
