"""Real Chromium: a curator sets the contamination screen's similarity rule in the gate form,
sees the recalled problem of a real BenchEvolver campaign (Codeforces 1873A renamed and
reworded, ``tests/evolution/screening/recall_world.py``) excluded with its nearest public problem
named, freezes, and reads on the release card how its problems were screened."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from playwright.sync_api import expect

from accounts.services import user_create
from releases import services
from releases.models import Release
from tests.evolution.benchevolver.helpers import fake_server  # noqa: F401 (fixture)
from tests.evolution.screening.recall_world import recall_world
from tests.factories import UserFactory
from tests.support.gate_rules import SELECTION_TIME_OK

from .builders import World, review

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "img"


def test_a_curator_holds_back_a_recalled_problem_and_the_card_states_the_screen(
    live_server,
    fake_server,  # noqa: F811
):
    from tests.support.browser import chromium_page, log_in

    world = recall_world(fake_server)
    reviewers = World(campaign=world.campaign, seeds={}, evolved={})
    reviewers.reviewers = [UserFactory(username="rev-a"), UserFactory(username="rev-b")]
    for problem in (world.recalled, world.novel):
        review(reviewers, problem, (4, "valid"), (4, "valid"))
    user_create(username="cora", password="cora-password-1", role="curator")
    bench = services.benchmark_create(name="Screened-Plus", default_rules=SELECTION_TIME_OK)
    draft = services.release_create(benchmark=bench, campaigns=[world.campaign])
    url = f"/curate/releases/{draft.pk}/"
    violations: list[str] = []
    with chromium_page() as page:
        page.on(
            "console",
            lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None,
        )
        log_in(page, live_server.url, "cora", "cora-password-1", url)
        field = page.locator('input[name="max_public_similarity"]')
        expect(field).to_have_value("")
        expect(page.locator('[data-rule-row="max_public_similarity"]')).to_contain_text(
            "Public similarity that holds a problem back"
        )
        field.fill("0.3")
        page.click("#save-rules")
        expect(page.locator(".messages")).to_contain_text("Rules saved.")
        assert Release.objects.get(pk=draft.pk).gate_rules["max_public_similarity"] == 0.3

        page.click("#run-gate")
        recalled = page.locator(f'.gate-row[data-public-id="{world.recalled.public_id}"]')
        expect(recalled.locator("span.badge", has_text="excluded")).to_be_visible()
        nearest = recalled.locator(".nearest-public")
        expect(nearest).to_contain_text("livecodebench 1873_A")
        expect(nearest).to_contain_text("2023-08-21")
        expect(nearest.locator(".nearest-similarity")).to_have_text("1.00")
        expect(nearest.locator("a")).to_have_attribute(
            "href", f"/problems/{world.public.public_id}/"
        )
        expect(recalled).to_contain_text("must stay below 0.3")
        novel = page.locator(f'.gate-row[data-public-id="{world.novel.public_id}"]')
        expect(novel.locator("span.badge", has_text="included")).to_be_visible()
        expect(novel.locator(".nearest-public")).not_to_contain_text("1873_A")
        if os.environ.get("BENCHFORGE_SCREENSHOTS") == "1":
            page.locator("#gate-report").screenshot(path=str(SCREENSHOTS / "gate-screen.png"))

        page.click("#freeze")
        page.click("#freeze-confirm")
        expect(page.locator("#release-state")).to_have_text("frozen")
        card = page.locator("#release-card")
        card.locator("summary").click()
        expect(card).to_contain_text("Contamination screen")
        expect(card).to_contain_text("against 168 public problems")
        expect(card).to_contain_text("livecodebench 1 (dated 2023-08-21 to 2023-08-21)")
        expect(card).to_contain_text(
            "Evolved and synthesized problems were held back at similarity 0.3 or above to any "
            "public problem."
        )
        frozen = Release.objects.get(pk=draft.pk)
        assert set(frozen.items.values_list("public_id", flat=True)) == {world.novel.public_id}

        page.click("#publish")
        page.click("#publish-confirm")
        expect(page.locator("#release-state")).to_have_text("published")
        page.goto(f"{live_server.url}/releases/{bench.slug}/v{frozen.version}/")
        expect(page.locator("#card-text")).to_contain_text(
            "held back at similarity 0.3 or above to any public problem"
        )
    assert violations == []
