"""A guard for tests of where the app connects: every socket connection to an address other
than loopback is refused and recorded, so nothing leaves the machine whatever the code does."""

from __future__ import annotations

import ipaddress
import socket


def loopback_only(monkeypatch) -> list[str]:
    """Refuse non-loopback connections from now on; the returned list collects their
    addresses."""
    outside: list[str] = []
    connect = socket.socket.connect

    def guarded(self, address):
        if isinstance(address, tuple):
            host = ipaddress.ip_address(address[0].split("%", 1)[0])
            if not host.is_loopback:
                outside.append(address[0])
                raise ConnectionRefusedError(f"the test refuses a connection to {address[0]}")
        return connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    return outside
