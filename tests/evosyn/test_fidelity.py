"""EvoSyn as its document (seed 001) describes it, each mechanism against the loopback model
server with every program executed live in the sandbox:

- a testing is one unit-test list (one test-writer answer) and Criterion-2 compares the human
  testing (the seed's suite) with the strategy's best testing, suite against suite;
- D^random draws ONE whole testing per kept problem, seeded and reproducible;
- D^relaxed is the data without Zero-Variance Pruning, a superset of the kept problems;
- stdin/stdout problems run beside function-level ones (the sandbox's stdio harness);
- the MAP-Elites search over islands, at the document's 20 iterations and its release's 3
  islands, migrates elites and draws every parent from its island's archive.
"""

from __future__ import annotations

import json
import random

import pytest

from evolution.models import Problem, ProblemSet, TestCase
from evolution.models.campaigns import CampaignState
from evolution.services import campaigns as campaign_services
from evolution.streams.runner import run_inline
from evosyn import services
from evosyn.engine import search
from evosyn.engine import strategy as S
from evosyn.models import (
    ControlVariant,
    EvoSynCampaign,
    InstanceRole,
    InstanceStatus,
    StrategyStatus,
)
from tests.support.answers import fenced

from . import helpers
from .helpers import CRASHING, FIGURE_3, SMALL_SETTINGS, respond, script

pytestmark = pytest.mark.django_db(transaction=False)

# Ranks testing t1 (two unit tests) first; solutions in id order: s0 best, s3 ("always True")
# worst.
T1_FIRST = """import json, sys
json.load(sys.stdin)
print(json.dumps({"testings": ["t1", "t0", "t2", "t3"], "solutions": ["s0", "s1", "s2", "s3"]}))
"""


def _run(seed_set, endpoint, server, table, settings):
    respond(server, table)
    campaign = services.evosyn_campaign_create(
        name="evosyn fidelity", seed_set=seed_set, endpoint=endpoint, settings=settings
    )
    campaign_services.campaign_launch(campaign_id=campaign.pk)
    campaign = run_inline(campaign_id=campaign.pk, max_steps=200)
    return campaign, EvoSynCampaign.objects.get(pk=campaign.pk)


# --------------------------------------------------------------------------- testings


def test_a_testing_is_one_unit_test_list_and_criterion_2_compares_suites(world, fake_server):
    seed_set, endpoint = world
    campaign, esc = _run(
        seed_set,
        endpoint,
        fake_server,
        script(strategist=[fenced(T1_FIRST)]),
        {**SMALL_SETTINGS, "max_iterations": 1, "synth_problems": 0},
    )
    assert campaign.state == CampaignState.COMPLETED, campaign.state_reason
    seed = esc.instances.get(role=InstanceRole.SEED)
    # Four test-writer answers are four testings; t1 is a list of two unit tests.
    assert seed.test_calls_made == 4
    assert {n: len(items) for n, items in seed.testings().items()} == {0: 1, 1: 2, 2: 1, 3: 1}
    # "Always True" (s3) passes t1's first unit test and fails its second: it fails t1.
    assert [row[1] for row in seed.matrix["rows"]] == [1, 1, 0, 0]
    # The human testing is the seed's whole suite (HumanEval/0's check program).
    assert seed.human == [True, True, False, False]

    strategy = esc.strategies.get(iteration=1)
    assert strategy.status == StrategyStatus.OK
    (check,) = strategy.evaluation["checks"]
    assert (check["top_solution"], check["bottom_solution"], check["top_test"]) == (0, 3, 1)
    # Criterion-2 suite against suite: the best solution passes both the human testing and
    # t1, the worst fails both. (Unit test against unit test, s3 would pass t1's first test
    # and be inconsistent with the human testing.)
    assert check["criterion1"] and check["criterion2"]
    assert strategy.score == 1.0


def test_an_answer_without_unit_tests_adds_no_testing_and_is_asked_again(world, fake_server):
    # The second test-writer answer is garbage: it makes no testing, and a fifth call (within
    # test_calls = 2 calls per testing) fills the N = 4 testings.
    seed_set, endpoint = world
    table = script(strategist=[])
    table[("test_writer", "evosyn;seed=HumanEval/0;tests=1;role=test_writer")] = "No tests."
    table[("test_writer", "evosyn;seed=HumanEval/0;tests=4;role=test_writer")] = (
        helpers.tests_answer(helpers.SEED_TESTINGS[1])
    )
    campaign, esc = _run(
        seed_set,
        endpoint,
        fake_server,
        table,
        {**SMALL_SETTINGS, "test_calls": 2, "max_iterations": 0, "synth_problems": 0},
    )
    assert campaign.state == CampaignState.COMPLETED, campaign.state_reason
    seed = esc.instances.get(role=InstanceRole.SEED)
    assert seed.test_calls_made == 5
    assert seed.matrix["tests"] == [0, 2, 3, 4] and seed.matrix["sizes"] == [1, 1, 1, 2]


def test_criterion_2_fails_when_the_best_testing_disagrees_with_the_human_testing():
    # Pure evaluator: testing t0 accepts the wrong solution s1, the human testing rejects it.
    matrix = [[1, 1], [1, 0]]
    ranking = S.Ranking(tests=[0, 1], solutions=[0, 1])
    check = S.check_instance(0, ranking, matrix=matrix, human=[True, False])
    assert check.criterion1 and not check.criterion2
    good = S.check_instance(
        0, S.Ranking(tests=[1, 0], solutions=[0, 1]), matrix=matrix, human=[True, False]
    )
    assert good.criterion1 and good.criterion2


# --------------------------------------------------------------------------- D^random, D^relaxed


def test_the_random_control_draws_one_whole_testing_per_kept_problem_reproducibly(
    world, fake_server
):
    seed_set, endpoint = world
    _, esc = _run(
        seed_set,
        endpoint,
        fake_server,
        script(strategist=[fenced(CRASHING), fenced(FIGURE_3)]),
        SMALL_SETTINGS,
    )
    kept = esc.instances.get(status=InstanceStatus.KEPT)
    testings = kept.testings()
    first = services.evosyn_control_build(campaign_id=esc.pk, rng_seed=7)
    again = services.evosyn_control_build(campaign_id=esc.pk, rng_seed=7)
    assert first.variant == ControlVariant.RANDOM
    assert first.items == again.items  # seeded: the same seed draws the same testing
    (item,) = first.items  # exactly the kept problems
    assert item["public_id"] == kept.kept_problem.public_id
    (number,) = item["testings"]  # ONE testing ...
    assert [(t["input"], t["output"]) for t in item["tests"]] == [
        (t.input, t.output) for t in testings[number]
    ]  # ... with all of its unit tests
    assert all(t["testing"] == number for t in item["tests"])
    # The draw is random over the N candidates, not the strategy's choice.
    draws = set()
    for seed in range(24):
        control = services.evosyn_control_build(campaign_id=esc.pk, rng_seed=seed)
        draws.add(control.items[0]["testings"][0])
    assert draws == set(testings)


def test_the_relaxed_dataset_adds_what_only_zero_variance_pruning_dropped(world, fake_server):
    seed_set, endpoint = world
    _, esc = _run(
        seed_set,
        endpoint,
        fake_server,
        script(strategist=[fenced(CRASHING), fenced(FIGURE_3)]),
        SMALL_SETTINGS,
    )
    kept, zero_variance, identical = esc.instances.filter(role=InstanceRole.SYNTHETIC).order_by(
        "slot"
    )
    assert kept.status == InstanceStatus.KEPT
    assert zero_variance.status_reason.startswith("zero variance")
    assert identical.status_reason.startswith("identical solutions")
    relaxed = services.evosyn_control_build(campaign_id=esc.pk, variant="relaxed")
    assert relaxed.variant == ControlVariant.RELAXED
    assert [i["slot"] for i in relaxed.items] == [0, 1, 2]
    assert [i["zero_variance"] for i in relaxed.items] == [False, True, True]
    # D^EvoSyn is a strict subset of D^relaxed: the kept problem as the release has it.
    (strict,) = services.evosyn_control_build(campaign_id=esc.pk).items
    assert relaxed.items[0]["public_id"] == strict["public_id"] == kept.kept_problem.public_id
    assert [(t["input"], t["output"]) for t in relaxed.items[0]["tests"]] == [
        (t.input, t.output) for t in kept.kept_problem.tests.order_by("ordinal")
    ]
    # The added ones carry the strategy's selection: its strongest solution and top testing.
    blank = relaxed.items[1]
    assert blank["testings"] == zero_variance.ranking["selected_tests"]
    assert (
        blank["reference_solution"]
        == zero_variance.solutions.get(index=zero_variance.ranking["strongest_solution"]).code
    )
    assert blank["tests"] and not blank["public_id"]
    # Nothing pruned for another reason enters it; no Problem is made for the added ones.
    assert Problem.objects.filter(method="evosyn").count() == 1


def test_the_relaxed_dataset_leaves_out_a_strategy_failure(world, fake_server, monkeypatch):
    # Every strategy crashes: the synthesized problems are pruned for the failure, which is not
    # Zero-Variance Pruning, so D^relaxed has nothing to hold.
    monkeypatch.setattr(S, "INITIAL_STRATEGY", CRASHING)
    seed_set, endpoint = world
    _, esc = _run(
        seed_set,
        endpoint,
        fake_server,
        script(strategist=[fenced(CRASHING), fenced(CRASHING)]),
        SMALL_SETTINGS,
    )
    pruned = esc.instances.filter(role=InstanceRole.SYNTHETIC, status=InstanceStatus.PRUNED)
    assert any("failed" in i.status_reason for i in pruned)
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError):
        services.evosyn_control_build(campaign_id=esc.pk, variant="relaxed")


# --------------------------------------------------------------------------- stdin/stdout

ALL_EVEN = (
    "You are given a positive integer N and a sequence of non-negative integers A = (A_1, ..., "
    "A_N). Determine whether all elements in A are even numbers.\n\n**Input**\nN\nA_1 A_2 ... "
    'A_N\n\n**Output**\nIf all elements in A are even, print "Yes"; otherwise, print "No".\n\n'
    "**Sample Input 1**\n3\n2 4 6\n\n**Sample Output 1**\nYes"
)
ALL_EVEN_RIGHT = (
    "n = int(input())\na = list(map(int, input().split()))\n"
    'print("Yes" if all(x % 2 == 0 for x in a) else "No")\n'
)
ALL_EVEN_SOLUTIONS = [
    ALL_EVEN_RIGHT,
    "input()\nprint('No' if any(int(x) % 2 for x in input().split()) else 'Yes')\n",
    "input()\nprint('Yes')\n",  # always Yes
    "input()\nprint('Yes' if int(input().split()[0]) % 2 == 0 else 'No')\n",  # first only
]
ALL_EVEN_TESTINGS = [
    [{"input": "3\n2 4 6\n", "output": "Yes\n"}, {"input": "4\n1 2 3 4\n", "output": "No\n"}],
    [{"input": "2\n2 3\n", "output": "No\n"}],
    [{"input": "1\n0\n", "output": "Yes\n"}, {"input": "1\n3\n", "output": "No\n"}],
    [{"input": "2\n2 4\n", "output": "No\n"}],  # a wrong testing
]
MAX_STATEMENT = (
    "Read N and then N integers from standard input and print the largest of them.\n\n"
    "**Input**\nN\nA_1 ... A_N\n\n**Output**\nThe maximum.\n\n**Sample Input**\n3\n1 5 2\n\n"
    "**Sample Output**\n5"
)
MAX_SOLUTIONS = [
    "input()\nprint(max(map(int, input().split())))\n",
    "input()\nvalues = [int(v) for v in input().split()]\nprint(sorted(values)[-1])\n",
    "input()\nprint(input().split()[0])\n",  # the first, not the largest
    "input()\nprint(min(map(int, input().split())))\n",
]
MAX_TESTINGS = [
    [{"input": "3\n1 5 2\n", "output": "5\n"}, {"input": "2\n-3 -1\n", "output": "-1\n"}],
    [{"input": "1\n7\n", "output": "7\n"}, {"input": "3\n1 2 3\n", "output": "3\n"}],
    [{"input": "3\n9 1 2\n", "output": "9\n"}],
    [{"input": "2\n4 8\n", "output": "8\n"}],
]


@pytest.fixture
def stdio_seed_set(db):
    seed = Problem.objects.create(
        title="All even",
        statement=ALL_EVEN,
        harness="stdio",
        origin_dataset="lcb",
        origin_id="all-even",
        reference_solution=ALL_EVEN_RIGHT,
    )
    for ordinal, (given, expected) in enumerate(
        [("3\n2 4 6\n", "Yes\n"), ("4\n1 2 3 4\n", "No\n"), ("5\n0 0 0 0 0\n", "Yes\n")]
        + [("3\n2 4 5\n", "No\n")]
    ):
        t = TestCase(problem=seed, tier="small", ordinal=ordinal, hidden=True)
        t.input, t.output = given, expected
        t.save()
    seed_set = ProblemSet.objects.create(name="evosyn-stdio-seeds")
    seed_set.problems.add(seed)
    return seed_set


def stdio_script() -> dict:
    table = {}
    for i, code in enumerate(ALL_EVEN_SOLUTIONS):
        table[("solver", f"evosyn;seed=all-even;solution={i};role=solver")] = fenced(code)
    for call, testing in enumerate(ALL_EVEN_TESTINGS):
        key = f"evosyn;seed=all-even;tests={call};role=test_writer"
        table[("test_writer", key)] = helpers.tests_answer(testing)
    table[("strategist", "evosyn;iteration=1;role=strategist")] = fenced(FIGURE_3)
    table[("synthesizer", "evosyn;synth=0;role=synthesizer")] = json.dumps(
        {"title": "Largest", "statement": MAX_STATEMENT}
    )
    for i, code in enumerate(MAX_SOLUTIONS):
        table[("solver", f"evosyn;synth=0;solution={i};role=solver")] = fenced(code)
    for call, testing in enumerate(MAX_TESTINGS):
        key = f"evosyn;synth=0;tests={call};role=test_writer"
        table[("test_writer", key)] = helpers.tests_answer(testing)
    return table


def test_stdin_stdout_problems_run_beside_function_level_ones(world, fake_server, stdio_seed_set):
    _, endpoint = world
    responder = respond(fake_server, stdio_script())
    prompts: dict[str, str] = {}

    def capture(body, headers):
        key = headers.get("X-BenchForge-Key", headers.get("x-benchforge-key", ""))
        prompts[key] = json.dumps(body.get("messages"))
        return responder(body, headers)

    fake_server.responder = capture
    campaign = services.evosyn_campaign_create(
        name="evosyn stdio",
        seed_set=stdio_seed_set,
        endpoint=endpoint,
        settings={**SMALL_SETTINGS, "max_iterations": 1, "synth_problems": 1},
    )
    campaign_services.campaign_launch(campaign_id=campaign.pk)
    campaign = run_inline(campaign_id=campaign.pk, max_steps=60)
    assert campaign.state == CampaignState.COMPLETED, campaign.state_reason
    esc = EvoSynCampaign.objects.get(pk=campaign.pk)
    seed = esc.instances.get(role=InstanceRole.SEED)
    assert seed.harness == "stdio" and seed.entry_point == ""
    # Rows: right, right, always Yes, first element only; columns: t0..t3 (t3 is wrong).
    assert seed.matrix["rows"] == [[1, 1, 1, 0], [1, 1, 1, 0], [0, 0, 0, 0], [1, 0, 1, 0]]
    assert seed.human == [True, True, False, False]
    figure_3 = esc.strategies.get(iteration=1)
    assert figure_3.score == 1.0

    # The prompts asked for programs, string unit tests and a stdin/stdout problem.
    assert "standard input" in prompts["evosyn;seed=all-even;solution=0;role=solver"]
    writer = prompts["evosyn;seed=all-even;tests=0;role=test_writer"]
    assert "no start code block" in writer and "cover all edge cases" in writer
    assert "standard input" in prompts["evosyn;synth=0;role=synthesizer"]

    synthetic = esc.instances.get(role=InstanceRole.SYNTHETIC)
    assert synthetic.status == InstanceStatus.KEPT, synthetic.status_reason
    assert synthetic.harness == "stdio"
    assert synthetic.matrix["rows"][2] == [0, 0, 1, 0]  # "the first" passes only t2
    problem = synthetic.kept_problem
    assert (problem.harness, problem.entry_point) == ("stdio", "")
    assert "max(" in problem.reference_solution
    # The initial strategy already scores 1 here (Figure 3 ties, so it does not replace it): its
    # top testing is the one most solutions pass, t2, and the problem takes that unit-test list.
    assert esc.best_strategy.iteration == 0 and synthetic.ranking["selected_tests"] == [2]
    stored = [(t.input, t.output) for t in problem.tests.order_by("ordinal")]
    assert stored == [("3\n9 1 2\n", "9\n")]


# --------------------------------------------------------------------------- MAP-Elites


def _padded(i: int) -> str:
    """A variant of the initial strategy (it scores 0 on the seed), padded so the variants
    spread over the code-length feature's bins."""
    return S.INITIAL_STRATEGY + f"# variant {i}\n" + "".join(f"# {'-' * 70}\n" for _ in range(i))


def test_the_map_elites_search_migrates_and_draws_parents_from_the_archive(world, fake_server):
    # The document's 20 iterations; its released configuration's 3 islands and exploitation
    # ratio 0.7; migration every 5 iterations. Only iteration 1 (island 0) finds a program
    # scoring 1 (Figure 3); every other mutation scores 0.
    seed_set, endpoint = world
    answers = [fenced(FIGURE_3)] + [fenced(_padded(i)) for i in range(2, 21)]
    settings = {**SMALL_SETTINGS, "synth_problems": 0, "measure_kept": False}
    settings.update(max_iterations=20, num_islands=3, migration_interval=5)
    campaign, esc = _run(seed_set, endpoint, fake_server, script(strategist=answers), settings)
    assert campaign.state == CampaignState.COMPLETED, campaign.state_reason
    assert esc.campaign.settings["exploitation_ratio"] == 0.7
    strategies = {s.iteration: s for s in esc.strategies.all()}
    assert sorted(strategies) == list(range(21))
    figure_3 = strategies[1]
    assert figure_3.score == 1.0 and figure_3.island == 0 and figure_3.placed
    assert esc.best_strategy_id == figure_3.pk

    # Migration happened, ring-wise, at multiples of the interval: Figure 3 travelled from
    # island 0 to island 1 (iteration 5) and on to island 2 (iteration 10).
    migrations = esc.archive["migrations"]
    assert migrations
    assert all(m["iteration"] % 5 == 0 and m["to"] == (m["from"] + 1) % 3 for m in migrations)
    assert [
        (m["iteration"], m["from"], m["to"]) for m in migrations if m["strategy"] == figure_3.pk
    ][:2] == [(5, 0, 1), (10, 1, 2)]

    # Replay the archive from the stored strategies and migrations: MAP-Elites cells keep the
    # best score per cell, per island; iteration 0 seeds every island.
    islands: list[dict[str, tuple[int, float]]] = [{}, {}, {}]

    def place(island: int, strategy_id: int, cell: str, score: float) -> None:
        current = islands[island].get(cell)
        if current is None or score > current[1]:
            islands[island][cell] = (strategy_id, score)

    by_id = {s.pk: s for s in strategies.values()}
    modes, migrant_parents = [], 0  # children on islands 1, 2 of Figure 3 (made on island 0)
    for iteration in range(21):
        strategy = strategies[iteration]
        if iteration:
            selection = strategy.evaluation["selection"]
            island = (iteration - 1) % 3
            assert selection["island"] == island == strategy.island
            archive = sorted(sid for sid, _ in islands[island].values())
            assert selection["archive"] == archive  # the island's archive at selection time
            assert strategy.parent_id == selection["parent"] in archive  # drawn from it
            # Exploit (probability 0.7) takes the island's best elite; the draw is seeded.
            rng = random.Random(f"{esc.pk}:{iteration}")
            mode = "exploit" if rng.random() < 0.7 else "explore"
            assert selection["mode"] == mode
            if mode == "exploit":
                best = min(islands[island].values(), key=lambda e: (-e[1], e[0]))
                assert strategy.parent_id == best[0]
            modes.append(mode)
            migrant_parents += strategy.parent_id == figure_3.pk and island != 0
        if strategy.placed:
            targets = range(3) if iteration == 0 else [strategy.island]
            for target in targets:
                place(target, strategy.pk, strategy.cell, strategy.score)
        for m in migrations:
            if m["iteration"] == iteration:
                moved = by_id[m["strategy"]]
                place(m["to"], moved.pk, moved.cell, moved.score)
    assert "exploit" in modes
    # Parents came from the archive including migrants: Figure 3, made on island 0, was the
    # parent of a mutation on island 1 or 2 once it had migrated there.
    assert migrant_parents >= 1


def test_parent_selection_explores_a_random_elite_with_the_rest_of_the_probability():
    archive = search.empty_archive(1)
    for sid, score, cell in ((1, 0.2, "0:0"), (2, 0.9, "1:0"), (3, 0.5, "2:0")):
        assert search.insert(archive, 0, search.Elite(sid, score, cell))
    rng = random.Random(11)
    picks = [search.select_parent(archive, 0, exploitation_ratio=0.7, rng=rng) for _ in range(400)]
    exploit = [e.strategy_id for e, mode in picks if mode == "exploit"]
    explore = [e.strategy_id for e, mode in picks if mode == "explore"]
    assert set(exploit) == {2}  # the island's best
    assert set(explore) == {1, 2, 3}  # any elite of the island's archive
    assert 0.6 < len(exploit) / len(picks) < 0.8
    assert search.select_parent(search.empty_archive(1), 0, exploitation_ratio=0.7, rng=rng) == (
        None,
        "empty",
    )


def test_the_default_settings_are_the_documents():
    from evosyn.config import EvoSynSettings

    s = EvoSynSettings.from_dict({})
    # Section 4.2: M = N = 16, 20 iterations, solutions at temperature 1.0; one final testing.
    assert (s.solutions_per_problem, s.tests_per_problem, s.max_iterations) == (16, 16, 20)
    assert (s.solution_temperature, s.selected_tests) == (1.0, 1)
    # The document's released search configuration: 3 islands, exploitation 0.7, mutation
    # temperature 0.7.
    assert (s.num_islands, s.exploitation_ratio, s.strategist_temperature) == (3, 0.7, 0.7)
    # Migration within the 20 iterations (the release's interval of 50 would never migrate).
    assert s.migration_interval < s.max_iterations
