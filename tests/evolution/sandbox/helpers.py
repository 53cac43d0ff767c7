"""Host-side observers for the sandbox tests."""

from __future__ import annotations

import os
import time
from contextlib import contextmanager
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


@contextmanager
def leased_containers(backend):
    """The ids of the containers a docker backend's sandboxes ran in, one per submission, in
    order: the list is filled when the block ends (a submission may move to another container
    after its lease is opened, see docker._Lease)."""
    ids: list[str] = []
    leases = []
    opened = backend.open

    def open_and_note(*, limits):
        lease = opened(limits=limits)
        leases.append(lease)
        return lease

    backend.open = open_and_note
    try:
        yield ids
    finally:
        del backend.open
        ids.extend(lease.container.id for lease in leases)


def containers_owned_by(client, pid: int) -> list[dict]:
    """The sandbox containers (any state) whose owner label names process ``pid``."""
    from evolution.sandbox.backends.docker import OWNER_LABEL

    return [
        entry
        for entry in client.api.containers(all=True, filters={"label": OWNER_LABEL})
        if (entry.get("Labels") or {}).get(OWNER_LABEL, "").split("/")[2:3] == [str(pid)]
    ]


def wait_until_no_container_of(client, pid: int, within_s: float = 15) -> float:
    """Wait until no sandbox container of process ``pid`` is left; how long that took. Fails
    the test with what is left after ``within_s``."""
    started = time.monotonic()
    while True:
        left = containers_owned_by(client, pid)
        if not left:
            return time.monotonic() - started
        if time.monotonic() - started > within_s:
            states = [(e["Id"][:12], e.get("State"), e.get("Status")) for e in left]
            raise AssertionError(f"containers of {pid} left after {within_s} s: {states}")
        time.sleep(0.1)


def sandbox_events(client, since: float, owner: str) -> dict:
    """What the engine did for the sandbox containers of ``owner`` (an OWNER_LABEL) since
    ``since``: the ids of those it created and destroyed, their exit codes, and every volume or
    network event that names one of them (the other objects on a shared engine come and go
    meanwhile: only what concerns these containers is ours)."""
    from evolution.sandbox.backends.docker import OWNER_LABEL

    window = {"since": int(since) - 1, "until": int(time.time()) + 1, "decode": True}
    created, destroyed, exits = set(), set(), {}
    label = f"{OWNER_LABEL}={owner}"
    for event in client.api.events(filters={"type": "container", "label": label}, **window):
        if event["Action"] == "create":
            created.add(event["id"])
        elif event["Action"] == "destroy":
            destroyed.add(event["id"])
        elif event["Action"] == "die":
            exits[event["id"]] = event["Actor"]["Attributes"].get("exitCode")
    attached = [
        (event["Type"], event["Action"], event["Actor"].get("ID"))
        for event in client.api.events(filters={"type": ["volume", "network"]}, **window)
        if event["Actor"]["Attributes"].get("container") in created
    ]
    return {"created": created, "destroyed": destroyed, "exits": exits, "attached": attached}
