"""Which environment variables an endpoint may name as its API key, and which files it may
name as its cassette.

An endpoint row is written by an admin, but the worker that reads it holds every secret of
the deployment (``SECRET_KEY``, ``DATABASE_URL``): were any variable name accepted, an admin
could have the worker send that secret as a bearer token to a URL of their choosing, or learn
from the API which variables exist. So a key variable must carry the configured prefix
(``LLM_KEY_ENV_PREFIX``) or be listed by name (``LLM_KEY_ENV_ALLOW``), and the answer to "is
it set?" is only ever given for such names. The same reasoning confines cassettes (files the
worker reads and, in record mode, writes) to the configured cassette roots.
"""

from __future__ import annotations

import os
from pathlib import Path

from django.conf import settings

CASSETTE_SUFFIX = ".jsonl"

# The deployment's own secrets are refused whatever the prefix and allow-list say.
NEVER_KEY_ENV = frozenset({"SECRET_KEY", "DATABASE_URL", "REDIS_URL", "EMAIL_HOST_PASSWORD"})


def key_env_allowed(name: str) -> bool:
    """True when ``name`` may hold an endpoint's API key under this deployment's policy."""
    if not name or name in NEVER_KEY_ENV:
        return False
    return name.startswith(settings.LLM_KEY_ENV_PREFIX) or name in settings.LLM_KEY_ENV_ALLOW


def key_env_problem(name: str) -> str | None:
    """Why ``name`` may not be an endpoint's key variable, or None when it may.

    The message never depends on whether the variable exists in this process."""
    if not name or key_env_allowed(name):
        return None
    return (
        f"API key variables must start with {settings.LLM_KEY_ENV_PREFIX} "
        "or be listed in LLM_KEY_ENV_ALLOW"
    )


def key_env_is_set(name: str) -> bool:
    """Whether an allowed key variable is set; always False for names outside the policy."""
    return key_env_allowed(name) and bool(os.environ.get(name))


def cassette_roots() -> list[Path]:
    roots = [settings.LLM_CASSETTE_DIR, *settings.LLM_CASSETTE_ROOTS]
    return [Path(root).resolve() for root in roots]


def cassette_resolve(cassette: str) -> Path | None:
    """The real path of an endpoint's cassette, or None when it lies outside every root.

    Relative names resolve against ``LLM_CASSETTE_DIR``; symbolic links and ``..`` are
    resolved before the check, so neither can lead out of a root."""
    if not cassette or "\x00" in cassette or not cassette.endswith(CASSETTE_SUFFIX):
        return None
    path = Path(cassette)
    if not path.is_absolute():
        path = Path(settings.LLM_CASSETTE_DIR) / path
    real = path.resolve()
    for root in cassette_roots():
        if real.is_relative_to(root):
            return real
    return None


def cassette_problem(cassette: str) -> str | None:
    """Why ``cassette`` may not be used, or None when it may (blank is allowed)."""
    if not cassette or cassette_resolve(cassette) is not None:
        return None
    return (
        f"a cassette must be a {CASSETTE_SUFFIX} file inside LLM_CASSETTE_DIR "
        "(or one of LLM_CASSETTE_ROOTS)"
    )
