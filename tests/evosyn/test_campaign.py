"""An EvoSyn campaign end to end against the loopback model server: answers are scripted, every
matrix, strategy run and filter decision is executed live in the sandbox."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from evolution.models import Problem
from evolution.models.campaigns import CampaignState
from evolution.services import campaigns as campaign_services
from evolution.streams.runner import advance, run_inline
from evosyn import services
from evosyn.engine import strategy as S
from evosyn.models import (
    EvoSynCampaign,
    Instance,
    InstanceRole,
    InstanceStatus,
    MatrixRow,
    StrategyStatus,
)
from evosyn.stages.common import load_context
from evosyn.stages.execute import verdict_row
from tests.support.answers import fenced

from .helpers import CRASHING, FIGURE_3, SMALL_SETTINGS, respond, script

pytestmark = pytest.mark.django_db(transaction=False)


def _run(world, server, *, strategist, settings=None):
    seed_set, endpoint = world
    respond(server, script(strategist=strategist))
    campaign = services.evosyn_campaign_create(
        name="evosyn test",
        seed_set=seed_set,
        endpoint=endpoint,
        settings={**SMALL_SETTINGS, **(settings or {})},
    )
    campaign_services.campaign_launch(campaign_id=campaign.pk)
    campaign = run_inline(campaign_id=campaign.pk, max_steps=60)
    return campaign, EvoSynCampaign.objects.get(pk=campaign.pk)


def test_it_builds_the_full_matrix_and_ranks_with_the_initial_strategy(world, fake_server):
    campaign, esc = _run(
        world, fake_server, strategist=[fenced(CRASHING), fenced(FIGURE_3)], settings={}
    )
    seed = esc.instances.get(role=InstanceRole.SEED)
    assert seed.status == InstanceStatus.READY
    # Rows: correct, correct, always False, always True; columns: the four testings (t2 is a
    # wrong one). "Always True" passes t1's first unit test and fails its second: it fails t1.
    assert seed.matrix["rows"] == [[1, 1, 0, 1], [1, 1, 0, 1], [1, 0, 0, 0], [0, 0, 1, 1]]
    assert seed.matrix["tests"] == [0, 1, 2, 3] and seed.matrix["sizes"] == [1, 2, 1, 1]
    assert seed.human == [True, True, False, False]
    assert seed.solutions.count() == 4 and seed.tests.count() == 5
    assert seed.test_calls_made == 4  # one test-writer answer per testing

    initial = esc.strategies.get(version=1)
    assert initial.code == S.INITIAL_STRATEGY
    check = initial.evaluation["checks"][0]
    # Pass counts 3, 3, 1, 2: s0 first, s2 last; t0 accepts 3 solutions (t3 too), first.
    assert (check["top_solution"], check["bottom_solution"], check["top_test"]) == (0, 2, 0)
    # Criterion-1 holds (s0 is correct); Criterion-2 fails: "always False" passes t0 but not
    # the human test.
    assert (initial.criterion1, initial.criterion2, initial.score) == (1.0, 0.0, 0.0)
    assert campaign.state == CampaignState.COMPLETED


def test_a_crashing_strategy_scores_as_failing_and_the_search_goes_on(world, fake_server):
    _, esc = _run(world, fake_server, strategist=[fenced(CRASHING), fenced(FIGURE_3)])
    strategies = list(esc.strategies.order_by("version"))
    assert [s.iteration for s in strategies] == [0, 1, 2]
    crashed = strategies[1]
    assert crashed.status == StrategyStatus.FAILED
    assert crashed.score == 0.0
    assert "RuntimeError" in crashed.error or "RE" in crashed.error
    assert not crashed.placed
    evolved = strategies[2]
    assert evolved.status == StrategyStatus.OK
    assert evolved.score == 1.0 and evolved.criterion2 == 1.0
    assert evolved.parent_id == strategies[0].pk
    assert esc.best_strategy_id == evolved.pk
    assert [s.best_so_far for s in strategies] == [0.0, 0.0, 1.0]


def test_an_unparsable_strategy_answer_is_recorded_and_the_search_goes_on(world, fake_server):
    _, esc = _run(world, fake_server, strategist=["I would rather not.", fenced(FIGURE_3)])
    first, second = esc.strategies.filter(iteration__gte=1).order_by("iteration")
    assert first.status == StrategyStatus.UNPARSABLE and first.score == 0.0
    assert "unparsable" in first.error
    assert second.score == 1.0


def test_it_keeps_prunes_and_records_reasons_for_synthesized_problems(world, fake_server):
    campaign, esc = _run(world, fake_server, strategist=[fenced(CRASHING), fenced(FIGURE_3)])
    kept, zero_variance, identical = esc.instances.filter(role=InstanceRole.SYNTHETIC).order_by(
        "slot"
    )
    assert zero_variance.status == InstanceStatus.PRUNED
    assert zero_variance.status_reason.startswith("zero variance: all 4 testings accept")
    assert identical.status == InstanceStatus.PRUNED
    assert identical.status_reason.startswith("identical solutions")

    assert kept.status == InstanceStatus.KEPT, kept.status_reason
    problem = kept.kept_problem
    assert (problem.kind, problem.method) == ("synthesized", "evosyn")
    assert problem.parent.origin_id == "HumanEval/0"
    assert problem.lineage_root_id == problem.parent_id
    assert kept.ranking["strategy_version"] == esc.best_strategy.version == 3
    strongest = kept.solutions.get(index=kept.ranking["strongest_solution"])
    assert problem.reference_solution == strongest.code
    assert "v % 2 == 0" in strongest.code
    # The problem takes the strategy's top-ranked testing the strongest solution passes: one
    # whole unit-test list (the document's final testing), here t0 with its two unit tests.
    assert kept.ranking["selected_tests"] == [kept.ranking["tests"][0]] == [0]
    stored = [(t.input, t.output) for t in problem.tests.order_by("ordinal")]
    expected = [(t.input, t.output) for t in kept.tests.filter(call=0).order_by("index")]
    assert stored == expected and len(stored) == 2
    assert problem.metadata["selected_testings"] == [0]
    assert problem in esc.output_set.problems.all()


def test_a_rerun_executes_nothing_again(world, fake_server):
    _, esc = _run(world, fake_server, strategist=[fenced(CRASHING), fenced(FIGURE_3)])
    spent = esc.sandbox_executions
    rows = MatrixRow.objects.count()
    assert spent > 0 and rows > 0
    ctx = load_context(esc.pk)
    seed = esc.instances.get(role=InstanceRole.SEED)
    code = seed.solutions.get(index=0).code
    from evolution import sandbox

    # The distinct unit tests of the four testings, in order (t1's second repeats t0's).
    specs = [
        sandbox.TestSpec(input=t.input, output=t.output)
        for t in seed.tests.order_by("call", "index")
        if t.index != 2
    ]
    verdicts, used = verdict_row(
        ctx, code, specs, harness="function", entry_point="has_close_elements"
    )
    assert used == 0 and verdicts == ["AC", "AC", "WA", "AC"]
    assert advance(kind="evosyn", stream_id=esc.pk).outcome == "skipped"  # completed
    assert MatrixRow.objects.count() == rows


def test_the_sandbox_budget_pauses_the_campaign(world, fake_server):
    campaign, esc = _run(
        world,
        fake_server,
        strategist=[fenced(FIGURE_3), fenced(FIGURE_3)],
        settings={"max_sandbox_executions": 10},
    )
    assert campaign.state == CampaignState.PAUSED
    assert "sandbox executions" in campaign.state_reason
    assert esc.sandbox_executions <= 10


def test_the_random_control_takes_one_candidate_testing_per_kept_problem(world, fake_server):
    _, esc = _run(world, fake_server, strategist=[fenced(CRASHING), fenced(FIGURE_3)])
    control = services.evosyn_control_build(campaign_id=esc.pk, rng_seed=7)
    kept = esc.instances.get(status=InstanceStatus.KEPT)
    assert len(control.items) == 1
    (item,) = control.items
    assert item["public_id"] == kept.kept_problem.public_id
    assert len(item["testings"]) == 1
    (number,) = item["testings"]
    assert len(item["tests"]) == kept.tests.filter(call=number).count()


def test_it_rejects_a_seed_set_without_function_level_problems(world):
    from evolution.models import ProblemSet

    empty = ProblemSet.objects.create(name="nothing")
    with pytest.raises(ValidationError):
        services.evosyn_campaign_create(name="x", seed_set=empty, endpoint=world[1])
    with pytest.raises(ValidationError) as exc:
        services.evosyn_campaign_create(
            name="x", seed_set=world[0], endpoint=world[1], settings={"tests_per_problem": 0}
        )
    assert "tests_per_problem" in exc.value.message_dict
    assert not Problem.objects.filter(method="evosyn").exists()
    assert not Instance.objects.exists()


def test_iteration_one_improves_the_initial_strategy_when_it_failed_on_every_seed(
    world, fake_server, monkeypatch
):
    # The initial program crashes on every seed instance: nothing enters the archive and no
    # best strategy exists. Iteration 1 mutates the failed initial program instead of crashing.
    monkeypatch.setattr(S, "INITIAL_STRATEGY", CRASHING)
    campaign, esc = _run(world, fake_server, strategist=[fenced(FIGURE_3), fenced(FIGURE_3)])
    strategies = list(esc.strategies.order_by("iteration"))
    assert strategies[0].status == StrategyStatus.FAILED
    assert strategies[1].parent_id == strategies[0].pk
    assert strategies[1].status == StrategyStatus.OK
    assert esc.best_strategy_id == strategies[1].pk
    assert campaign.state == CampaignState.COMPLETED, campaign.state_reason
