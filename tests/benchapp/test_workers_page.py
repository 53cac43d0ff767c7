"""The workers page answers from the heartbeats the workers write (issue #33, finding 9: each
load took about 2 s, waiting in the request for a broadcast ``inspect()`` that a worker answers
late, or not at all). A real Celery worker on the test Redis: no page load broadcasts; the
broadcast runs in a background thread and its answer shows on a later load; *Ask again now*
still asks, and waits."""

from __future__ import annotations

import re
import signal
import threading

import pytest
import redis
from celery import current_app
from celery.app.control import Control
from django.conf import settings
from django.core.cache import cache
from django.urls import reverse

from evolution import workers
from tests.support.workers import kill_group, start_worker, wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def _row(html: str, prefix: str) -> str:
    match = re.search(
        rf'<tr data-worker="{re.escape(prefix)}[^"]*".*?</tr>\s*(<tr class="sub">.*?</tr>)?',
        html,
        re.S,
    )
    assert match, html
    return match.group(0)


def _cells(row: str) -> list[str]:
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
    return [re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", c)).strip() for c in cells]


def test_the_workers_page_never_waits_for_a_broadcast(personas, monkeypatch):
    redis.Redis.from_url(settings.REDIS_URL).flushdb()
    cache.clear()
    broadcasts: list[str] = []  # the thread of every broadcast sent
    sent = Control.broadcast

    def recorded(self, *args, **kwargs):
        broadcasts.append(threading.current_thread().name)
        return sent(self, *args, **kwargs)

    monkeypatch.setattr(Control, "broadcast", recorded)
    here = threading.current_thread().name  # the test client runs the view in this thread
    url = reverse("staff:workers")
    client = personas.admin.client
    worker = start_worker("pagefast")
    try:
        for _ in range(2):  # imports of a job that does not exist: they do nothing
            current_app.signature("benchapp.tasks.seed_import_run", args=(0,)).apply_async(
                queue="default"
            )

        def beat() -> dict | None:
            return next(
                (r for r in workers.store.read() if r["hostname"].startswith("pagefast@")), None
            )

        wait_for(lambda: (beat() or {}).get("processed", 0) >= 2, 120, "two tasks in its heartbeat")
        cache.clear()  # no broadcast answer kept from anything before

        html = client.get(url).content.decode()
        assert here not in broadcasts, "the page broadcast while it was made"
        row = _row(html, "pagefast@")
        assert 'data-status="live"' in row  # its heartbeat is fresh
        cells = _cells(row)
        assert cells[2] == "default, sandbox"  # its queues, from the heartbeat
        assert cells[7] == "2"  # its pool size, from the heartbeat
        assert "benchapp.tasks.seed_import_run 2" in cells[-1]  # its tasks by name
        queues = re.search(r'<tr data-queue="default">.*?</tr>', html, re.S).group(0)
        assert "pagefast@" in queues

        # The page's own refresh (htmx, every 5 s) does not broadcast either.
        body = client.get(url, HTTP_HX_REQUEST="true").content.decode()
        assert 'id="workers-body"' in body and "<html" not in body
        assert here not in broadcasts

        # The broadcast the first load asked for ran in the background; a later load shows
        # when it was asked, and the worker answered it.
        wait_for(lambda: "workers-broadcast" in broadcasts, 30, "the background broadcast")
        later = wait_for(
            lambda: (lambda h: h if "Last broadcast asked" in h else None)(
                client.get(url).content.decode()
            ),
            30,
            "a load showing the broadcast's answer",
        )
        assert 'data-status="live"' in _row(later, "pagefast@")
        assert here not in broadcasts

        # Ask again now: asks in the request, and waits for the answer.
        asked = client.get(url + "?refresh=1").content.decode()
        assert broadcasts.count(here) >= 1
        assert 'data-status="live"' in _row(asked, "pagefast@")
    finally:
        # Stopped cleanly, its record forgotten: no fresh heartbeat is left for the next test.
        kill_group(worker, signal.SIGTERM)
        for record in workers.store.read():
            if record["hostname"].startswith("pagefast@"):
                workers.store.forget(record["hostname"])
        for thread in threading.enumerate():
            if thread.name == "workers-broadcast":
                thread.join(10)
        cache.clear()
