"""The explicit, unsafe backend: the runner as a plain local process, rlimits only.

It has no filesystem, network or process isolation at all; it exists for machines without
bubblewrap or docker whose operator accepts that, and it refuses to start unless
``SANDBOX_ALLOW_UNSAFE=1``. Nothing ever falls back to it on its own.
"""

from __future__ import annotations

import shutil
import tempfile

from .. import config
from ..types import Limits, SandboxUnavailable
from .base import Backend, ProcessSession, bootstrap_command


class _ScratchSession(ProcessSession):
    def __init__(self, *args, scratch: str, **kwargs):
        self.scratch = scratch
        super().__init__(*args, **kwargs)

    def close(self) -> None:
        try:
            super().close()
        finally:
            shutil.rmtree(self.scratch, ignore_errors=True)


class UnsafeBackend(Backend):
    name = "unsafe"

    def __init__(self, *, python: str | None = None, allow: bool | None = None):
        allow = config.settings().SANDBOX_ALLOW_UNSAFE if allow is None else allow
        if not allow:
            raise SandboxUnavailable(
                "SANDBOX_BACKEND=unsafe runs untrusted code without isolation; "
                "set SANDBOX_ALLOW_UNSAFE=1 to accept that explicitly"
            )
        self.python = python or config.settings().SANDBOX_PYTHON

    def open(self, *, limits: Limits) -> ProcessSession:
        scratch = tempfile.mkdtemp(prefix="bf-unsafe-")
        try:
            argv, preamble = bootstrap_command(self.python)
            session = _ScratchSession(
                argv,
                preamble=preamble,
                popen_kwargs={
                    "cwd": scratch,
                    "env": {"PATH": "/usr/bin:/bin", "HOME": scratch, "LANG": "C.UTF-8"},
                    "start_new_session": True,
                    "close_fds": True,
                },
                scratch=scratch,
            )
        except BaseException:
            shutil.rmtree(scratch, ignore_errors=True)
            raise
        session.backend_name = self.name
        session.nproc = None  # RLIMIT_NPROC would count every process of this user
        return session
