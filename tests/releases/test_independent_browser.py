"""Real Chromium: a curator chooses the evaluation panel on the draft's page, watches a queued
independent evaluation progress without reloading (the section polls itself) and reads the
winner's-curse table and plot; the page raises no Content-Security-Policy violation."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from django.db import connections
from playwright.sync_api import expect

from accounts.services import user_create
from releases import independent, services
from tests.benchapp.test_headers import VIOLATIONS
from tests.support.answers import fenced
from tests.support.browser import chromium_page, log_in
from tests.support.fake_openai import FakeOpenAI

from .builders import SUM_CODE, WRONG_CODE, crafted_world
from .living_support import endpoint

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# With BENCHFORGE_SCREENSHOTS=1 the test also saves the docs' screenshot of the section.
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "img"


def _answer(body, headers):
    prompt = body["messages"][-1]["content"]
    return fenced(SUM_CODE if "Task E-OK." in prompt or "Task E-EASY." in prompt else WRONG_CODE)


def test_the_curator_watches_the_independent_evaluation_and_reads_the_gap(live_server):
    world = crafted_world()
    user_create(username="cora", password="cora-password-1", role="curator")
    bench = services.benchmark_create(name="LiveCodeBench-Plus")
    release = services.release_create(benchmark=bench, campaigns=[world.campaign])
    url = f"/curate/releases/{release.pk}/"
    ok = world.problem("E-OK").public_id
    with FakeOpenAI() as server:
        server.responder = _answer
        fresh = endpoint(server, "fresh")
        other = endpoint(server, "other")
        with chromium_page() as page:
            page.add_init_script(VIOLATIONS)
            log_in(page, live_server.url, "cora", "cora-password-1", next_url=url)
            panel = page.locator("#independent-panel")
            panel.locator(f"input[name=endpoints][value='{fresh.pk}']").check()
            panel.locator("input[name=samples]").fill("2")
            panel.get_by_role("button", name="Save panel").click()
            expect(page.locator("body")).to_contain_text("Evaluation panel saved.")
            boxes = page.locator("#independent-panel input[name=endpoints]")
            expect(boxes.and_(page.locator(f"[value='{fresh.pk}']"))).to_be_checked()
            expect(boxes.and_(page.locator(f"[value='{other.pk}']"))).not_to_be_checked()

            # Queued as the run button would queue it, minus the broker: the test runs the
            # evaluation itself, in a thread, while the page polls.
            problems, facts, _ = services._candidate_pool(release)
            evaluation = independent.evaluation_create(
                release=release, problems=problems, panel=facts
            )
            page.reload()
            expect(page.locator("#independent-progress")).to_contain_text(
                "0 of 24 samples answered"
            )
            expect(page.locator("#run-independent")).to_be_disabled()

            def run():
                try:
                    independent.evaluation_execute(evaluation_id=evaluation.pk)
                finally:
                    connections.close_all()

            worker = threading.Thread(target=run)
            worker.start()
            # No reload: the section replaces itself every 2 s until the run completes.
            expect(page.locator("#independent-latest")).to_contain_text(
                "completed", timeout=240_000
            )
            worker.join(timeout=60)
            expect(page.locator("#independent-progress")).to_contain_text(
                "24 of 24 samples answered · 24 judged"
            )
            row = page.locator(f'.gap-row[data-public-id="{ok}"]')
            expect(row).to_contain_text("0.375")
            expect(row).to_contain_text("1.000")
            expect(row).to_contain_text("-0.625")
            assert page.locator("#gap-plot .gap-point").count() == 11
            expect(page.locator("#gap-mean")).to_be_visible()

            page.get_by_role("button", name="Run the gate").click()
            gate_row = page.locator(f'.gate-row[data-public-id="{ok}"]')
            expect(gate_row.locator(".independent-figure")).to_contain_text("1.000 (2/2)")
            expect(gate_row.locator(".selection-figure")).to_contain_text("0.375 (3/8)")
            expect(gate_row).to_contain_text("excluded")
            if os.environ.get("BENCHFORGE_SCREENSHOTS") == "1":
                page.locator("#independent").screenshot(
                    path=str(SCREENSHOTS / "independent-difficulty.png")
                )
            assert page.evaluate("window.__csp") == []
    assert fresh.pk in set(evaluation.endpoints.values_list("pk", flat=True))
