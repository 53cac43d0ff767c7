"""The sandbox backends (bwrap, docker, unsafe) and the choice among them.

``get_backend`` lives here, apart from the service, so that the judge's command line can start
its sandboxes before it imports the service and the rest of the judge.
"""

from __future__ import annotations

import os
import threading

from .. import config
from ..types import SandboxUnavailable

_lock = threading.Lock()
_bwrap_backends: dict = {}
_docker_backends: dict = {}


def get_backend(name: str | None = None):
    """The backend named, or the configured one. Raises SandboxUnavailable with the reason;
    never substitutes another backend."""
    name = name or config.settings().SANDBOX_BACKEND
    if name == "bwrap":
        from .bwrap import BwrapBackend

        # One instance per process and interpreter: it owns the pool of warm factories.
        key = (os.getpid(), config.settings().SANDBOX_PYTHON)
        with _lock:
            if _bwrap_backends.get("key") != key:
                _bwrap_backends.update(key=key, backend=BwrapBackend())
            return _bwrap_backends["backend"]
    if name == "docker":
        from .docker import DockerBackend

        # One instance per process and image: it owns the pool of warm containers.
        key = (os.getpid(), config.settings().SANDBOX_DOCKER_IMAGE)
        with _lock:
            if _docker_backends.get("key") != key:
                _docker_backends.update(key=key, backend=DockerBackend())
            return _docker_backends["backend"]
    if name == "unsafe":
        from .unsafe import UnsafeBackend

        return UnsafeBackend()
    raise SandboxUnavailable(f"unknown sandbox backend {name!r} (bwrap, docker, unsafe)")


def shutdown_pool() -> None:
    """Stop this process's pools of warm sandboxes (bwrap's factories, docker's containers), if
    it has them, without waiting for their teardown (the process is ending)."""
    for backends in (_bwrap_backends, _docker_backends):
        if backends.get("key", (None,))[0] == os.getpid():
            backends["backend"].shutdown(wait=False)
