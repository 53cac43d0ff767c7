"""The program that runs INSIDE the sandbox: a warm interpreter that runs a submission's tests.

These modules are executed by the sandbox interpreter (as a marshalled code object compiled by that
same interpreter, see backends/base.py, or as ``-c`` source in docker); they must use the standard
library only and must not import anything from the project. Nothing from the host is bound into
the sandbox to run it.

The modules, in the order of the bundle: ``protocol`` (frames, exit codes, the fields both ends
read), ``seccomp``, ``child`` (one test's process), ``run`` (a fork per test), ``snapshot`` and
``fast`` (every test in one worker, reset between them), ``factory`` (bwrap), ``pool`` (docker),
``main``. They are importable on the host as a package (the host reads the protocol's fields
from ``protocol``); the sandbox runs them as ONE program, ``bundle()``: their sources in this
order, with their imports of each other left out, since in one namespace every name is already
defined (so no two modules may define the same top-level name; a test holds them to it).

Modes:
- single job (docker, unsafe): serve one submission and exit.
- factory (bwrap, ``factory`` argument): serve submissions one after another, each in fresh
  user/PID/mount/IPC/UTS namespaces with fresh /tmp, /dev/shm and /proc (see ``factory``).
- pool (docker, ``pool`` argument, PID 1 of a container only): serve submissions one after
  another in the same warm container, reset between them (see ``pool``); after each reset a
  ``{"ready": true, "oom": count}`` frame says it may take the next job.

Per submission the runner compiles the code once, then either forks a child per test that
lowers its limits, installs a seccomp filter and executes the compiled code against fresh
stdin/stdout/stderr memfds, or (fast mode) hands the tests to one such child, the worker, that
runs them back to back and is reset between them. The runner is PID 1 of its PID namespace
(bwrap, docker), so the kernel drops signals its children send it, and it kills every other
process in the namespace with ``kill(-1, SIGKILL)`` after a forked test or a retired worker:
nothing a test starts (daemons included) survives into the next test.
"""

from __future__ import annotations

import re
from pathlib import Path

MODULES = ("protocol", "seccomp", "child", "run", "snapshot", "fast", "factory", "pool", "main")

# An import of a sibling module: ``from .name import a, b`` or ``from .name import (\n a,\n)``.
_SIBLING_IMPORT = re.compile(r"^from \.\w+ import (?:\([^)]*\)|[^\n]*)\n", re.MULTILINE)


def bundle() -> str:
    """The runner as the sandbox runs it: the modules' sources in order, as one program."""
    here = Path(__file__).parent
    return "".join(
        f"# --- inside/{name}.py\n" + _SIBLING_IMPORT.sub("", (here / f"{name}.py").read_text())
        for name in MODULES
    )
