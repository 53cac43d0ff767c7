"""The database ``make demo`` builds, built once per test module and committed, for the tests
that read it (the demo's own checks, the page crawl, LiveCodeBench grading of its release).

The build runs campaigns inline with worker threads, which need committed rows, so it runs
outside any test transaction; the module's tests then run in ordinary (rolled-back) test
transactions on top of it, and the database is flushed when the module ends, as the next
module expects."""

from __future__ import annotations

import io
from dataclasses import dataclass

import pytest
from django.core.management import call_command


@dataclass(frozen=True)
class DemoBuild:
    stdout: str
    # Campaigns per (kind, name) after the demo command ran a second time on the built
    # database: it must reuse what exists.
    campaigns_after_rerun: dict


@pytest.fixture(scope="module")
def demo_build(django_db_setup, django_db_blocker):
    from django.db.models import Count

    from evolution.models import Campaign

    with django_db_blocker.unblock():
        out = io.StringIO()
        try:
            call_command("demo", no_serve=True, stdout=out, stderr=io.StringIO())
            # The second run also commits (its leaderboard and campaign threads use their own
            # connections): it runs here, outside any test transaction, never inside a test.
            call_command("demo", no_serve=True, stdout=io.StringIO(), stderr=io.StringIO())
            counts = {
                (row["kind"], row["name"]): row["n"]
                for row in Campaign.objects.values("kind", "name").annotate(n=Count("id"))
            }
            yield DemoBuild(stdout=out.getvalue(), campaigns_after_rerun=counts)
        finally:
            call_command("flush", interactive=False, verbosity=0)
