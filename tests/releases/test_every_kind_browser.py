"""Every synthesis method's problems measured, reviewed and released, from a real Chromium.

Real campaigns run first, in this process, against the loopback model server with every
program executed in the sandbox: an X-Coder campaign and an EvoSyn campaign, each with a
measurement panel (one model that solves, one that does not, so pass@1 = 0.5), and a
FrontierSmith campaign. The BenchEvolver lineage is built from the gate tests' builders (its
engine is tested in tests/evolution/benchevolver). Then, in the browser: a curator builds one review
round from the four campaigns; the two reviewers rate every problem; the curator creates the
release, runs the gate (X-Coder and EvoSyn problems pass on their measured pass@1, no curation
decision), freezes, publishes and queues a leaderboard evaluation; a visitor reads the release
and its leaderboard.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from evolution.measurement.models import Measurement
from evolution.models import Campaign, ModelEndpoint, Problem, ProblemSet
from evolution.models.campaigns import CampaignState
from evolution.services import campaigns as campaign_services
from evolution.streams.runner import run_inline
from evosyn import services as evosyn
from frontiersmith import services as frontiersmith
from releases import leaderboard, services
from releases.models import CurationDecision, LeaderboardRun, Release, ReleaseState
from review.models import GroupItem, ReviewRound
from tests.evolution.benchevolver.helpers import KeyedResponder
from tests.evolution.measurement.helpers import make_panel
from tests.evosyn.helpers import (
    CRASHING,
    FIGURE_3,
    SMALL_SETTINGS,
    SUM_EVENS_SOLUTIONS,
    script,
)
from tests.frontiersmith.helpers import SMALL as FRONTIER_SMALL
from tests.frontiersmith.scripted import SEED_STATEMENT, Script
from tests.support.answers import fenced
from tests.support.browser import chromium_page, log_in
from tests.support.fake_openai import FakeOpenAI, Fault
from tests.support.gate_rules import SELECTION_TIME_OK
from tests.xcoder.helpers import (
    CORRECT,
    SCRIPTED_SETTINGS,
    WRONG_LARGE,
    Responder,
    base_table,
    seed_set,
)
from tests.xcoder.helpers import endpoint as xcoder_endpoint
from xcoder import services as xcoder

from .builders import SUM_CODE, evolved_problem, seed_problem

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SUM_EVENS_WRONG = SUM_EVENS_SOLUTIONS[2]
# What each model answers a panel attempt or a leaderboard sample, by what the statement says.
SOLUTIONS = {
    "Lantern Festival": {"strong": CORRECT, "weak": WRONG_LARGE},
    "sum_evens": {
        "strong": fenced(SUM_EVENS_SOLUTIONS[0]),
        "weak": fenced(SUM_EVENS_WRONG),
    },
    "Print the sum of the integers given": {"strong": fenced(SUM_CODE), "weak": fenced("print(0)")},
}


class World:
    """One loopback server for every kind: panel and leaderboard answers by statement and
    model; everything else from the kinds' own scripted tables."""

    def __init__(self):
        self.xcoder = Responder(base_table())
        self.evosyn = KeyedResponder(script(strategist=[fenced(CRASHING), fenced(FIGURE_3)]))
        self.frontier = Script()

    def __call__(self, body, headers):
        role = headers.get("X-BenchForge-Role", headers.get("x-benchforge-role", ""))
        key = headers.get("X-BenchForge-Key", headers.get("x-benchforge-key", ""))
        if body["model"] in ("strong", "weak") and role == "solver":
            prompt = "\n".join(m["content"] for m in body["messages"])
            for marker, by_model in SOLUTIONS.items():
                if marker in prompt:
                    return by_model[body["model"]]
            return "no idea"
        if key.startswith("xcoder;"):
            return self.xcoder(body, headers)
        if key.startswith("evosyn;"):
            return self.evosyn(body, headers)
        answer = self.frontier(body, headers)
        if isinstance(answer, Fault):
            raise AssertionError(f"unscripted request {role} {key}")
        return answer


def endpoint(server: FakeOpenAI, name: str) -> ModelEndpoint:
    return xcoder_endpoint(server, name)


def run_campaigns(server: FakeOpenAI, admin) -> dict[str, Campaign]:
    panel = make_panel(server, ["strong", "weak"])

    xc = xcoder.xcoder_campaign_create(
        name="Synth X",
        seed_set=seed_set(),
        generator_endpoint=endpoint(server, "generator"),
        solver_endpoints=[endpoint(server, "solver-a"), endpoint(server, "solver-b")],
        settings={
            "num_tasks": 1,
            "style_mix": {"codeforces": 100},
            "measure_k": 2,
            **SCRIPTED_SETTINGS,
        },
        panel=panel,
        created_by=admin,
    )

    from evolution.importers import import_seeds

    import_seeds(source="humaneval")
    he_seeds = ProblemSet.objects.create(name="evosyn-seeds")
    he_seeds.problems.add(Problem.objects.get(origin_dataset="humaneval", origin_id="HumanEval/0"))
    es = evosyn.evosyn_campaign_create(
        name="Synth E",
        seed_set=he_seeds,
        endpoint=endpoint(server, "teacher"),
        settings={**SMALL_SETTINGS, "measure_k": 2},
        panel=panel,
        created_by=admin,
    )

    fs_seeds = ProblemSet.objects.create(name="closed seeds")
    fs_seeds.problems.add(
        Problem.objects.create(
            title="Exact subset weight", statement=SEED_STATEMENT, harness="stdio"
        )
    )
    closed = ProblemSet.objects.create(name="labelled closed")
    closed.problems.add(
        Problem.objects.create(
            title="c1", statement="Print YES if a subset has weight exactly W.", harness="stdio"
        )
    )
    opened = ProblemSet.objects.create(name="labelled open")
    opened.problems.add(
        Problem.objects.create(
            title="o1", statement="Pack rectangles into a strip of minimum height.", harness="stdio"
        )
    )
    fs = frontiersmith.frontier_campaign_create(
        name="Synth F",
        seed_set=fs_seeds,
        mutator_endpoint=endpoint(server, "mutator"),
        solver_endpoint=endpoint(server, "solver"),
        settings={**FRONTIER_SMALL, "rounds": 1},
        calibration_closed=closed,
        calibration_open=opened,
        created_by=admin,
    )

    for campaign in (xc, es, fs):
        campaign_services.campaign_launch(campaign_id=campaign.pk)
    run_inline(campaign_id=xc.pk, max_steps=80)
    run_inline(campaign_id=es.pk, max_steps=80)
    run_inline(campaign_id=fs.pk, max_steps=200)
    out = {"xcoder": xc, "evosyn": es, "frontiersmith": fs}
    for kind, campaign in out.items():
        campaign.refresh_from_db()
        assert campaign.state == CampaignState.COMPLETED, (kind, campaign.state_reason)
    return out


def bench_lineage() -> Campaign:
    from tests.factories import CampaignFactory, ProblemSetFactory

    campaign = CampaignFactory(name="Evolve B", seed_set=ProblemSetFactory(name="bench seeds"))
    seed = seed_problem(campaign, "BSEED", 2, 8)
    evolved_problem(campaign, "BEVOLVED", seed, 3, 8)
    return campaign


def rate_every_group(page, base: str) -> int:
    """Rate every problem of every group in the reviewer's queue, then submit each group."""
    groups = 0
    page.goto(f"{base}/review/")
    links = [a.get_attribute("href") for a in page.locator('a[href^="/review/g/"]').all()]
    for href in links:
        page.goto(f"{base}{href}")
        tabs = page.locator("nav.problem-tabs a")
        for index in range(tabs.count()):
            tabs.nth(index).click()
            section = page.locator("section.problem:not(.hidden)")
            item = section.get_attribute("data-item")
            for scale, value in (("clarity", 4), ("novelty", 3), ("difficulty", 4), ("quality", 4)):
                section.locator(f'input[name="{item}-{scale}"][value="{value}"]').check()
            section.locator(f'input[name="{item}-validity"][value="valid"]').check()
            section.locator(f'select[name="{item}-cf_rating"]').select_option("1900")
            section.locator(f'input[name="{item}-tags"]').fill("greedy")
            section.locator(f'textarea[name="{item}-justification"]').fill("Clear and fair.")
        page.locator('input[name="certify_no_ai"]').check()
        page.locator('#review-form button[type="submit"]').click()
        # The page the submit leads to says so; going on before it (a load state the current
        # page already had) could abort the submit under load.
        expect(page.locator(".messages")).to_contain_text(
            re.compile("Submitted. Next group|your reviews of this group are submitted"),
            timeout=30_000,
        )
        groups += 1
    return groups


def test_every_kind_is_reviewed_gated_released_and_on_the_leaderboard(
    transactional_db, live_server, personas
):
    with FakeOpenAI() as server:
        server.responder = World()
        campaigns = run_campaigns(server, personas.admin.user)
        bench = bench_lineage()
        xproblem = Problem.objects.get(method="xcoder")
        eproblems = list(Problem.objects.filter(method="evosyn"))
        fproblems = list(Problem.objects.filter(method="frontiersmith"))
        assert eproblems and fproblems
        for p in [xproblem, *eproblems]:
            m = Measurement.objects.get(problem=p)
            assert (m.state, m.passes, m.attempts) == ("completed", 2, 4)
        curator = personas.curator
        base = live_server.url
        names = {"Evolve B", "Synth X", "Synth E", "Synth F"}

        with chromium_page() as page:
            # The curator builds one round from the four campaigns, previews, creates it.
            log_in(page, base, curator.user.username, curator.password, "/review/rounds/new/")
            page.fill("input[name=name]", "Every kind")
            for label in page.locator("#source-campaigns label").all():
                if label.inner_text().split(" · ")[0].strip() in names:
                    label.locator("input").check()
            for reviewer in ("rae_reviewer", "rob_reviewer"):
                page.locator("label", has_text=reviewer).locator("input").check()
            page.fill("input[name=reviewers_per_group]", "1")
            page.click("button[name=preview]")
            for method in ("benchevolver", "xcoder", "evosyn", "frontiersmith"):
                expect(page.locator(f'tr.plan-row[data-method="{method}"]').first).to_be_visible()
            page.click("button.primary:has-text('Create round')")
            page.wait_for_url(re.compile(r"/review/rounds/\d+/$"))

        review_round = ReviewRound.objects.get(name="Every kind")
        methods = set(
            GroupItem.objects.filter(group__round=review_round).values_list(
                "problem__method", flat=True
            )
        )
        assert {"benchevolver", "xcoder", "evosyn", "frontiersmith"} <= methods

        rated = 0
        for persona in (personas.reviewer_a, personas.reviewer_b):
            with chromium_page() as page:
                log_in(page, base, persona.user.username, persona.password, "/review/")
                rated += rate_every_group(page, base)
        assert rated == review_round.groups.count()
        assert not review_round.groups.filter(assignments__submitted_at__isnull=True).exists()

        with chromium_page() as page:
            log_in(page, base, curator.user.username, curator.password, "/curate/releases/")
            page.fill("input[name=name]", "Every Kind Bench")
            page.click("button:has-text('Create benchmark')")
            page.wait_for_load_state("networkidle")
            page.locator("select[name=campaigns]").select_option(
                [str(c.pk) for c in (bench, *campaigns.values())]
            )
            page.click("button:has-text('Create draft')")
            page.wait_for_url(re.compile(r"/curate/releases/\d+/$"))
            # No independent evaluation in this world: the curator lets the gate read the
            # selection-time figures, saying why (the gate requires the independent ones).
            draft = Release.objects.get(benchmark__name="Every Kind Bench")
            services.release_update(release=draft, rules={**draft.gate_rules, **SELECTION_TIME_OK})
            page.reload()
            page.click("#run-gate")
            for problem in [xproblem, *eproblems]:
                row = page.locator(f'tr.gate-row[data-public-id="{problem.public_id}"]')
                expect(row).to_contain_text("included")
                expect(row).to_contain_text("pass@1 0.500 (2/4)")
            page.click("#freeze")
            page.click("#freeze-confirm")
            expect(page.locator("#release-state")).to_have_text("frozen")
            page.click("#publish")
            page.click("#publish-confirm")
            expect(page.locator("#release-state")).to_have_text("published")
            page.locator("select[name=endpoint]").select_option(label="strong")
            page.fill("input[name=samples]", "1")
            page.click("button:has-text('Queue evaluation')")
            page.wait_for_load_state("networkidle")

        release = Release.objects.get(benchmark__name="Every Kind Bench")
        assert release.state == ReleaseState.PUBLISHED
        assert not CurationDecision.objects.filter(release=release).exists()  # no override
        released = set(release.items.values_list("problem_id", flat=True))
        assert {xproblem.pk, *(p.pk for p in eproblems)} <= released
        assert released & {p.pk for p in fproblems}
        assert Problem.objects.filter(pk__in=released, method="benchevolver").exists()

        # The evaluation the curator queued, run here (its Celery task calls the same service).
        run = LeaderboardRun.objects.get(release=release)
        assert leaderboard.run_execute(run_id=run.pk).state == "completed"
        judged = set(run.samples.values_list("item__problem_id", flat=True))
        assert {xproblem.pk, *(p.pk for p in eproblems)} <= judged

        with chromium_page() as visitor:
            slug, version = release.benchmark.slug, release.version
            visitor.goto(f"{base}/releases/{slug}/v{version}/")
            for problem in [xproblem, *eproblems]:
                expect(visitor.locator("body")).to_contain_text(problem.title)
            visitor.goto(f"{base}/releases/{slug}/v{version}/leaderboard/")
            expect(visitor.locator('tr[data-model="strong"]')).to_be_visible()
