"""Figure 6's eval() inputs: a test writer may write a long input as Python code "processed by
the eval() function". The code is only parsed in this process; the sandbox evaluates it, and the
unit test runs on the value. Code naming what does not exist, or whose value is not an input,
stays the literal text it also reads as; code the sandbox stops drops its unit test."""

from __future__ import annotations

import builtins
import json

import pytest

from evolution.models.campaigns import CampaignState
from evolution.services import campaigns as campaign_services
from evolution.streams.runner import run_inline
from evosyn import services
from evosyn.engine import prompts as P
from evosyn.models import InstanceRole

from . import helpers
from .helpers import SMALL_SETTINGS, respond, script

SPREAD = "[[float(i) for i in range(0, 2000, 2)], 1.5]"  # 1,000 numbers 2 apart: False
TOO_BIG = "[[1.0] * 10**10, 0.5]"  # 80 GB: the sandbox's memory limit stops it
UNKNOWN = "undefined_name + 1"  # names nothing: the text itself is the input


def _run(seed_set, endpoint, server, table, settings):
    respond(server, table)
    campaign = services.evosyn_campaign_create(
        name="evosyn eval inputs", seed_set=seed_set, endpoint=endpoint, settings=settings
    )
    campaign_services.campaign_launch(campaign_id=campaign.pk)
    campaign = run_inline(campaign_id=campaign.pk, max_steps=200)
    return campaign, campaign.evosyn


@pytest.mark.parametrize(
    ("text", "expression"),
    [
        (SPREAD, SPREAD),
        ("  'ab' * 3 ", "'ab' * 3"),
        ("list(range(5))", "list(range(5))"),
        (UNKNOWN, UNKNOWN),
        ("abc", ""),  # a bare name computes nothing: data
        ("5", ""),
        ("3\n1 2 3\n", ""),  # not one expression
        ("hello world", ""),
        ([1, 2], ""),  # JSON data, not text
    ],
)
def test_an_input_is_code_only_when_it_parses_as_an_expression_that_computes(text, expression):
    assert P.input_expression(text) == expression


def test_parsing_keeps_the_literal_reading_beside_the_code():
    answer = helpers.tests_answer(
        [{"input": SPREAD, "output": False}, {"input": [[1.0, 2.0], 0.5], "output": True}]
    )
    generated, plain = P.parse_tests(answer, harness="function")
    assert generated == {
        "input": json.dumps(SPREAD) + "\n",
        "output": "false",
        "input_expr": SPREAD,
    }
    assert plain["input_expr"] == "" and plain["input"] == "[1.0, 2.0]\n0.5\n"
    (stdin,) = P.parse_tests(
        helpers.tests_answer([{"input": "'7 ' * 3", "output": "21"}]), harness="stdio"
    )
    assert stdin["input_expr"] == "'7 ' * 3"


@pytest.mark.parametrize(
    ("stdout", "harness", "expected"),
    [
        ('{"value": [[1, 2], 3]}', "function", "[1, 2]\n3\n"),
        ('{"value": "1 2"}', "stdio", "1 2\n"),
        ('{"value": 5}', "stdio", None),  # "2+3" on standard input is that text
        ('{"value": "x"}', "function", None),  # not an argument list
        ('{"literal": "NameError: f"}', "function", None),
        ("not json", "stdio", None),
    ],
)
def test_a_value_becomes_an_input_only_of_the_harness_kind(stdout, harness, expected):
    assert P.evaluated_input(stdout, harness=harness) == expected


def test_the_sandbox_evaluates_the_code_and_the_matrix_runs_on_its_value(
    world, fake_server, monkeypatch
):
    evaluated_here: list[str] = []
    real_eval = builtins.eval

    def spy(source, *args, **kwargs):
        if isinstance(source, str) and source.strip() in (SPREAD, TOO_BIG, UNKNOWN):
            evaluated_here.append(source)
        return real_eval(source, *args, **kwargs)

    monkeypatch.setattr(builtins, "eval", spy)
    seed_set, endpoint = world
    table = script(strategist=[])
    key = "evosyn;seed=HumanEval/0;tests={};role=test_writer"
    # t0: 1,000 numbers, none closer than 1.5 (False); t2: too big to build; t3: its first
    # unit test names nothing, so the text is the (one) argument.
    table[("test_writer", key.format(0))] = helpers.tests_answer(
        [{"input": SPREAD, "output": False}]
    )
    table[("test_writer", key.format(2))] = helpers.tests_answer(
        [{"input": TOO_BIG, "output": True}]
    )
    table[("test_writer", key.format(3))] = helpers.tests_answer(
        [{"input": UNKNOWN, "output": False}, {"input": [[1.0, 1.1], 0.5], "output": True}]
    )
    campaign, esc = _run(
        seed_set,
        endpoint,
        fake_server,
        table,
        {**SMALL_SETTINGS, "max_iterations": 0, "synth_problems": 0},
    )
    assert campaign.state == CampaignState.COMPLETED, campaign.state_reason
    assert evaluated_here == []  # never evaluated in this process
    seed = esc.instances.get(role=InstanceRole.SEED)

    spread = seed.tests.get(input_expr=SPREAD)
    assert spread.input_expr_state == "evaluated"
    numbers, threshold = spread.input.splitlines()
    assert json.loads(numbers) == [float(i) for i in range(0, 2000, 2)] and threshold == "1.5"
    unknown = seed.tests.get(input_expr=UNKNOWN)
    assert unknown.input_expr_state == "literal" and unknown.input == json.dumps(UNKNOWN) + "\n"
    # The code the sandbox stopped left testing 2 without a unit test: no testing.
    assert not seed.tests.filter(input_expr=TOO_BIG).exists()
    assert seed.matrix["tests"] == [0, 1, 3]
    # Rows: two right solutions, "always False", "always True". On the 1,000 numbers the right
    # ones and "always False" say False; t3's literal first test fails every solution.
    assert [row[0] for row in seed.matrix["rows"]] == [1, 1, 1, 0]
    assert [row[2] for row in seed.matrix["rows"]] == [0, 0, 0, 0]
