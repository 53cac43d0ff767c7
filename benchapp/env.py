"""Typed reading of configuration from the environment.

Every helper raises ``ImproperlyConfigured`` naming the variable when its value is
malformed, so a bad deployment stops at start-up instead of misbehaving later.
"""

from __future__ import annotations

import ipaddress
import os
from urllib.parse import parse_qs, unquote, urlparse

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def _raw(name: str) -> str | None:
    value = os.environ.get(name)
    return None if value is None else value.strip()


def env_str(name: str, default: str | None = None) -> str | None:
    value = _raw(name)
    return default if value is None or value == "" else value


def env_bool(name: str, default: bool = False) -> bool:
    value = _raw(name)
    if value is None:
        return default
    if value.lower() in _TRUE:
        return True
    if value.lower() in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (1/0, true/false, yes/no), got {value!r}")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    value = _raw(name)
    if value is None or value == "":
        return default
    try:
        number = int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, got {value!r}")
    if minimum is not None and number < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, got {number}")
    return number


def env_float(name: str, default: float, *, minimum: float | None = None) -> float:
    value = _raw(name)
    if value is None or value == "":
        return default
    try:
        number = float(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number, got {value!r}")
    if minimum is not None and number < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, got {number}")
    return number


def env_list(name: str, default: list[str]) -> list[str]:
    value = _raw(name)
    if value is None or value == "":
        return list(default)
    return [item.strip() for item in value.split(",") if item.strip()]


def env_networks(
    name: str, default: list[str]
) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    """A comma-separated list of IP networks in CIDR form (``127.0.0.0/8,::1/128``); a bare
    address is a network of one."""
    networks = []
    for item in env_list(name, default):
        try:
            networks.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            raise ImproperlyConfigured(
                f"{name} must list IP networks such as 127.0.0.0/8 or 10.1.2.3/32, got {item!r}"
            )
    return networks


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    value = env_str(name, default)
    if value not in choices:
        raise ImproperlyConfigured(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return value


def parse_database_url(name: str, url: str) -> dict:
    """Turn ``postgres://user:pass@host:port/db`` or ``sqlite:///path`` into a DATABASES entry."""
    parsed = urlparse(url)
    if parsed.scheme == "sqlite":
        path = unquote(parsed.path)
        if url.startswith("sqlite:////"):
            path = "/" + path.lstrip("/")
        elif path.startswith("/"):
            path = path[1:]
        if not path:
            raise ImproperlyConfigured(
                f"{name} needs a file path, e.g. sqlite:///var/benchforge.sqlite3"
            )
        return {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": path,
            "OPTIONS": {
                "timeout": 30,
                "transaction_mode": "IMMEDIATE",
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            },
        }
    if parsed.scheme in ("postgres", "postgresql", "pgsql"):
        name_part = parsed.path.lstrip("/")
        if not name_part:
            raise ImproperlyConfigured(
                f"{name} must name a database, e.g. postgres://postgres@127.0.0.1:5432/benchforge"
            )
        try:
            port = parsed.port
        except ValueError:
            raise ImproperlyConfigured(f"{name} has a malformed port: {url!r}")
        options = {k: v[-1] for k, v in parse_qs(parsed.query).items()}
        return {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": unquote(name_part),
            "USER": unquote(parsed.username or ""),
            "PASSWORD": unquote(parsed.password or ""),
            "HOST": parsed.hostname or "",
            "PORT": str(port or ""),
            "CONN_MAX_AGE": 60,
            "CONN_HEALTH_CHECKS": True,
            "OPTIONS": options,
        }
    raise ImproperlyConfigured(
        f"{name} must start with postgres:// or sqlite:///, got {url.split(':', 1)[0]!r}"
    )
