"""Leases on work rows: the one way a worker claims a lineage or a campaign stream.

A row that carries ``lease_token``, ``leased_until`` and ``ticket`` is claimed with a single
conditional UPDATE: it succeeds only when no other worker holds an unexpired lease and (when a
ticket is given) the message's ticket is still the row's current one. A worker killed while
holding a lease blocks the row only until the lease expires.
"""

from __future__ import annotations

import secrets
from datetime import timedelta

from django.db.models import Q, QuerySet
from django.utils import timezone

from .campaigns import lease_seconds


def lease_claim(rows: QuerySet, *, ticket: str | None) -> str | None:
    """Claim the row ``rows`` selects; return the lease token, or None if it is not claimable.
    ``ticket`` None skips the ticket check (the in-process runner and tests)."""
    token = secrets.token_hex(8)
    now = timezone.now()
    rows = rows.filter(Q(leased_until__isnull=True) | Q(leased_until__lt=now))
    if ticket is not None:
        rows = rows.filter(ticket=ticket)
    claimed = rows.update(lease_token=token, leased_until=now + timedelta(seconds=lease_seconds()))
    return token if claimed else None


def lease_release(rows: QuerySet, token: str) -> None:
    """Give the lease back, if it is still ours."""
    rows.filter(lease_token=token).update(lease_token="", leased_until=None)
