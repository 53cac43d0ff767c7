"""Real Chromium: a FrontierSmith campaign (loopback model server, real sandbox) accepts an
open-ended problem; it is released with the score-spread gate rule, two models' solutions are
scored by its verifier on the leaderboard, and the pages show the funnel, the filter's error
rates and Avg@k / Best@k."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from accounts.services import user_create
from evolution.services.campaigns import campaign_launch
from evolution.streams.runner import run_inline
from releases import exports, leaderboard
from releases import services as release_services
from releases.models import LeaderboardSample
from tests.frontiersmith.helpers import make_campaign
from tests.frontiersmith.scripted import BASELINE, STRATEGIES, WEAK
from tests.support.browser import chromium_page, log_in
from tests.support.gate_rules import SELECTION_TIME_OK


@pytest.mark.browser
@pytest.mark.slow
def test_an_open_ended_release_is_built_and_scored_on_the_leaderboard(
    transactional_db, live_server, world
):
    campaign = make_campaign(world, rounds=1)
    campaign_launch(campaign_id=campaign.pk)
    campaign = run_inline(campaign_id=campaign.pk)
    assert campaign.state == "completed", campaign.state_reason
    [problem] = campaign.frontier.output_set.problems.all()

    bench = release_services.benchmark_create(default_rules=SELECTION_TIME_OK, name="Open Knapsack")
    draft = release_services.release_create(
        benchmark=bench, campaigns=[campaign], rules={"min_score_spread": 0.01}
    )
    gate = release_services.gate_run_create(release=draft)
    [entry] = [e for e in gate.report if e["public_id"] == problem.public_id]
    rules = {r["rule"]: r for r in entry["rules"]}
    assert rules["score_spread"]["passed"], rules["score_spread"]
    assert "difficulty" not in rules  # scored, so no pass@1 window
    assert not rules["reviews"]["passed"]  # nobody reviewed it yet: the curator decides
    release_services.curation_decide(
        release=draft, problem=problem, include=True, justification="verifier read by hand"
    )
    release = release_services.release_publish(
        release=release_services.release_freeze(release=draft)
    )
    exported = json.loads(next(exports.export_jsonl(release)))
    assert exported["problem"]["comparison"]["verifier"] == problem.comparison["verifier"]

    upload = {
        "ratio-greedy": [STRATEGIES[0], STRATEGIES[2]],
        "baseline-copy": [BASELINE, WEAK],
    }
    for label, codes in upload.items():
        run = leaderboard.run_create_from_upload(
            release=release,
            label=label,
            content=json.dumps({"question_id": problem.public_id, "code_list": codes}),
        )
        run = leaderboard.run_execute(run_id=run.pk)
        assert run.state == "completed", run.error
    good = release.runs.get(label="ratio-greedy")
    samples = list(LeaderboardSample.objects.filter(run=good).order_by("sample_index"))
    assert [s.verdict for s in samples] == ["SC", "SC"]
    means = [s.details["score"] for s in samples]
    assert all(0 < m <= 1 for m in means)
    score = good.summary["score"]
    assert score["avg"]["2"]["value"] == pytest.approx(sum(means) / 2)
    assert score["best"]["2"]["value"] == pytest.approx(max(means))
    assert release.runs.get(label="baseline-copy").summary["score"]["avg"]["2"]["value"] == 0.0

    user_create(username="cora", password="cora-password-1", role="curator")
    base = live_server.url
    with chromium_page() as page:
        page.goto(f"{base}/releases/{bench.slug}/v{release.version}/leaderboard/")
        table = page.locator("#leaderboard")
        expect(table.locator("th", has_text="Avg@k")).to_be_visible()
        expect(table.locator("th", has_text="Best@k")).to_be_visible()
        row = table.locator("tr[data-model='ratio-greedy']")
        expect(row.locator("td.avg-k b")).to_have_text(f"{100 * sum(means) / 2:.1f}%")
        expect(row.locator("td.best-k b")).to_have_text(f"{100 * max(means):.1f}%")
        expect(table.locator("tr[data-model='baseline-copy'] td.avg-k b")).to_have_text("0.0%")

        path = f"/frontiersmith/{campaign.pk}/"
        log_in(page, base, "cora", "cora-password-1", next_url=path)
        expect(page.locator("#false-positive")).to_have_text("false-positive rate 0.333")
        expect(page.locator("#false-negative")).to_have_text("false-negative rate 0.500")
        expect(page.locator("#accepted-count")).to_have_text("1")
        expect(page.locator("#candidates tr[data-decision='not_converged']")).to_have_count(1)
        page.locator("#candidates tr[data-decision='accepted'] a").click()
        expect(page.locator("#build-ledger")).to_contain_text("converged")
        expect(page.locator("h2", has_text="Formulation")).to_be_visible()
