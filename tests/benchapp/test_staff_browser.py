"""The admin pages and the workers page in a real Chromium, against the live server, the
loopback model server and real Celery workers: an admin registers endpoints and tests their
connections (one answers, one fails), builds a panel, uploads a seed file with an error and
reads the line, uploads a good one and reads the counts, changes a user's role and
deactivates them; then watches a worker go from live to stopped and a running campaign say
that no live worker serves its queues."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import signal
from datetime import timedelta
from pathlib import Path

import pytest
import redis
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.utils import timezone
from playwright.sync_api import expect

from accounts.roles import user_roles
from accounts.services import user_create
from evolution.models import Campaign, Panel, Problem, StepFailure
from evolution.models.campaigns import CampaignState
from evolution.streams import kinds, runner
from evolution.streams.errors import SandboxFailure
from evolution.streams.kinds import kind_for
from tests.support.browser import chromium_page, log_in
from tests.support.fake_openai import FakeOpenAI, Fault, by_model
from tests.support.workers import kill_group, start_worker, wait_for, wait_until_consuming

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

HUB = Path(__file__).resolve().parents[1] / "evolution" / "importers" / "data" / "hub"
# With BENCHFORGE_SCREENSHOTS=1 the tests also save the docs' screenshots of these pages.
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "img"
PASSWORD = "admin-password-1"


def _screenshot(page, name: str, *, full: bool = False) -> None:
    if os.environ.get("BENCHFORGE_SCREENSHOTS") == "1":
        page.evaluate("() => window.scrollTo(0, 0)")
        page.screenshot(path=str(SCREENSHOTS / name), full_page=full)


def _new_endpoint(page, base: str, *, name: str, url: str, model: str) -> None:
    page.goto(f"{base}/manage/endpoints/")
    page.get_by_role("link", name="New endpoint").click()
    page.fill("input[name=name]", name)
    page.fill("input[name=base_url]", url)
    page.fill("input[name=model]", model)
    page.fill("input[name=max_retries]", "3")
    page.get_by_role("button", name="Create endpoint").click()
    expect(page.locator("h1")).to_have_text(name)


def test_an_admin_sets_up_endpoints_panels_seeds_and_users(live_server, tmp_path):
    redis.Redis.from_url(settings.REDIS_URL).flushdb()
    cache.clear()
    user_create(username="ada", password=PASSWORD, role="admin")
    user_create(username="rob", password="rob-password-1", role="reviewer")
    worker = start_worker("importer")  # seed imports run on a worker
    base = live_server.url
    with FakeOpenAI() as server:
        server.responder = by_model(
            {
                "answers-model": lambda body, headers: "ready",
                "broken-model": lambda body, headers: Fault.server_error(500),
            }
        )
        try:
            with chromium_page() as page:
                log_in(page, base, "ada", PASSWORD, "/")
                page.locator("header nav").get_by_role("link", name="Admin").click()
                expect(page.locator("h1")).to_have_text("Admin")

                # An endpoint that answers: connected, with its latency.
                _new_endpoint(
                    page, base, name="loopback", url=server.base_url, model="answers-model"
                )
                page.get_by_role("button", name="Test connection").click()
                outcome = page.locator("#connection-outcome")
                expect(outcome).to_have_attribute("data-ok", "true", timeout=30_000)
                expect(outcome).to_contain_text("connected")
                expect(outcome).to_contain_text("the model answered as asked")
                expect(outcome).to_contain_text(re.compile(r"\d+ ms"))
                expect(page.locator("#no-errors")).to_be_visible()

                # One that fails: the reason, once, and the error joins the table at once.
                _new_endpoint(page, base, name="flaky", url=server.base_url, model="broken-model")
                page.get_by_role("button", name="Test connection").click()
                expect(outcome).to_have_attribute("data-ok", "false", timeout=30_000)
                expect(outcome).to_contain_text("HTTP 500")
                errors = page.locator("#error-table tbody tr")
                expect(errors).to_have_count(1, timeout=15_000)
                expect(errors.first).to_contain_text("connection-test")
                _screenshot(page, "admin-endpoint.png", full=True)
                page.goto(f"{base}/manage/endpoints/")
                _screenshot(page, "admin-endpoints.png")

                # A panel of both, the first with its own K.
                page.locator(".subnav").get_by_role("link", name="Panels").click()
                page.get_by_role("link", name="New panel").click()
                page.fill("input[name=name]", "targets")
                page.get_by_label("loopback", exact=True).check()
                page.get_by_label("flaky", exact=True).check()
                page.get_by_label("K for loopback").fill("8")
                page.get_by_role("button", name="Create panel").click()
                expect(page.locator("h1")).to_have_text("Panel targets")
                expect(page.locator("#members")).to_contain_text("loopback")
                panel = Panel.objects.get(name="targets")
                assert {(m.endpoint.name, m.attempts) for m in panel.members.all()} == {
                    ("loopback", 8),
                    ("flaky", None),
                }

                # A seed file with an error: the line, the field, the line itself.
                wait_until_consuming()
                rows = [json.loads(x) for x in (HUB / "taco.jsonl").read_text().splitlines()]
                broken = [dict(rows[0]), {k: v for k, v in rows[1].items() if k != "question"}]
                bad_file = tmp_path / "taco-broken.jsonl"
                bad_file.write_text("".join(json.dumps(r) + "\n" for r in broken))
                page.locator(".subnav").get_by_role("link", name="Seed import").click()
                page.select_option("select[name=source]", "taco")
                page.set_input_files("input[name=file]", str(bad_file))
                page.get_by_role("button", name="Upload and import").click()
                error = page.locator("#import-error")
                expect(error).to_contain_text("Line 2, field question: is missing", timeout=90_000)
                expect(page.locator("#error-excerpt")).to_be_visible()
                expect(error).to_contain_text("Nothing was written")
                assert not Problem.objects.filter(origin_dataset="taco").exists()
                _screenshot(page, "admin-import-error.png")

                # The published file: counts, references and the skipped row with its reason.
                page.goto(f"{base}/manage/import/")
                page.select_option("select[name=source]", "taco")
                page.set_input_files("input[name=file]", str(HUB / "taco.jsonl"))
                page.fill("input[name=set_name]", "taco-seeds")
                page.get_by_role("button", name="Upload and import").click()
                expect(page.locator("#import-state")).to_have_text("done", timeout=90_000)
                expect(page.locator("#count-imported")).to_have_text("2")
                expect(page.locator("#count-reference")).to_have_text("1")
                expect(page.locator("#count-skipped")).to_have_text("1")
                expect(page.locator("#skipped-rows")).to_contain_text("call-based")
                assert Problem.objects.filter(problem_sets__name="taco-seeds").count() == 2
                _screenshot(page, "admin-import.png")

                # Users: rob becomes a curator too, then is deactivated.
                page.locator(".subnav").get_by_role("link", name="Users and roles").click()
                page.locator("#users").get_by_role("link", name="rob").click()
                page.locator("input[name=roles][value=curator]").check()
                page.get_by_role("button", name="Save roles").click()
                expect(page.locator("#current-roles")).to_contain_text("curator")
                rob = get_user_model().objects.get(username="rob")
                assert user_roles(rob) == {"curator", "reviewer"}
                page.once("dialog", lambda dialog: dialog.accept())
                page.get_by_role("button", name="Deactivate").click()
                expect(page.locator("h1")).to_contain_text("deactivated")
                assert not get_user_model().objects.get(username="rob").is_active
                page.goto(f"{base}/manage/users/")
                expect(page.locator('tr[data-user="rob"] .roles')).to_contain_text("curator")
                _screenshot(page, "admin-users.png")
        finally:
            kill_group(worker, signal.SIGTERM)


def _running_campaign_with_failures(server: FakeOpenAI) -> Campaign:
    """A BenchEvolver campaign, marked running, whose step failed twice on the sandbox (real
    runner, real traceback), not yet paused: what the workers page lists."""
    from tests.evolution.streams.worlds import WORLDS

    campaign = WORLDS["benchevolver"](server)
    Campaign.objects.filter(pk=campaign.pk).update(
        state=CampaignState.RUNNING, started_at=timezone.now() - timedelta(minutes=3)
    )
    kind = kind_for("benchevolver")
    stream_id = kind.stream_model.objects.filter(campaign=campaign).values_list("pk", flat=True)[0]
    action = kind.next_action(kind.load(stream_id))

    def sandbox_down(ctx, act):
        raise SandboxFailure("bwrap: setting up uid map: Permission denied")

    stages = tuple(
        dataclasses.replace(s, run=sandbox_down) if s.name == action.name else s
        for s in kind.stages
    )
    kinds._KINDS["benchevolver"] = dataclasses.replace(kind, stages=stages)
    try:
        for _ in range(2):
            assert runner.advance(kind="benchevolver", stream_id=stream_id).outcome == "error"
    finally:
        kinds._KINDS["benchevolver"] = kind
    assert StepFailure.objects.filter(campaign=campaign).count() == 2
    return Campaign.objects.get(pk=campaign.pk)


def test_the_workers_page_sees_a_worker_stop_and_the_campaign_page_says_so(live_server):
    redis.Redis.from_url(settings.REDIS_URL).flushdb()
    cache.clear()
    user_create(username="ada", password=PASSWORD, role="admin")
    base = live_server.url
    worker = start_worker("alpha")
    try:
        with FakeOpenAI() as server, chromium_page() as page:
            log_in(page, base, "ada", PASSWORD, "/")
            page.locator("header nav").get_by_role("link", name="Workers").click()
            row = page.locator('#worker-table tr[data-worker^="alpha@"]')
            expect(row).to_have_attribute("data-status", "live", timeout=120_000)
            expect(row).to_contain_text("default, sandbox")
            expect(page.locator('#queue-table tr[data-queue="default"]')).to_contain_text("alpha@")
            wait_for(
                lambda: re.search(r"\d+ s ago", row.inner_text()), 30, "a heartbeat on the page"
            )

            # A campaign launched while the worker runs (not ticked: it stays running), with
            # two failed steps; the page lists them with their tracebacks.
            campaign = _running_campaign_with_failures(server)
            page.get_by_role("link", name="Ask again now").click()
            failures = page.locator("#failure-table tbody tr")
            expect(failures).to_have_count(2)
            expect(failures.first).to_contain_text("SandboxFailure: bwrap")
            expect(failures.first).to_contain_text("will be retried")
            failures.first.locator("summary").click()
            expect(failures.first.locator("pre")).to_contain_text(
                "Traceback (most recent call last)"
            )
            expect(page.locator("#campaigns-without-worker")).to_have_count(0)
            _screenshot(page, "workers.png", full=True)

            # The worker stops: the page, refreshing itself, shows it stopped and the campaign
            # without a worker.
            kill_group(worker, signal.SIGTERM)
            expect(row).to_have_attribute("data-status", "stopped", timeout=60_000)
            expect(page.locator('#queue-table tr[data-queue="default"]')).to_contain_text("none")
            waiting = page.locator("#campaigns-without-worker")
            expect(waiting).to_contain_text(campaign.name)
            expect(waiting).to_contain_text("default and sandbox queues")
            _screenshot(page, "workers-stopped.png")

            page.goto(f"{base}/campaigns/{campaign.pk}/")
            notice = page.locator("#no-worker")
            expect(notice).to_contain_text("No live worker for the queues default and sandbox.")
            expect(notice).to_contain_text("running")
            _screenshot(page, "campaign-no-worker.png")
    finally:
        kill_group(worker)
