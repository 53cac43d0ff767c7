"""Campaign analytics: server time and SQL queries of the heatmap and analytics endpoints.

A finished campaign of 1,000 seeds x 10 rounds (every lineage runs all ten rounds: 10,000
candidates, 120,000 panel attempts at candidates plus 12,000 at seeds, 40,000 logged model
calls; factory data written with bulk_create, then ANALYZE as autovacuum would) is read
through Django's test client as a logged-in curator, so a figure is the whole server side of a
request: session, permission check, the campaign fingerprint, the chart's queries, JSON or
HTML rendering. "cold" clears the chart cache first (the first request after the campaign
advanced), "warm" is the next request (cache hit). Each figure is the median of 5 requests.
A second campaign of 100 seeds shows the query count does not depend on the size. The target
from the issue: under 300 ms for the heatmap JSON and the analytics page.

Runs in a throwaway database (created and dropped here) so it never touches real data.
"""

from __future__ import annotations

import statistics
import time

from bench.support import throwaway_database

NAME = "Campaign analytics (bench_analytics)"
REPEATS = 5
TARGET_MS = 300.0


def _measure(client, url: str, *, cold: bool) -> tuple[float, int, int]:
    """Median ms, queries and response bytes of ``REPEATS`` GETs of ``url``."""
    from django.core.cache import cache
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    times, queries, size = [], 0, 0
    for _ in range(REPEATS):
        if cold:
            cache.clear()
        with CaptureQueriesContext(connection) as ctx:
            started = time.perf_counter()
            response = client.get(url)
            body = response.content
            times.append((time.perf_counter() - started) * 1000)
        if response.status_code != 200:
            raise RuntimeError(f"GET {url} answered {response.status_code}")
        queries, size = len(ctx), len(body)
    return statistics.median(times), queries, size


def _endpoints(pk: int) -> list[tuple[str, str, bool]]:
    """(label, url, has a target)"""
    from django.urls import reverse

    from evolution.benchevolver.analytics.selectors import CHARTS

    heatmap_json = reverse("evolution:campaign_heatmap_json", args=[pk])
    rows = [
        ("heatmap JSON (first page, 200 seeds)", heatmap_json, True),
        ("heatmap JSON (every seed, limit=0)", heatmap_json + "?limit=0", True),
        (
            "heatmap JSON (filtered, sorted by gain)",
            heatmap_json + "?difficulty=hard&sort=gain",
            True,
        ),
        ("heatmap page (HTML shell)", reverse("evolution:campaign_heatmap", args=[pk]), False),
        (
            "analytics page (HTML + Table 1 + cost)",
            reverse("evolution:campaign_analytics", args=[pk]),
            True,
        ),
    ]
    rows += [
        (f"chart {name}.json", reverse("evolution:campaign_chart_json", args=[pk, name]), False)
        for name in CHARTS
    ]
    return rows


def _campaign_rows(client, built, seeds: int) -> list[dict]:
    out = []
    for label, url, targeted in _endpoints(built.campaign.pk):
        cold_ms, cold_q, size = _measure(client, url, cold=True)
        warm_ms, warm_q, _ = _measure(client, url, cold=False)
        row = {
            "endpoint": label,
            "seeds": seeds,
            "cold ms": round(cold_ms, 1),
            "warm ms": round(warm_ms, 1),
            "queries cold/warm": f"{cold_q}/{warm_q}",
            "KiB": round(size / 1024, 1),
        }
        if targeted:
            row["target"] = f"< {TARGET_MS:.0f} ms"
            row["ok"] = "yes" if cold_ms < TARGET_MS else "NO"
        out.append(row)
    return out


def run(args) -> list[dict]:
    quick = bool(getattr(args, "quick", False))
    with throwaway_database("analytics"):
        from django.db import connection
        from django.test import Client

        from accounts.services import user_create
        from tests.evolution.benchevolver.analytics.data import build_campaign

        user = user_create(username="bench-curator", password="bench-password-1", role="curator")
        client = Client()
        client.force_login(user)
        sizes = [(100, "small")] if quick else [(1000, "large"), (100, "small")]
        built_campaigns = []
        for seeds, tag in sizes:
            started = time.perf_counter()
            built = build_campaign(
                seeds=seeds,
                rounds=10,
                rng_seed=42,
                full_rounds=True,
                candidate_attempts=True,
                calls_per_candidate=4,
                tag=tag,
            )
            print(
                f"built {seeds} seeds x 10 rounds ({len(built.candidates)} candidates) "
                f"in {time.perf_counter() - started:.1f} s"
            )
            built_campaigns.append((seeds, built))
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
        client.get("/")  # the session's first load is not part of any measured request
        rows = []
        for seeds, built in built_campaigns:
            rows += _campaign_rows(client, built, seeds)
    return rows
