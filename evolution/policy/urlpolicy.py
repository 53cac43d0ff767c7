"""Where a model endpoint may send its requests, and with them its API key.

An endpoint's URL is written by an admin, but the requests leave from inside the deployment:
the web process (*Test connection*) and the workers, next to PostgreSQL, Redis, the sandbox
and, on a cloud machine, the instance metadata service. Were any URL accepted, an endpoint
would be a port scanner and a proxy into that network, with the provider key attached. So:

* the URL is ``http`` or ``https`` with a host, and carries no user or password, no query
  string and no fragment (a ``?`` would make the appended ``chat/completions`` a query and
  let the URL pick any path);
* link-local addresses (``169.254.0.0/16``, ``fe80::/10``) and the cloud metadata addresses
  are refused whatever the settings say;
* loopback, private and every other non-public address (``127.0.0.0/8``, ``10.0.0.0/8``,
  ``172.16.0.0/12``, ``192.168.0.0/16``, ``100.64.0.0/10``, ``fc00::/7``, ...) only inside
  the networks ``ENDPOINT_ALLOWED_PRIVATE_NETWORKS`` lists (none by default; ``make demo``
  and the test suite allow loopback explicitly); public addresses are allowed.

The URL is checked when an endpoint is saved (``ModelEndpoint.clean``: the admin pages, the
Django admin and the API), and again on every request: the host name is resolved, every
address it resolves to is checked, and the connection goes to one of those checked addresses
(``GuardedTransport``), so a name that resolves elsewhere between the check and the connection
(DNS rebinding) cannot lead the request past the policy. Redirects are never followed, so the
key goes only to the endpoint's own host.
"""

from __future__ import annotations

import ipaddress
import socket
import typing
from urllib.parse import urlsplit

import httpcore
import httpx
from django.conf import settings

SCHEMES = ("http", "https")
SETTING = "ENDPOINT_ALLOWED_PRIVATE_NETWORKS"

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Instance metadata services outside the link-local ranges (those are refused as a whole):
# AWS's IPv6 IMDS, Alibaba Cloud's and Oracle Cloud's.
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a) for a in ("fd00:ec2::254", "100.100.100.200", "192.0.0.192")
)
NAT64 = ipaddress.ip_network("64:ff9b::/96")


class DestinationRefused(Exception):
    """A request's destination is outside the endpoint URL policy; nothing was sent."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def allowed_networks() -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    return [ipaddress.ip_network(str(n), strict=False) for n in getattr(settings, SETTING, ())]


def _embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries to its destination (mapped, NAT64, 6to4,
    Teredo), which is where a connection to it ends up."""
    if address.version != 6:
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address in NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    return None


def address_problem(address: IPAddress | str) -> str | None:
    """Why a request may not go to ``address``, or None when it may."""
    address = ipaddress.ip_address(address)
    embedded = _embedded_ipv4(address)
    if embedded is not None:
        problem = address_problem(embedded)
        if problem is not None or address.ipv4_mapped is not None:
            return problem
    if address.is_link_local or address in METADATA_ADDRESSES:
        return f"{address} is a link-local or cloud metadata address, which is never allowed"
    if address.is_unspecified or address.is_multicast or address.is_reserved:
        return f"{address} is not a unicast host address"
    if any(address in network for network in allowed_networks()):
        return None
    if address.is_global:
        return None
    kind = "a loopback" if address.is_loopback else "a private (non-public)"
    return (
        f"{address} is {kind} address, allowed only inside the networks {SETTING} lists "
        f"(now: {', '.join(map(str, allowed_networks())) or 'none'})"
    )


def _resolve(host: str, port: int) -> list[IPAddress]:
    """Every address ``host`` resolves to (once each, in the resolver's order)."""
    found: list[IPAddress] = []
    for *_, sockaddr in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM):
        address = ipaddress.ip_address(sockaddr[0].split("%", 1)[0])
        if address not in found:
            found.append(address)
    return found


def _literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def url_problem(url: str, *, resolve: bool = True) -> str | None:
    """Why ``url`` may not be an endpoint's base URL, or None when it may ("" is no URL).

    ``resolve``: also resolve a host name and check every address it has now (a name that
    does not resolve here is left to the request, which checks again)."""
    if not url:
        return None
    if any(ch.isspace() or ord(ch) < 32 or ch == "\\" for ch in url):
        return "the URL contains whitespace, a control character or a backslash"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        return f"the URL cannot be read ({exc})"
    if parts.scheme.lower() not in SCHEMES:
        return "the URL must start with http:// or https://"
    if "@" in parts.netloc:
        return "the URL may not carry a user or password (name the key's variable instead)"
    if parts.query or "?" in url:
        return "the URL may not carry a query string (?...)"
    if parts.fragment or "#" in url:
        return "the URL may not carry a fragment (#...)"
    host = parts.hostname
    if not host:
        return "the URL names no host"
    literal = _literal(host)
    if literal is not None:
        return address_problem(literal)
    if not resolve:
        return None
    try:
        addresses = _resolve(host, port or (443 if parts.scheme == "https" else 80))
    except (OSError, UnicodeError):
        return None
    for address in addresses:
        if problem := address_problem(address):
            return f"{host} resolves to {problem}"
    return None


def check_url(url: str, *, resolve: bool = False) -> None:
    """``DestinationRefused`` unless ``url`` passes ``url_problem``."""
    if problem := url_problem(url, resolve=resolve):
        raise DestinationRefused(problem)


class HostUnresolvable(httpcore.ConnectError):
    """The endpoint's host name does not resolve."""


class GuardedBackend(httpcore.SyncBackend):
    """httpcore's network backend, resolving each host itself: every address is checked
    against the policy, and the socket connects to a checked address (never to the name,
    which a second lookup could answer differently)."""

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable | None = None,
    ) -> httpcore.NetworkStream:
        literal = _literal(host.strip("[]"))
        if literal is not None:
            addresses = [literal]
        else:
            try:
                addresses = _resolve(host, port)
            except (OSError, UnicodeError) as exc:
                raise HostUnresolvable(f"{host} does not resolve ({exc})") from exc
            if not addresses:
                raise HostUnresolvable(f"{host} does not resolve")
        for address in addresses:
            if problem := address_problem(address):
                name = "" if literal is not None else f"{host} resolves to "
                raise DestinationRefused(f"{name}{problem}")
        failure: Exception | None = None
        for address in addresses:
            try:
                return super().connect_tcp(
                    str(address), port, timeout, local_address, socket_options
                )
            except httpcore.ConnectError as exc:
                failure = exc
        assert failure is not None
        raise failure


class GuardedTransport(httpx.HTTPTransport):
    """httpx's transport on ``GuardedBackend``, with no proxy from the environment: a proxy
    would make the connection's destination its own, out of the policy's sight."""

    def __init__(self, *, limits: httpx.Limits):
        # httpx.HTTPTransport keeps nothing but its pool: this one is built on the guarded
        # backend (HTTPTransport.__init__ would build one on the default backend first).
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=GuardedBackend(),
        )
