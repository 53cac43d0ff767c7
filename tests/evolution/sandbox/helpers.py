"""Host-side observers for the sandbox tests."""

from __future__ import annotations

import os
from pathlib import Path


def host_processes_with(marker: str) -> list[int]:
    """Host PIDs whose command line or name contains ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
            comm = (entry / "comm").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline or marker[:15].encode() in comm:
            found.append(int(entry.name))
    return found
