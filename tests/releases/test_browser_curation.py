"""Real Chromium on the curator's release page: the gate rules form (edit a rule, the JSON
view keeps the edit, a JSON error names its line and column and keeps the text), and Freeze
and Publish asking for confirmation and saying what becomes immutable."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from accounts.services import user_create
from releases import services
from releases.models import Release
from tests.support.gate_rules import SELECTION_TIME_OK

from .builders import crafted_world

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "img"


def _screenshot(page, name: str) -> None:
    if os.environ.get("BENCHFORGE_SCREENSHOTS") == "1":
        page.screenshot(path=str(SCREENSHOTS / name))


def _log_in(page, base: str, next_url: str) -> None:
    page.goto(f"{base}/accounts/login/?next={next_url}")
    page.fill("input[name=username]", "cora")
    page.fill("input[name=password]", "cora-password-1")
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(re.escape(next_url) + "$"))


def test_a_curator_edits_rules_in_the_form_and_as_json(live_server):
    from tests.support.browser import chromium_page

    world = crafted_world()
    user_create(username="cora", password="cora-password-1", role="curator")
    bench = services.benchmark_create(default_rules=SELECTION_TIME_OK, name="LiveCodeBench-Plus")
    draft = services.release_create(benchmark=bench, campaigns=[world.campaign])
    url = f"/curate/releases/{draft.pk}/"
    with chromium_page() as page:
        _log_in(page, live_server.url, url)
        quality = page.locator('input[name="min_quality"]')
        expect(quality).to_have_value("3.0")
        expect(page.locator('[data-rule-row="min_quality"] small')).to_contain_text("Default: 3.0.")
        # Edit in the form; the JSON view shows the edit before anything is saved.
        quality.fill("3.5")
        page.locator('input[name="include_originals"]').uncheck()
        page.click("#rules-advanced summary")
        text = page.locator("#rules-json")
        expect(text).to_be_visible()
        rules = json.loads(text.input_value())
        assert rules["min_quality"] == 3.5 and rules["include_originals"] is False

        # A broken JSON: the error names line and column, the text stays as typed.
        broken = text.input_value().replace('"min_reviews": 1,', '"min_reviews": 1,,')
        text.fill(broken)
        expect(page.locator("#rules-json-error")).to_contain_text("Not valid JSON yet")
        page.click("#save-rules-json")
        error = page.locator("#rules-json-error")
        expect(error).to_contain_text(re.compile(r"^Line \d+, column \d+: Expecting"))
        expect(page.locator("#rules-advanced")).to_have_attribute("open", "")
        assert page.locator("#rules-json").input_value() == broken
        line = int(error.get_attribute("data-line"))
        assert broken.split("\n")[line - 1].strip() == '"min_reviews": 1,,'
        # The caret is put where the error is.
        caret = page.evaluate("() => document.getElementById('rules-json').selectionStart")
        assert broken[:caret].count("\n") == line - 1
        assert Release.objects.get(pk=draft.pk).gate_rules["min_quality"] == 3.0
        # The form still shows the edits made before the refused save.
        expect(page.locator('input[name="min_quality"]')).to_have_value("3.5")
        expect(page.locator('input[name="include_originals"]')).not_to_be_checked()
        if os.environ.get("BENCHFORGE_SCREENSHOTS") == "1":
            page.locator("#gate-rules").screenshot(path=str(SCREENSHOTS / "gate-rules.png"))

        # Fixed and saved: the form shows the JSON's values.
        page.locator("#rules-json").fill(broken.replace(",,", ",").replace("3.5", "4"))
        expect(page.locator("#rules-json-error")).to_be_hidden()
        expect(page.locator('input[name="min_quality"]')).to_have_value("4")
        page.click("#save-rules-json")
        expect(page.locator(".messages")).to_contain_text("Rules saved.")
        expect(page.locator('input[name="min_quality"]')).to_have_value("4")
        expect(page.locator('input[name="include_originals"]')).not_to_be_checked()
        saved = Release.objects.get(pk=draft.pk).gate_rules
        assert saved["min_quality"] == 4 and saved["include_originals"] is False

        # A rule refused in the form comes back on its field with the values as typed.
        page.locator('input[name="min_pass_at_1"]').fill("0.8")
        page.locator('input[name="max_pass_at_1"]').fill("0.6")
        page.click("#save-rules")
        expect(page.locator('[data-rule-row="min_pass_at_1"] .rule-error')).to_have_text(
            "must not exceed max_pass_at_1"
        )
        expect(page.locator('input[name="max_pass_at_1"]')).to_have_value("0.6")


def test_freeze_and_publish_ask_first_and_say_what_becomes_immutable(live_server):
    from tests.support.browser import chromium_page

    world = crafted_world()
    user_create(username="cora", password="cora-password-1", role="curator")
    bench = services.benchmark_create(default_rules=SELECTION_TIME_OK, name="LiveCodeBench-Plus")
    draft = services.release_create(benchmark=bench, campaigns=[world.campaign])
    services.gate_run_create(release=draft)
    url = f"/curate/releases/{draft.pk}/"
    with chromium_page() as page:
        _log_in(page, live_server.url, url)
        dialog = page.locator("#freeze-dialog")
        expect(dialog).to_be_hidden()
        page.click("#freeze")
        expect(dialog).to_be_visible()
        expect(dialog).to_contain_text(
            "Freezing snapshots the 3 included problems (2 evolved, 1 original) with their 12 tests"
        )
        expect(dialog).to_contain_text("What becomes immutable")
        _screenshot(page, "freeze-confirm.png")
        dialog.locator("[data-dialog-close]").click()
        expect(dialog).to_be_hidden()
        assert Release.objects.get(pk=draft.pk).state == "draft"
        page.click("#freeze")
        page.click("#freeze-confirm")
        expect(page.locator("#release-state")).to_have_text("frozen")

        publish = page.locator("#publish-dialog")
        page.click("#publish")
        expect(publish).to_be_visible()
        expect(publish).to_contain_text("cannot be withdrawn")
        page.keyboard.press("Escape")
        expect(publish).to_be_hidden()
        assert Release.objects.get(pk=draft.pk).state == "frozen"
        page.click("#publish")
        page.click("#publish-confirm")
        expect(page.locator("#release-state")).to_have_text("published")

        # The next version's form offers the next free number.
        expect(page.locator("#next-bump option:checked")).to_have_text("patch → v1.0.1")
