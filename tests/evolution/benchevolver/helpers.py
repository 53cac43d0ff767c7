"""The engine against the loopback OpenAI-compatible server: every model answer travels over
real HTTP; execution, validation, panel measurement and decisions are live."""

from __future__ import annotations

import pytest
from django.db import connection

from evolution.benchevolver.demo import pack
from evolution.importers import import_seeds
from evolution.models import ModelEndpoint, Panel, PanelMember, Problem, ProblemSet
from tests.support.fake_openai import FakeOpenAI, Fault

ENGINE_TABLES = [
    "evolution_llmcall",
    "evolution_globalmemoryentry",
    "evolution_solverattempt",
    "evolution_candidate",
    "evolution_lineage",
    "evolution_campaign",
    "evolution_panelmember",
    "evolution_panel",
    "evolution_modelendpoint",
    "evolution_testcase",
    "evolution_problemset_problems",
    "evolution_problemset",
    "evolution_problem",
]


def truncate_engine_tables() -> None:
    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE " + ", ".join(ENGINE_TABLES) + " RESTART IDENTITY CASCADE")


class KeyedResponder:
    """Answers by (role, replay key) from a table; unknown keys get a 404 like a missing route,
    which the client records as a failed call."""

    def __init__(self, table: dict[tuple[str, str], object]):
        self.table = dict(table)
        self.seen: list[tuple[str, str]] = []

    def __call__(self, body, headers):
        role = headers.get("X-BenchForge-Role", headers.get("x-benchforge-role", ""))
        key = headers.get("X-BenchForge-Key", headers.get("x-benchforge-key", ""))
        self.seen.append((role, key))
        answer = self.table.get((role, key))
        if answer is None:
            return Fault.http_status(404, '{"error": "no scripted answer for this request"}')
        return answer


def build_world(
    server: FakeOpenAI, *, seeds: tuple[str, ...] | None = None
) -> tuple[ProblemSet, ModelEndpoint, Panel]:
    import_seeds(source="humaneval")
    import_seeds(source="jsonl", path=str(pack.SEEDS_FILE), set_name="demo-pack")
    seed_set = ProblemSet.objects.get(name="demo-pack")
    seed_set.problems.add(
        *Problem.objects.filter(origin_dataset="humaneval", origin_id__in=pack.HUMANEVAL_SEEDS)
    )
    if seeds is not None:
        keep = Problem.objects.filter(problem_sets=seed_set, origin_id__in=seeds)
        seed_set.problems.set(keep)

    def endpoint(name: str, model: str) -> ModelEndpoint:
        return ModelEndpoint.objects.create(
            name=name,
            provider="openai",
            base_url=server.base_url,
            model=model,
            concurrency_limit=8,
            timeout_s=30,
            max_retries=1,
        )

    evolver = endpoint("evolver", "evolver")
    panel = Panel.objects.create(name="panel")
    for model in pack.SOLVER_MODELS:
        PanelMember.objects.create(panel=panel, endpoint=endpoint(model, model), attempts=4)
    return seed_set, evolver, panel


@pytest.fixture
def fake_server():
    with FakeOpenAI() as server:
        yield server
