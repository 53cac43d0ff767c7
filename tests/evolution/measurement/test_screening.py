"""X-Coder, EvoSyn and FrontierSmith problems are screened for contamination where they are
measured (the shared panel measurement), and the gate reads that stored screen: real X-Coder
and EvoSyn campaigns over the loopback server, and a FrontierSmith problem a curator measures.
The index holds HumanEval, imported through ``import_seeds``."""

from __future__ import annotations

import pytest

from evolution.importers import import_seeds
from evolution.measurement import services as measurement_services
from evolution.measurement.models import Measurement, MeasurementState
from evolution.models import Problem
from evolution.models.campaigns import CampaignState
from evolution.screening.models import ProblemScreen
from evolution.services import campaigns as campaign_services
from evolution.streams.runner import run_inline
from evosyn import services as evosyn
from releases import services as release_services
from tests.evosyn.helpers import (
    CRASHING,
    FIGURE_3,
    IS_EMPTY_SOLUTIONS,
    SMALL_SETTINGS,
    SUM_EVENS_SOLUTIONS,
    KeyedResponder,
    script,
    world,  # noqa: F401 - the EvoSyn world fixture
)
from tests.factories import ProblemFactory
from tests.support.answers import fenced
from tests.support.gate_rules import SELECTION_TIME_OK
from tests.xcoder.helpers import CORRECT, WRONG_LARGE, Responder, base_table

from .helpers import PanelAnswers, make_panel
from .test_stage import LANTERN, run, xcoder_campaign

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_xcoder_problem_is_screened_when_measured_and_the_gate_reads_it(fake_server, personas):
    import_seeds(source="humaneval")
    fake_server.responder = PanelAnswers(
        {LANTERN: {"strong": CORRECT, "weak": WRONG_LARGE}}, fallback=Responder(base_table())
    )
    panel = make_panel(fake_server, ["strong", "weak"])
    campaign = run(xcoder_campaign(fake_server, panel=panel, measure_k=2))
    assert campaign.state == CampaignState.COMPLETED
    problem = Problem.objects.get(method="xcoder")
    assert Measurement.objects.get(campaign=campaign, problem=problem).state == "completed"

    screen = ProblemScreen.objects.get(problem=problem)
    assert screen.context == "measurement"
    assert screen.record["index"]["corpora"]["humaneval"]["problems"] == 164
    assert screen.record["neighbours"][0]["dataset"] == "humaneval"
    assert screen.max_similarity < 0.3  # a new task: nothing public is close

    benchmark = release_services.benchmark_create(
        default_rules={**SELECTION_TIME_OK, "max_public_similarity": 0.3}, name="Screened X-Coder"
    )
    release = release_services.release_create(benchmark=benchmark, campaigns=[campaign])
    run_ = release_services.gate_run_create(release=release, by=personas.curator.user)
    [entry] = [e for e in run_.report if e["problem_id"] == problem.pk]
    [rule] = [r for r in entry["rules"] if r["rule"] == "public_similarity"]
    assert rule["passed"] and rule["detail"].startswith("nearest public problem: humaneval ")
    # The gate read the screen stored at measurement (the index has not changed since).
    assert ProblemScreen.objects.get(problem=problem).context == "measurement"
    assert entry["facts"]["screen"]["screened_at"] == screen.record["screened_at"]


def test_evosyn_kept_problems_are_screened_when_measured(world, fake_server, personas):  # noqa: F811
    seed_set, endpoint = world
    fake_server.responder = PanelAnswers(
        {
            "sum_evens": {
                "strong": fenced(SUM_EVENS_SOLUTIONS[0]),
                "weak": fenced(SUM_EVENS_SOLUTIONS[2]),
            },
            "is_blank": {
                "strong": fenced(IS_EMPTY_SOLUTIONS[0]),
                "weak": fenced(IS_EMPTY_SOLUTIONS[0].replace("== ''", "!= ''")),
            },
        },
        fallback=KeyedResponder(script(strategist=[fenced(CRASHING), fenced(FIGURE_3)])),
    )
    campaign = evosyn.evosyn_campaign_create(
        name="evosyn screened",
        seed_set=seed_set,
        endpoint=endpoint,
        settings={**SMALL_SETTINGS, "measure_k": 1},
        panel=make_panel(fake_server, ["strong", "weak"]),
        created_by=personas.admin.user,
    )
    campaign_services.campaign_launch(campaign_id=campaign.pk)
    campaign = run_inline(campaign_id=campaign.pk, max_steps=80)
    kept = list(Problem.objects.filter(method="evosyn", metadata__campaign=campaign.pk))
    assert kept
    screens = {s.problem_id: s for s in ProblemScreen.objects.filter(problem__in=kept)}
    assert set(screens) == {p.pk for p in kept}
    for problem in kept:
        record = screens[problem.pk].record
        assert screens[problem.pk].context == "measurement"
        # Each evolved from the HumanEval seed: that seed is its lineage, never a neighbour.
        seed = problem.lineage_root
        assert [n["origin_id"] for n in record["lineage"]][:1] == [seed.origin_id]
        assert seed.origin_id not in [n["origin_id"] for n in record["neighbours"]]


def test_a_frontiersmith_problem_is_screened_even_though_it_cannot_be_measured(fake_server):
    import_seeds(source="humaneval")
    seed = Problem.objects.get(origin_id="HumanEval/0")
    recalled = Problem.objects.get(origin_id="HumanEval/12")
    # An open-ended problem whose baseline is HumanEval/12's program with renamed variables.
    baseline = (
        recalled.reference_solution.replace("strings", "words")
        .replace("maxlen", "best")
        .replace("for s in", "for w in")
        .replace("len(s)", "len(w)")
        .replace("return s", "return w")
    )
    problem = ProblemFactory(
        kind="synthesized",
        method="frontiersmith",
        origin_dataset="humaneval",
        origin_id="",
        statement="Pick a string from the list; the longer, the better the score.",
        reference_solution=baseline,
        comparison={"mode": "score", "verifier": "print(1)", "direction": "max"},
        parent=seed,
        lineage_root=seed,
        lineage_depth=1,
    )
    measurement = measurement_services.measurement_create(
        problem=problem, panel=make_panel(fake_server, ["strong"]), k=1
    )
    assert measurement.state == MeasurementState.FAILED
    assert measurement.reason.startswith("open-ended problem")
    screen = ProblemScreen.objects.get(problem=problem)
    nearest = screen.record["neighbours"][0]
    assert (screen.context, nearest["origin_id"], nearest["code"]) == (
        "measurement",
        "HumanEval/12",
        1.0,
    )
    assert [n["relation"] for n in screen.record["lineage"]] == ["its seed"]
