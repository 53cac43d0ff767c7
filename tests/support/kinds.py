"""Finished campaigns of the sibling kinds the demo does not build (EvoSyn, FrontierSmith),
each run inline against the loopback model server with the scripted answers of its own
tests, for page crawls over every kind."""

from __future__ import annotations

from evolution.models import ModelEndpoint, Problem, ProblemSet
from tests.support.fake_openai import FakeOpenAI


def evosyn_campaign():
    from evolution.importers import import_seeds
    from evolution.services import campaigns as campaign_services
    from evosyn import services
    from tests.evosyn.conftest import (
        CRASHING,
        FIGURE_3,
        SEED,
        SMALL_SETTINGS,
        fenced,
        respond,
        script,
    )

    if not Problem.objects.filter(origin_dataset="humaneval", origin_id=SEED).exists():
        import_seeds(source="humaneval")
    seed_set, _ = ProblemSet.objects.get_or_create(name="evosyn-seeds")
    seed_set.problems.add(Problem.objects.get(origin_dataset="humaneval", origin_id=SEED))
    with FakeOpenAI() as server:
        endpoint = ModelEndpoint.objects.create(
            name="evosyn-teacher",
            provider="openai",
            base_url=server.base_url,
            model="teacher",
            concurrency_limit=4,
            timeout_s=30,
            max_retries=0,
        )
        respond(server, script(strategist=[fenced(CRASHING), fenced(FIGURE_3)]))
        campaign = services.evosyn_campaign_create(
            name="evosyn crawl", seed_set=seed_set, endpoint=endpoint, settings=SMALL_SETTINGS
        )
        campaign_services.campaign_launch(campaign_id=campaign.pk)
        return services.evosyn_run_inline(campaign_id=campaign.pk, max_steps=60)


def frontiersmith_campaign():
    from evolution.services.campaigns import campaign_launch
    from frontiersmith import services
    from tests.frontiersmith.conftest import SMALL
    from tests.frontiersmith.scripted import SEED_STATEMENT, Script

    def problem(title: str, statement: str) -> Problem:
        return Problem.objects.create(title=title, statement=statement, harness="stdio")

    with FakeOpenAI() as server:
        server.responder = Script()

        def endpoint(name):
            return ModelEndpoint.objects.create(
                name=f"frontier-{name}",
                provider="openai",
                base_url=server.base_url,
                model=name,
                concurrency_limit=4,
                timeout_s=30,
                max_retries=0,
            )

        seeds = ProblemSet.objects.create(name="frontier crawl seeds")
        seeds.problems.add(problem("Exact subset weight", SEED_STATEMENT))
        closed = ProblemSet.objects.create(name="frontier crawl closed")
        closed.problems.add(
            problem("c1", "Print YES if a subset has weight exactly W."),
            problem("c2", "Sort the numbers; print them. exactly W lines."),
            problem("c3", "TRICKY: print the sum of the inputs."),
        )
        opened = ProblemSet.objects.create(name="frontier crawl open")
        opened.problems.add(
            problem("o1", "Pack rectangles into a strip of minimum height."),
            problem("o2", "MURKY: route vans to minimise total distance."),
        )
        campaign = services.frontier_campaign_create(
            name="frontier crawl",
            seed_set=seeds,
            mutator_endpoint=endpoint("mutator"),
            solver_endpoint=endpoint("solver"),
            settings={**SMALL, "rounds": 1},
            calibration_closed=closed,
            calibration_open=opened,
        )
        campaign_launch(campaign_id=campaign.pk)
        return services.frontier_run_inline(campaign_id=campaign.pk)
