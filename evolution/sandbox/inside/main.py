"""The runner's entry point: which mode this process serves."""

# ruff: noqa: SIM105 - contextlib.suppress would cost an import in every sandbox start.

import os
import sys

from .factory import factory
from .fast import prepare, serve_job
from .pool import pool
from .protocol import STATE, load_libc, send


def main():
    in_fd, out_fd = 0, 1
    libc = None
    try:
        libc = load_libc()
    except Exception:
        libc = None
    STATE["libc"] = libc
    if len(sys.argv) > 1 and sys.argv[1] == "factory" and libc is not None:
        factory(in_fd, out_fd, libc)
        return
    is_pid1 = os.getpid() == 1
    if len(sys.argv) > 1 and sys.argv[1] == "pool" and libc is not None and is_pid1:
        # Only as PID 1: the reset kills every other process the runner can reach. Elsewhere
        # it serves one job below, and its "ready" frame does not say "pool".
        pool(in_fd, out_fd, libc)
        return
    seccomp = prepare(libc)
    if not is_pid1 and libc is not None:
        # Outside a PID namespace (unsafe backend) orphans of a test are re-parented to us,
        # so that they can still be found and killed after the test.
        libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    send(out_fd, {"ready": True, "pid1": is_pid1, "seccomp": seccomp is not None})
    serve_job(in_fd, out_fd, seccomp, is_pid1)  # one submission: a group is bwrap's only


if __name__ == "__main__":
    main()
