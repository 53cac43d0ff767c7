"""A FrontierSmith campaign against the loopback OpenAI-compatible server: every model answer
travels over real HTTP; generators, solutions and verifiers run in the real sandbox."""

from __future__ import annotations

import pytest

from evolution.models import ModelEndpoint, Problem, ProblemSet
from frontiersmith import services
from tests.frontiersmith.scripted import SEED_STATEMENT, Script
from tests.support.fake_openai import FakeOpenAI

SMALL = {
    "rounds": 2,
    "budget_candidates": 4,
    "n_div": 3,
    "n_final": 1,
    "solutions_per_candidate": 3,
    "tests_per_candidate": 3,
    "agent_rounds": 2,
    "max_build_attempts": 2,
    "execution_timeout": 3.0,
    "memory_mb": 256,
}


def problem(title: str, statement: str) -> Problem:
    return Problem.objects.create(title=title, statement=statement, harness="stdio")


@pytest.fixture
def script():
    return Script()


@pytest.fixture
def world(db, script):
    with FakeOpenAI() as server:
        server.responder = script

        def endpoint(name):
            return ModelEndpoint.objects.create(
                name=name,
                provider="openai",
                base_url=server.base_url,
                model=name,
                concurrency_limit=4,
                timeout_s=30,
                max_retries=0,
            )

        seeds = ProblemSet.objects.create(name="closed seeds")
        seeds.problems.add(problem("Exact subset weight", SEED_STATEMENT))
        closed = ProblemSet.objects.create(name="labelled closed")
        closed.problems.add(
            problem("c1", "Print YES if a subset has weight exactly W."),
            problem("c2", "Sort the numbers; print them. exactly W lines."),
            problem("c3", "TRICKY: print the sum of the inputs."),
        )
        opened = ProblemSet.objects.create(name="labelled open")
        opened.problems.add(
            problem("o1", "Pack rectangles into a strip of minimum height."),
            problem("o2", "MURKY: route vans to minimise total distance."),
        )
        yield {
            "server": server,
            "seeds": seeds,
            "closed": closed,
            "open": opened,
            "mutator": endpoint("mutator"),
            "solver": endpoint("solver"),
        }


def make_campaign(world, **overrides):
    return services.frontier_campaign_create(
        name="open-ended knapsack",
        seed_set=world["seeds"],
        mutator_endpoint=world["mutator"],
        solver_endpoint=world["solver"],
        settings={**SMALL, **overrides},
        calibration_closed=world["closed"],
        calibration_open=world["open"],
    )
