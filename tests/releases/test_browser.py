"""Real Chromium: a curator runs the gate, freezes and publishes a release built from data
shaped like a finished campaign; an anonymous visitor then opens its leaderboard."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect, sync_playwright

from accounts.services import user_create
from releases import leaderboard, services
from releases.models import Release, ReleaseState
from tests.support.gate_rules import SELECTION_TIME_OK

from .builders import HIDDEN_DIGITS, SUM_CODE, WRONG_CODE, crafted_world

LAUNCH = {
    "executable_path": "/usr/bin/chromium",
    "args": ["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
}


@pytest.mark.browser
@pytest.mark.slow
def test_curator_gates_freezes_publishes_and_a_visitor_reads_the_leaderboard(
    transactional_db, live_server
):
    world = crafted_world()
    user_create(username="cora", password="cora-password-1", role="curator")
    bench = services.benchmark_create(default_rules=SELECTION_TIME_OK, name="LiveCodeBench-Plus")
    draft = services.release_create(benchmark=bench, campaigns=[world.campaign])
    base = live_server.url
    lowq = world.problem("E-LOWQ").public_id

    # Playwright's sync API runs an event loop in this thread, and Django refuses ORM calls
    # there: the database work happens between the two browser sessions.
    with sync_playwright() as pw:
        browser = pw.chromium.launch(**LAUNCH)
        try:
            page = browser.new_page()
            page.goto(f"{base}/login/?next=/curate/releases/{draft.pk}/")
            page.fill("input[name=username]", "cora")
            page.fill("input[name=password]", "cora-password-1")
            page.click("button[type=submit]")
            page.wait_for_url(re.compile(rf"/curate/releases/{draft.pk}/$"))

            page.click("#run-gate")
            expect(page.locator("#gate-report")).to_contain_text("3 of 12 candidates pass")
            row = page.locator(f'tr.gate-row[data-public-id="{lowq}"]')
            expect(row).to_contain_text("mean quality 2.5")
            expect(row).to_contain_text("excluded")

            page.click("#freeze")
            page.click("#freeze-confirm")
            expect(page.locator("#release-state")).to_have_text("frozen")
            digest = page.locator("#content-hash").inner_text()
            assert re.fullmatch(r"[0-9a-f]{64}", digest)
            page.click("#publish")
            page.click("#publish-confirm")
            expect(page.locator("#release-state")).to_have_text("published")
        finally:
            browser.close()

    release = Release.objects.get(pk=draft.pk)
    assert release.state == ReleaseState.PUBLISHED and release.content_hash == digest
    ids = [i.public_id for i in release.items.order_by("position")]
    upload = "\n".join(
        json.dumps({"question_id": pid, "code_list": [SUM_CODE, WRONG_CODE]}) for pid in ids
    )
    run = leaderboard.run_create_from_upload(release=release, label="open-model-7b", content=upload)
    assert leaderboard.run_execute(run_id=run.pk).state == "completed"

    with sync_playwright() as pw:
        browser = pw.chromium.launch(**LAUNCH)
        try:
            visitor = browser.new_page()
            visitor.goto(f"{base}/releases/")
            expect(visitor.locator(".release-card")).to_contain_text("LiveCodeBench-Plus v1.0.0")
            visitor.click("text=Leaderboard")
            visitor.wait_for_url(re.compile(r"/leaderboard/$"))
            model_row = visitor.locator('tr[data-model="open-model-7b"]')
            expect(model_row).to_contain_text("50.0%")
            expect(model_row.locator(".ci").first).to_contain_text("[")
            assert HIDDEN_DIGITS not in visitor.content()
            assert visitor.locator("text=Log out").count() == 0
        finally:
            browser.close()
