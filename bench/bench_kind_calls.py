"""Parallel model calls of the sibling kinds: calls per second of an X-Coder, a FrontierSmith, an
EvoSyn and a reasoning-question campaign against the loopback model server, as a ratio of the
physical bound. ``python -m bench kind_calls`` runs it alone (``--quick``: smaller campaigns).

Each campaign runs in a throwaway database, driven step by step by the runner's own ``advance``
(what a worker and ``run_campaign --inline`` call), against the loopback server answering with
authored answers (``bench/loopback_answers.py``, ``tests/frontiersmith/scripted.py``) after the
given latency. Every endpoint allows W concurrent calls, W being the fan-out setting
(``ENGINE_FANOUT_THREADS``, 8 by default), so the physical bound is W / latency calls per
second.

The window is the wall time of the campaign's model-bound steps: every step that made a model
call, all of its time included (claiming the stream, loading, the calls, parsing, storing,
releasing), except the steps of the stages named in ``EXECUTION_STAGES``, whose time is the
sandbox's (FrontierSmith's build runs the generator, verifier and solutions; its two calls per
attempt are left out of the count with it). Steps without calls (verifying candidates in the
sandbox, merging the tree, selections) are not in the window either: the same split as the
BenchEvolver row, whose sandbox steps stay queued. The whole campaign's wall time and its
calls are reported beside it.

A kind's campaign is one stream: its steps run one after the other in one process, so every
call's processor work (the gateway's request, its LLMCall row and counters, the limiter, the
stage's parsing and storing) shares one core's worth of the GIL. The 0 ms row of each kind is
that ceiling on the machine at the time of the run, and "process CPU / window" says how much of
a core the steps got: on a machine shared with other work the 250 ms ratio is bounded by them.
"""

from __future__ import annotations

import time

from bench.support import LoopbackServer, throughput_row, throwaway_database

NAME = "Parallel model calls of each kind (bench_kind_calls)"
EXECUTION_STAGES = {"frontiersmith": {"build"}}
MAX_STEPS = 3000


def _endpoint(base_url: str, name: str, width: int):
    from evolution.models import ModelEndpoint

    return ModelEndpoint.objects.create(
        name=name,
        base_url=base_url,
        model=name,
        concurrency_limit=width,
        timeout_s=30,
        max_retries=1,
    )


def xcoder_world(base_url: str, width: int, quick: bool):
    from evolution.models import Problem, ProblemSet
    from evolution.services.campaigns import campaign_launch
    from xcoder import services

    seeds = ProblemSet.objects.create(name="bench seeds")
    seeds.problems.add(
        *[
            Problem.objects.create(
                title=f"seed {i}",
                statement=f"Print the sum of the {i + 2} largest integers.",
                reference_solution="print(1)\n",
                harness="stdio",
                origin_dataset="bench",
                origin_id=f"seed-{i}",
            )
            for i in range(width)
        ]
    )
    campaign = services.xcoder_campaign_create(
        name="throughput",
        seed_set=seeds,
        generator_endpoint=_endpoint(base_url, "generator", width),
        solver_endpoints=[_endpoint(base_url, "solver", width)],
        settings={
            "num_tasks": 16 if quick else 32,
            "candidates_per_endpoint": 8,
            "style_mix": {"codeforces": 100},
            "test_mode": "prompt",
            # The authored statements share one template (only the title and a number vary).
            "near_duplicate_threshold": 1.0,
            "measure_kept": False,
        },
    )
    campaign_launch(campaign_id=campaign.pk)
    return campaign


def frontiersmith_world(base_url: str, width: int, quick: bool):
    from evolution.models import Problem, ProblemSet
    from evolution.services.campaigns import campaign_launch
    from frontiersmith import services
    from tests.frontiersmith.scripted import SEED_STATEMENT

    seeds = ProblemSet.objects.create(name="bench seeds")
    seeds.problems.add(
        *[
            Problem.objects.create(
                title=f"subset weight {i}", statement=SEED_STATEMENT, harness="stdio"
            )
            for i in range(2)
        ]
    )
    campaign = services.frontier_campaign_create(
        name="throughput",
        seed_set=seeds,
        mutator_endpoint=_endpoint(base_url, "mutator", width),
        solver_endpoint=_endpoint(base_url, "solver", width),
        settings={
            "rounds": 1,
            "budget_candidates": width * (2 if quick else 4),
            "n_div": 1,
            "n_final": 1,
            "solutions_per_candidate": 4,
            "tests_per_candidate": 3,
            "max_build_attempts": 1,
            "execution_timeout": 3.0,
            "memory_mb": 256,
        },
    )
    campaign_launch(campaign_id=campaign.pk)
    return campaign


def evosyn_world(base_url: str, width: int, quick: bool):
    from evolution.importers import import_seeds
    from evolution.models import Problem, ProblemSet
    from evolution.services.campaigns import campaign_launch
    from evosyn import services
    from evosyn.demo import pack

    import_seeds(source="humaneval")
    seeds = ProblemSet.objects.create(name="bench seeds")
    seeds.problems.add(Problem.objects.get(origin_dataset="humaneval", origin_id=pack.SEED))
    campaign = services.evosyn_campaign_create(
        name="throughput",
        seed_set=seeds,
        endpoint=_endpoint(base_url, "teacher", width),
        settings={
            # The document's M = N = 16; every authored testing is usable, so one call each.
            "solutions_per_problem": 16,
            "tests_per_problem": 16,
            "test_calls": 1,
            "max_iterations": 2,
            "num_islands": 2,
            "synth_problems": 8 if quick else 16,
            # The authored statements share one template (only a number varies).
            "duplicate_threshold": 1.0,
            "measure_kept": False,
        },
    )
    campaign_launch(campaign_id=campaign.pk)
    return campaign


def reasoning_world(base_url: str, width: int, quick: bool):
    from evolution.services.campaigns import campaign_launch
    from reasoning.services import reasoning_campaign_create

    campaign = reasoning_campaign_create(
        name="throughput",
        generation_endpoint=_endpoint(base_url, "generator", width),
        answering_endpoint=_endpoint(base_url, "answerer", width),
        judge_endpoints=[_endpoint(base_url, f"judge {i}", width) for i in range(3)],
        # The document's eight reasoning types, one question per cell, three judges.
        settings={"difficulty_start": 1, "difficulty_end": 5 if quick else 10},
    )
    campaign_launch(campaign_id=campaign.pk)
    return campaign


def measure(label: str, world, responder: str, latency_ms: float, quick: bool) -> dict:
    from django.db.models import Count

    from evolution.llm.fanout import fanout_threads
    from evolution.models import Campaign, LLMCall
    from evolution.models.campaigns import CampaignState
    from evolution.streams.kinds import kind_for
    from evolution.streams.runner import active_stream_ids, advance

    width = fanout_threads()
    server = LoopbackServer(latency_ms, responder=responder)
    try:
        with throwaway_database(label.split()[0].lower().replace("-", "")):
            campaign = world(server.base_url, width, quick)
            Campaign.objects.filter(pk=campaign.pk).update(state=CampaignState.RUNNING)
            kind = kind_for(campaign.kind)
            excluded = EXECUTION_STAGES.get(kind.name, set())
            steps: list[tuple[str, str, int, float, float]] = []
            started = time.perf_counter()
            finished = False
            while len(steps) < MAX_STEPS:
                current = Campaign.objects.get(pk=campaign.pk)
                finished = kind.finished(current)
                if current.state != CampaignState.RUNNING or finished:
                    break
                for stream_id in active_stream_ids(kind, campaign.pk):
                    before = LLMCall.objects.count()
                    t0, cpu0 = time.perf_counter(), time.process_time()
                    report = advance(kind=kind, stream_id=stream_id)
                    elapsed, cpu = time.perf_counter() - t0, time.process_time() - cpu0
                    steps.append(
                        (
                            report.action,
                            report.outcome,
                            LLMCall.objects.count() - before,
                            elapsed,
                            cpu,
                        )
                    )
            wall = time.perf_counter() - started
            state = "finished" if finished else Campaign.objects.get(pk=campaign.pk).state
            failed = LLMCall.objects.exclude(status="ok").count()
            by_role = dict(
                LLMCall.objects.values_list("role").annotate(n=Count("id")).order_by("role")
            )
        stats = server.stats()
    finally:
        server.stop()
    model = [s for s in steps if s[2] and s[0] not in excluded]
    calls = sum(s[2] for s in model)
    window = sum(s[3] for s in model)
    errors = sum(1 for s in steps if s[1] == "error")
    row = throughput_row(label, latency_ms, calls, window, stats["max_in_flight"], width)
    row.update(
        {
            "model steps": len(model),
            # Processor time of this process (all its threads) over the window: how much of a
            # core the steps got on the shared machine.
            "process CPU / window": round(sum(s[4] for s in model) / window, 2) if window else 0,
            "campaign": f"{state}, {len(steps)} steps, {sum(by_role.values())} calls "
            f"({failed} failed), {wall:.1f} s, {errors} step errors",
        }
    )
    return row


KINDS = (
    ("X-Coder", "xcoder_world", "bench.loopback_answers:XCoder"),
    ("FrontierSmith", "frontiersmith_world", "tests.frontiersmith.scripted:Script"),
    ("EvoSyn", "evosyn_world", "bench.loopback_answers:EvoSyn"),
    ("reasoning", "reasoning_world", "bench.loopback_answers:Reasoning"),
)


def run(args) -> list[dict]:
    """Each kind at 250 ms (the ratio to the bound) and at 0 ms (the process's own ceiling in
    calls per second, on this machine at the time of the run)."""
    quick = bool(getattr(args, "quick", False))
    return [
        measure(label, globals()[world], responder, latency_ms, quick)
        for label, world, responder in KINDS
        for latency_ms in (250, 0)
    ]
