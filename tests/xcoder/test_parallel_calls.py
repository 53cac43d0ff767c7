"""X-Coder's model calls side by side: a group of tasks takes each stage together, its calls
overlap on the loopback server up to the fan-out setting, and every row and decision equals the
run that asks one call at a time (answers are applied in task order). A round's per-seed
evolution calls (the document's default scope) are asked side by side too."""

from __future__ import annotations

import pytest

from evolution.models.campaigns import CampaignState
from evolution.services.campaigns import campaign_launch
from evolution.streams.runner import run_inline
from xcoder import services
from xcoder.models import (
    CandidateSolution,
    EvolutionStep,
    FeatureExtraction,
    FeatureNode,
    SynthTask,
)

from .helpers import SCRIPTED_SETTINGS, Responder, base_table, endpoint, seed_set

pytestmark = pytest.mark.django_db(transaction=True)


def _run(server, name: str):
    server.responder = Responder(base_table(tasks=3))
    campaign = services.xcoder_campaign_create(
        name=name,
        seed_set=seed_set(),
        generator_endpoint=endpoint(server, "generator"),
        solver_endpoints=[endpoint(server, "solver-a"), endpoint(server, "solver-b")],
        settings={
            **SCRIPTED_SETTINGS,
            "num_tasks": 3,
            "style_mix": {"codeforces": 100},
            "test_mode": "both",
            "measure_kept": False,
        },
    )
    campaign_launch(campaign_id=campaign.pk)
    campaign = run_inline(campaign_id=campaign.pk, max_steps=200)
    assert campaign.state == CampaignState.COMPLETED, campaign.state_reason
    return campaign.pk


def _outcome(pk: int) -> dict:
    return {
        "extractions": sorted(
            FeatureExtraction.objects.filter(xcoder_id=pk).values_list(
                "problem__origin_id", "status", "features"
            )
        ),
        "nodes": sorted(
            FeatureNode.objects.filter(xcoder_id=pk).values_list(
                "path", "origin", "evolution_round"
            )
        ),
        "tasks": sorted(
            SynthTask.objects.filter(xcoder_id=pk).values_list(
                "index", "status", "reason_code", "reason", "statement", "tests"
            )
        ),
        "candidates": sorted(
            CandidateSolution.objects.filter(task__xcoder_id=pk).values_list(
                "task__index", "endpoint__name", "sample", "passed_gates", "reason"
            )
        ),
    }


def test_calls_overlap_with_a_fan_out_and_decisions_equal_one_call_at_a_time(fake_server, settings):
    fake_server.latency = 0.05
    settings.ENGINE_FANOUT_THREADS = 1
    one_at_a_time = _run(fake_server, "one at a time")
    assert fake_server.max_in_flight == 1
    asked = fake_server.request_count

    fake_server.reset_counters()
    settings.ENGINE_FANOUT_THREADS = 4
    side_by_side = _run(fake_server, "side by side")
    assert fake_server.request_count == asked
    # Seeds' extractions, the categories' evolutions, the group's stage calls and the
    # candidates overlap, never beyond the fan-out or the endpoints' limit (4 each).
    assert 2 <= fake_server.max_in_flight <= 4

    expected = _outcome(one_at_a_time)
    assert _outcome(side_by_side) == expected
    # The runs decide something: task 0 is accepted, the two later tasks (the same scripted
    # statement) are near-duplicates of it, in both runs.
    statuses = [(index, status, code) for index, status, code, *_ in expected["tasks"]]
    assert statuses == [
        (0, "accepted", ""),
        (1, "rejected", "near_duplicate"),
        (2, "rejected", "near_duplicate"),
    ]


class EvolutionOverlap(Responder):
    """The scripted answers; notes how many requests were in flight when each per-seed evolution
    call arrived (itself included)."""

    def __init__(self, table, server):
        super().__init__(table)
        self.server = server
        self.evolution_in_flight: list[int] = []

    def __call__(self, body, headers):
        if ";evolve;" in headers.get("x-benchforge-key", ""):
            self.evolution_in_flight.append(self.server.in_flight)
        return super().__call__(body, headers)


def _evolve_per_seed(server) -> tuple[int, EvolutionOverlap]:
    from .test_fidelity import table

    responder = server.responder = EvolutionOverlap(table(), server)
    campaign = services.xcoder_campaign_create(
        name=f"per seed {server.request_count}",
        seed_set=seed_set(),
        generator_endpoint=endpoint(server, "generator"),
        solver_endpoints=[endpoint(server, "solver-a"), endpoint(server, "solver-b")],
        settings={"num_tasks": 1, "style_mix": {"codeforces": 100}, "measure_kept": False},
    )
    campaign_launch(campaign_id=campaign.pk)
    campaign = run_inline(campaign_id=campaign.pk, max_steps=60)
    assert campaign.state == CampaignState.COMPLETED, campaign.state_reason
    return campaign.pk, responder


def _evolution(pk: int) -> dict:
    return {
        "steps": sorted(
            EvolutionStep.objects.filter(xcoder_id=pk).values_list(
                "round", "problem__origin_id", "status", "added_breadth", "added_depth", "evolved"
            )
        ),
        "nodes": sorted(
            FeatureNode.objects.filter(xcoder_id=pk).values_list(
                "path", "origin", "evolution_round"
            )
        ),
    }


def test_a_rounds_per_seed_evolutions_overlap_and_merge_as_one_call_at_a_time(
    fake_server, settings
):
    fake_server.latency = 0.1
    settings.ENGINE_FANOUT_THREADS = 1
    one_at_a_time, responder = _evolve_per_seed(fake_server)
    assert responder.evolution_in_flight == [1, 1]

    settings.ENGINE_FANOUT_THREADS = 4
    side_by_side, responder = _evolve_per_seed(fake_server)
    # The document's default scope: one call per seed, both seeds' calls of the round at once.
    assert sorted(responder.evolution_in_flight) == [1, 2]
    expected = _evolution(one_at_a_time)
    assert _evolution(side_by_side) == expected
    assert [(r, seed, status) for r, seed, status, *_ in expected["steps"]] == [
        (1, seed, "ok") for seed in sorted({seed for _, seed, *_ in expected["steps"]})
    ]
