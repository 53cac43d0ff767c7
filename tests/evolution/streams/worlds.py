"""One small scripted world per registered kind, for the contract suite: a draft campaign whose
model answers come from the loopback server (each kind's own test scripts), so every step of
the contract runs the kind's real stages."""

from __future__ import annotations

from collections.abc import Callable

from evolution.models import Campaign, ModelEndpoint, Problem, ProblemSet
from tests.support.fake_openai import FakeOpenAI


def benchevolver(server: FakeOpenAI) -> Campaign:
    from evolution.benchevolver.demo import pack
    from evolution.benchevolver.services import campaign_create
    from tests.evolution.benchevolver.helpers import KeyedResponder, build_world

    server.responder = KeyedResponder(pack.responses())
    seed_set, evolver, panel = build_world(server, seeds=("demo/sort-numbers",))
    return campaign_create(
        name="contract",
        seed_set=seed_set,
        evolver=evolver,
        panel=panel,
        settings={**pack.DEMO_SETTINGS, "max_iters_per_seed": 1},
    )


def reasoning(server: FakeOpenAI) -> Campaign:
    from tests.reasoning.helpers import World, make_campaign, one_type

    server.responder = World()
    return make_campaign(server, launch=False, reasoning_types=one_type(), difficulty_end=2)


def xcoder(server: FakeOpenAI) -> Campaign:
    from tests.xcoder.helpers import (
        SCRIPTED_SETTINGS,
        Responder,
        base_table,
        endpoint,
        seed_set,
    )
    from xcoder.services import xcoder_campaign_create

    server.responder = Responder(base_table())
    return xcoder_campaign_create(
        name="contract",
        seed_set=seed_set(),
        generator_endpoint=endpoint(server, "generator"),
        solver_endpoints=[endpoint(server, "solver-a"), endpoint(server, "solver-b")],
        settings={"num_tasks": 1, "style_mix": {"codeforces": 100}, **SCRIPTED_SETTINGS},
    )


def evosyn(server: FakeOpenAI) -> Campaign:
    from evolution.importers import import_seeds
    from evosyn.services import evosyn_campaign_create
    from tests.evosyn.helpers import (
        CRASHING,
        FIGURE_3,
        SEED,
        SMALL_SETTINGS,
        fenced,
        respond,
        script,
    )

    import_seeds(source="humaneval")
    seed_set = ProblemSet.objects.create(name="evosyn-seeds")
    seed_set.problems.add(Problem.objects.get(origin_dataset="humaneval", origin_id=SEED))
    endpoint = ModelEndpoint.objects.create(
        name="teacher",
        provider="openai",
        base_url=server.base_url,
        model="teacher",
        concurrency_limit=4,
        timeout_s=30,
        max_retries=0,
    )
    respond(server, script(strategist=[fenced(CRASHING), fenced(FIGURE_3)]))
    return evosyn_campaign_create(
        name="contract", seed_set=seed_set, endpoint=endpoint, settings=SMALL_SETTINGS
    )


def frontiersmith(server: FakeOpenAI) -> Campaign:
    from frontiersmith.services import frontier_campaign_create
    from tests.frontiersmith.helpers import SMALL, problem
    from tests.frontiersmith.scripted import SEED_STATEMENT, Script

    server.responder = Script()

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
    closed.problems.add(problem("c1", "Print YES if a subset has weight exactly W."))
    opened = ProblemSet.objects.create(name="labelled open")
    opened.problems.add(problem("o1", "Pack rectangles into a strip of minimum height."))
    return frontier_campaign_create(
        name="contract",
        seed_set=seeds,
        mutator_endpoint=endpoint("mutator"),
        solver_endpoint=endpoint("solver"),
        settings={**SMALL, "rounds": 1},
        calibration_closed=closed,
        calibration_open=opened,
    )


WORLDS: dict[str, Callable[[FakeOpenAI], Campaign]] = {
    "benchevolver": benchevolver,
    "reasoning": reasoning,
    "xcoder": xcoder,
    "evosyn": evosyn,
    "frontiersmith": frontiersmith,
}
