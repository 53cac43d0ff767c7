"""X-Coder campaigns end to end against the loopback model server with scripted answers:
every model answer travels over real HTTP, every candidate and generator runs in the sandbox,
and the vote is computed live."""

from __future__ import annotations

import json

import pytest

from evolution.models import Campaign, LLMCall, Problem, TestCase
from evolution.models.campaigns import CampaignState
from evolution.services.campaigns import campaign_launch, campaign_tick
from evolution.streams.runner import advance, run_inline
from xcoder import services
from xcoder.engine import features as feat
from xcoder.engine import voting
from xcoder.models import (
    CandidateSolution,
    EvolutionStep,
    FeatureNode,
    NodeOrigin,
    SynthTask,
    TaskStatus,
)
from xcoder.stages import evolve, extract, merge, plan, solve, verify
from xcoder.stages.common import Action, load_context

from .helpers import (
    SCRIPTED_SETTINGS,
    SEED_SUM,
    STATEMENT,
    Responder,
    base_table,
    endpoint,
    reasoned,
    seed_set,
    task_answer,
)

pytestmark = pytest.mark.django_db(transaction=True)


def make_campaign(server, table, **settings) -> Campaign:
    server.responder = Responder(table)
    campaign = services.xcoder_campaign_create(
        name="synth",
        seed_set=seed_set(),
        generator_endpoint=endpoint(server, "generator"),
        solver_endpoints=[endpoint(server, "solver-a"), endpoint(server, "solver-b")],
        settings={
            "num_tasks": 1,
            "style_mix": {"codeforces": 100},
            **SCRIPTED_SETTINGS,
            **settings,
        },
    )
    campaign_launch(campaign_id=campaign.pk)
    return campaign


def run(campaign: Campaign) -> Campaign:
    return run_inline(campaign_id=campaign.pk, max_steps=60)


def test_it_grows_the_feature_tree_and_accepts_a_task_from_a_subtree(fake_server):
    campaign = run(make_campaign(fake_server, base_table(), test_mode="both"))
    assert campaign.state == CampaignState.COMPLETED
    xc = campaign.xcoder

    # Extraction merged both seeds: "array aggregation" was named by both, stored once.
    shared = FeatureNode.objects.get(xcoder=xc, path="problem type / array aggregation")
    assert sorted(shared.sources) == sorted(
        Problem.objects.filter(origin_dataset="seed").values_list("pk", flat=True)
    )
    assert xc.counts_extracted == {
        "algorithm": 4,
        "data structures": 2,
        "problem type": 2,
    }
    # Evolution: depth under the former leaf "partial ordering", breadth as new siblings.
    depth = FeatureNode.objects.get(
        xcoder=xc, path="algorithm / selection methods / partial ordering / tournament selection"
    )
    assert depth.origin == NodeOrigin.DEPTH and depth.evolution_round == 1
    sibling = FeatureNode.objects.get(xcoder=xc, path="data structures / pairing heap")
    assert sibling.origin == NodeOrigin.BREADTH
    assert xc.counts_evolved == {"algorithm": 10, "data structures": 4, "problem type": 3}
    step = EvolutionStep.objects.get(xcoder=xc, round=1, category="algorithm")
    assert (step.added_depth, step.added_breadth) == (2, 4)

    task = SynthTask.objects.get(xcoder=xc, index=0)
    assert task.status == TaskStatus.ACCEPTED, (task.reason_code, task.reason)
    assert task.style == "codeforces" and task.harness == "stdio"
    # Stage 1 chose among the sampled leaves and annotated each with its potential use.
    sampled = json.dumps(task.sampled_tree)
    for leaf in task.roles_tree.values():
        for name, annotation in leaf.items():
            assert name in sampled and annotation["potential_use"]
    assert task.integration_strategy
    assert all(g["passed"] for g in task.gate_results)
    assert {g["gate"] for g in task.gate_results} == {
        "min_length",
        "samples",
        "hint_leakage",
        "io_constraints",
        "near_duplicate",
    }
    # Tests from the prompt and from the generator program run with --seed 42, both recorded.
    sources = [t["source"] for t in task.tests]
    assert sources.count("prompt") == 6 and sources.count("generator") == 2
    assert task.generator_seed == 42 and "argparse" in task.generator_code

    # Static gates: the answer with two code blocks is refused, the three others vote.
    refused = CandidateSolution.objects.get(task=task, passed_gates=False)
    assert refused.endpoint.name == "solver-b" and "exactly one" in refused.reason
    ver = task.verification
    assert [c["endpoint"] for c in ver["candidates"]] == ["solver-a", "solver-a", "solver-b"]
    weights = dict(nominal=1, complex=2, boundary=3, stress=4)
    assert ver["weights"] == [weights[t["category"]] for t in task.tests]
    # The wrong candidate (sums at most 3 offers) loses every test with k > 3 to the majority.
    wrong_column = [row[2] for row in ver["agree"]]
    heavy = [int(t["input"].split()[1]) > 3 for t in task.tests]
    assert wrong_column == [not h for h in heavy]
    assert ver["golden"] == 0 and ver["golden_pass_rate"] == 1.0
    assert ver["weighted_scores"][0] > ver["weighted_scores"][2]
    assert set(ver["split"]) == {"golden", "val"}

    problem = task.problem
    assert (problem.kind, problem.method) == ("synthesized", "xcoder")
    assert problem.parent.origin_id == SEED_SUM or problem.parent.origin_dataset == "seed"
    assert problem.reference_solution.startswith("import sys")
    tests = TestCase.objects.filter(problem=problem)
    # Only T_golden becomes the problem's test set (section 2 (iv), Algorithm 1 returns
    # A_golden and T_golden): the hold-out half confirmed the choice and stays out of it.
    golden_rows = [i for i, part in enumerate(ver["split"]) if part == "golden"]
    val_rows = [i for i, part in enumerate(ver["split"]) if part == "val"]
    assert golden_rows and val_rows
    assert tests.count() == len(golden_rows) < len(task.tests)
    assert {t.provenance["split"] for t in tests} == {"golden"}
    stored_inputs = set(tests.values_list("input_text", flat=True))
    assert stored_inputs == {task.tests[i]["input"] for i in golden_rows}
    assert not stored_inputs & {task.tests[i]["input"] for i in val_rows}
    for t in tests:
        i = next(i for i in golden_rows if task.tests[i]["input"] == t.input_text)
        assert t.output.strip() == verify_label(task, i)
    assert problem in xc.problem_set.problems.all()
    # Every model call was charged to the campaign.
    assert LLMCall.objects.filter(campaign=campaign).count() == campaign.calls_made > 0


def test_it_discards_the_task_when_the_hold_out_disagrees(fake_server):
    """Three candidates behave as scripted lookup tables so that, on the engine's own split,
    candidate C wins the weighted score on the golden suite but loses the hold-out."""
    table = base_table()
    cases = json.loads(table[("xcoder_tests", "xcoder;task=0;tests;role=xcoder_tests")])[
        "test_cases"
    ][:4]
    split = voting.partition(4, holdout_fraction=0.5, seed="42:0")
    golden = [i for i in range(4) if split[i] == "golden"]
    val = [i for i in range(4) if split[i] == "val"]
    heavy, light = golden
    cases[heavy]["category"], cases[light]["category"] = "stress", "nominal"
    table[("xcoder_tests", "xcoder;task=0;tests;role=xcoder_tests")] = json.dumps(
        {"test_cases": cases}
    )
    inputs = [c["input_string"] for c in cases]
    # golden heavy: A and C agree; golden light: B and C agree; hold-out: A and B agree.
    outputs = {"A": {}, "B": {}, "C": {}}
    outputs["A"][heavy], outputs["C"][heavy], outputs["B"][heavy] = "1", "1", "2"
    outputs["B"][light], outputs["C"][light], outputs["A"][light] = "3", "3", "4"
    for i in val:
        outputs["A"][i], outputs["B"][i], outputs["C"][i] = "5", "5", "6"

    def lookup(name: str) -> str:
        mapping = {inputs[i]: v for i, v in outputs[name].items()}
        code = f"import sys\nprint({mapping!r}.get(sys.stdin.read(), 'none'))"
        return reasoned(f"```python\n{code}\n```")

    for name, sample, who in (("solver-a", 0, "A"), ("solver-a", 1, "B"), ("solver-b", 0, "C")):
        table[
            (
                "xcoder_solver",
                f"xcoder;task=0;solve;endpoint={name};sample={sample};role=xcoder_solver",
            )
        ] = lookup(who)
    campaign = run(make_campaign(fake_server, table))
    task = SynthTask.objects.get(xcoder=campaign.xcoder)
    assert task.status == TaskStatus.DISCARDED
    assert task.reason_code == "holdout_disagrees"
    ver = task.verification
    assert ver["chosen"] == 2 and ver["best_val"] == [0, 1]
    assert ver["val_accuracy"][2] == 0.0
    assert task.problem is None
    assert not Problem.objects.filter(method="xcoder").exists()


@pytest.mark.parametrize(
    ("statement", "gate"),
    [
        (STATEMENT.split("### Example 2")[0], "samples"),
        (STATEMENT.replace("The town of", "Remember: the town of"), "hint_leakage"),
        (
            STATEMENT.replace("## Input", "## Data").replace("## Output", "## Result"),
            "io_constraints",
        ),
    ],
)
def test_it_rejects_a_statement_that_fails_a_gate_with_that_gate_as_reason(
    fake_server, statement, gate
):
    table = base_table()
    table[("xcoder_write", "xcoder;task=0;write;style=codeforces;role=xcoder_write")] = task_answer(
        statement
    )
    campaign = run(make_campaign(fake_server, table))
    task = SynthTask.objects.get(xcoder=campaign.xcoder)
    assert task.status == TaskStatus.REJECTED
    assert task.reason_code == gate
    # Nothing after the gate ran: no tests asked for, no solutions.
    assert not task.tests and not task.solutions.exists()
    assert campaign.state == CampaignState.COMPLETED


def test_it_rejects_a_short_statement_by_the_length_gate(fake_server):
    table = base_table()
    table[("xcoder_write", "xcoder;task=0;write;style=codeforces;role=xcoder_write")] = task_answer(
        STATEMENT[:400]
    )
    campaign = run(make_campaign(fake_server, table, min_samples=0))
    task = SynthTask.objects.get(xcoder=campaign.xcoder)
    assert (task.status, task.reason_code) == (TaskStatus.REJECTED, "min_length")
    assert "minimum 200" in task.reason


def test_it_rejects_a_statement_that_names_a_selected_feature(fake_server):
    table = base_table()
    campaign = make_campaign(fake_server, table)
    Campaign.objects.filter(pk=campaign.pk).update(state=CampaignState.RUNNING)
    # Advance until stage 1 ran, then script the writer to leak the first selected feature.
    for _ in range(30):
        advance(kind="xcoder", stream_id=campaign.pk)
        task = SynthTask.objects.filter(xcoder=campaign.xcoder).first()
        if task and task.status == TaskStatus.SELECTED:
            break
    leaked = feat.selected_features(task.selected_tree)[0]
    table[("xcoder_write", "xcoder;task=0;write;style=codeforces;role=xcoder_write")] = task_answer(
        STATEMENT.replace("Print one integer", f"Using {leaked}, print one integer")
    )
    fake_server.responder = Responder(table)
    run(campaign)
    task.refresh_from_db()
    assert (task.status, task.reason_code) == (TaskStatus.REJECTED, "hint_leakage")
    assert leaked.lower() in task.reason


def test_a_rerun_of_every_step_never_duplicates_rows(fake_server):
    campaign = run(make_campaign(fake_server, base_table()))
    xc = campaign.xcoder
    nodes = FeatureNode.objects.filter(xcoder=xc).count()
    task = SynthTask.objects.get(xcoder=xc)
    calls = LLMCall.objects.count()
    # A killed worker's retry re-runs an action whose result is already stored.
    ctx = load_context(campaign.pk)
    seed = Problem.objects.get(origin_id=SEED_SUM)
    extract.act_extract(ctx, Action("extract", problem_id=seed.pk))
    merge.act_merge(ctx, Action("merge"))
    evolve.act_evolve(ctx, Action("evolve", round=1, category="algorithm"))
    plan.act_plan(ctx, Action("plan", task_index=0))
    solve.act_solve(ctx, Action("solve", task_index=0, task_id=task.pk))
    verify.act_verify(ctx, Action("verify", task_index=0, task_id=task.pk))
    assert FeatureNode.objects.filter(xcoder=xc).count() == nodes
    assert xc.extractions.count() == 2 and xc.evolutions.count() == 3
    assert SynthTask.objects.filter(xcoder=xc).count() == 1
    assert CandidateSolution.objects.filter(task=task).count() == 4
    assert Problem.objects.filter(method="xcoder").count() == 1
    # Only the extraction and evolution were asked again; stored solutions are never re-asked.
    assert LLMCall.objects.count() == calls + 2


def test_the_shared_tick_finishes_a_campaign_whose_work_is_done(fake_server):
    campaign = run(make_campaign(fake_server, base_table()))
    assert campaign.state == CampaignState.COMPLETED
    again = make_campaign(fake_server, base_table())
    Campaign.objects.filter(pk=again.pk).update(state=CampaignState.QUEUED)
    # Not finished: the tick dispatches (a ticket is issued) and reports RUNNING.
    assert campaign_tick(campaign_id=again.pk, reschedule=False) == CampaignState.RUNNING
    assert again.xcoder.__class__.objects.get(pk=again.pk).ticket


def test_a_stale_ticket_or_a_paused_campaign_does_no_work(fake_server):
    campaign = make_campaign(fake_server, base_table())
    Campaign.objects.filter(pk=campaign.pk).update(state=CampaignState.RUNNING)
    ticket = services.xcoder_issue_ticket(campaign=campaign, only_if_quiet=False)
    assert advance(kind="xcoder", stream_id=campaign.pk, ticket="stale").outcome == "skipped"
    report = advance(kind="xcoder", stream_id=campaign.pk, ticket=ticket)
    assert (report.outcome, report.action) == ("done", "extract")
    # One step asked for both seeds' extractions side by side; merging is the next step's.
    assert campaign.xcoder.extractions.count() == 2
    Campaign.objects.filter(pk=campaign.pk).update(state=CampaignState.PAUSED)
    assert advance(kind="xcoder", stream_id=campaign.pk).outcome == "skipped"
    assert campaign.xcoder.extractions.count() == 2
    assert not campaign.xcoder.__class__.objects.get(pk=campaign.pk).tree_merged


def test_the_budget_pauses_the_campaign_with_nothing_lost(fake_server):
    campaign = make_campaign(fake_server, base_table())
    Campaign.objects.filter(pk=campaign.pk).update(budget_max_calls=3)
    campaign = run(campaign)
    assert campaign.state == CampaignState.PAUSED
    assert "budget" in campaign.state_reason
    assert campaign.xcoder.extractions.count() == 2 and campaign.calls_made == 3
    # Raising the budget and resuming finishes the work from where it stopped.
    Campaign.objects.filter(pk=campaign.pk).update(
        budget_max_calls=None, state=CampaignState.QUEUED
    )
    campaign = run(campaign)
    assert campaign.state == CampaignState.COMPLETED
    assert SynthTask.objects.get(xcoder=campaign.xcoder).status == TaskStatus.ACCEPTED


def verify_label(task: SynthTask, i: int) -> str:
    """The voted label of input ``i`` as the verification record keeps it (inline text)."""
    label = task.verification["labels"][i]
    return (label if isinstance(label, str) else verify.text_of(label)).strip()
