"""Shared pieces of the living-benchmark tests: a loopback panel of two models on the crafted
release (E-OK, E-OVERRIDE, S2), the endpoints pointing at it, and the scripted evolver of a
re-evolution campaign the engine runs on the saturated problems."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from evolution.benchevolver.demo import answers as demo_answers
from evolution.benchevolver.demo.stories import array_sum, sort_numbers
from evolution.models import ModelEndpoint
from tests.support.answers import fenced
from tests.support.fake_openai import Fault

from .builders import SUM_CODE, WRONG_CODE


class Panel:
    """``weak`` solves E-OK and E-OVERRIDE on samples 0-2 of 4 (pass@1 0.75, exactly the gate's
    bound: not saturated); ``strong`` solves both every time. Neither solves S2."""

    def __call__(self, body, headers):
        prompt = body["messages"][-1]["content"]
        key = headers.get("X-BenchForge-Key") or headers.get("x-benchforge-key", "")
        sample = int(key.rsplit("sample=", 1)[1])
        if "Task S2." in prompt:
            return fenced(WRONG_CODE)
        if body["model"] == "strong" or sample < 3:
            return fenced(SUM_CODE)
        return fenced(WRONG_CODE)


def endpoint(server, name: str) -> ModelEndpoint:
    return ModelEndpoint.objects.create(
        name=name,
        provider="openai",
        base_url=server.base_url,
        model=name,
        concurrency_limit=4,
        timeout_s=30,
        max_retries=0,
        release_date=(timezone.now() - timedelta(days=1)).date(),
    )


# --- a re-evolution campaign run by the engine ------------------------------------------------

# The statements are the demo pack's array ones: its validator checks their constraints.
INPUT_VALIDATOR = demo_answers.ARRAY_VALIDATOR

# What the evolver proposes for each saturated seed (one round each): a mutated solution, its
# statement with examples, and the witnesses that vet it. Different families, so neither
# acceptance needs the larger gain a family reused across lineages does.
MUTATIONS = {
    "E-OK": {
        "idea": "Find the best contiguous subarray instead of summing everything (Kadane).",
        "weakness": "Summing every value ignores that dropping a negative stretch can help.",
        "family": "dynamic programming over prefixes",
        "code": array_sum.KADANE,
        "title": "Maximum Subarray Sum",
        "statement": array_sum.MAX_SUBARRAY_STATEMENT,
        "examples": ["5\n1 -2 3 4 -1\n", "3\n-5 -1 -3\n"],
        "brute_force": array_sum.SUBARRAY_NAIVE,
        "oracle": ["7", "-1"],
    },
    "E-OVERRIDE": {
        "idea": "Print each distinct value once, largest first.",
        "weakness": "A running total says nothing about which values repeat.",
        "family": "deduplication",
        "code": sort_numbers.DISTINCT_DESC,
        "title": "Distinct Values, Largest First",
        "statement": sort_numbers.DISTINCT_DESC_STATEMENT,
        "examples": ["5\n3 1 3 2 1\n", "1\n7\n"],
        "brute_force": sort_numbers.DISTINCT_DESC_BRUTE,
        "oracle": ["3 2 1", "7"],
    },
}

# Small, fast campaign settings: one round per seed and few large inputs (a brute force runs
# into the time-out on those, which the engine records as infeasible).
REEVOLUTION_SETTINGS = {
    "max_iters_per_seed": 1,
    "program_gen_small_inputs": 3,
    "program_gen_medium_inputs": 3,
    "program_gen_large_inputs": 1,
    "program_gen_stress_inputs": 1,
    "execution_timeout": 2.0,
}


class Evolution(Panel):
    """The loopback world of a re-evolution campaign, on top of ``Panel``'s leaderboard answers.

    The evolver answers the engine's stages from a script per seed (``MUTATIONS``; an unknown
    request gets a 404, recorded in ``missing``). The panel answers the engine as it answers
    the leaderboard: on a saturated seed (round 0) ``weak`` solves attempts 0-2 of 4 and
    ``strong`` all (7/8, level 2); on the evolved problem only ``strong`` solves, on attempts
    0-1 of 4, and every other answer is the old problem's program (2/8, level 4): the new
    problems come out harder for the same panel."""

    def __init__(self, seeds: dict[str, str]):
        """``seeds``: the engine's seed key (public id) -> key of ``MUTATIONS``."""
        self.table: dict[tuple[str, str], str] = {}
        self.solutions: dict[str, str] = {}
        self.missing: list[tuple[str, str]] = []
        for seed, name in seeds.items():
            m = MUTATIONS[name]
            self.solutions[seed] = m["code"]

            def put(role: str, key: str, content: str, seed=seed) -> None:
                self.table[(role, f"seed={seed};{key};role={role}")] = content

            put(
                "mutator",
                "round=1",
                demo_answers.mutation(m["idea"], m["weakness"], m["family"], m["code"]),
            )
            put(
                "writer", "round=1", demo_answers.written(m["title"], m["statement"], m["examples"])
            )
            put("test_generator", "round=1;try=0", demo_answers.code(array_sum.ARRAY_GENERATOR))
            put("input_validator", "round=1;repair=0", demo_answers.code(INPUT_VALIDATOR))
            put("brute_force", "round=1;repair=0", demo_answers.code(m["brute_force"]))
            put("oracle", "round=1;repair=0", demo_answers.oracle(m["oracle"]))
            put("judge", "round=1", demo_answers.judge(reasons=["a real algorithmic step up"]))

    def __call__(self, body, headers):
        key = headers.get("X-BenchForge-Key") or headers.get("x-benchforge-key", "")
        if "sample=" in key:  # a leaderboard run
            return super().__call__(body, headers)
        role = headers.get("X-BenchForge-Role") or headers.get("x-benchforge-role", "")
        if role == "solver":
            parts = dict(part.split("=", 1) for part in key.split(";"))
            attempt, model = int(parts["attempt"]), parts["model"]
            if parts["round"] == "0":
                return fenced(SUM_CODE if model == "strong" or attempt < 3 else WRONG_CODE)
            solved = model == "strong" and attempt % 4 < 2
            return demo_answers.code(self.solutions[parts["seed"]] if solved else SUM_CODE)
        answer = self.table.get((role, key))
        if answer is None:
            self.missing.append((role, key))
            return Fault.http_status(404, '{"error": "no scripted answer for this request"}')
        return answer


def remeasured_release():
    """A published release re-measured twice inline: by ``weak`` alone, then with ``strong``
    too (E-OK and E-OVERRIDE end saturated). Needs committed data (transactional_db)."""
    from releases import living
    from releases.models import PanelSeat
    from tests.support.fake_openai import FakeOpenAI

    from .helpers import frozen_release

    world, release = frozen_release(publish=True)
    with FakeOpenAI() as server:
        server.responder = Panel()
        for name in ("weak", "strong"):
            PanelSeat.objects.create(
                benchmark=release.benchmark, endpoint=endpoint(server, name), samples=4
            )
            r = living.remeasurement_create(
                benchmark=release.benchmark, trigger="panel_change", reason=f"{name} joined"
            )
            assert living.remeasurement_execute(remeasurement_id=r.pk).state == "completed"
    return world, release
