"""Section 4.3's variant (setting ``tests_as_code``, off by default): "instead of asking the
model to directly produce unit tests, we require it to output code from which unit tests can be
constructed". Each test-writer answer is a program; it runs in the sandbox and the unit-test list
it prints is that call's testing. A program that crashes or prints no list gives no testing and
the call is asked again within ``test_calls``; every program is kept with what it did."""

from __future__ import annotations

import json

import pytest

from evolution.models.campaigns import CampaignState
from evolution.services import campaigns as campaign_services
from evolution.streams.runner import run_inline
from evosyn import services
from evosyn.config import EvoSynSettings
from evosyn.models import InstanceRole, ProgramStatus
from tests.support.answers import fenced

from .helpers import SEED, SEED_TESTINGS, SMALL_SETTINGS, respond, script

pytestmark = pytest.mark.django_db

# The first testing's unit test, and a long input the program builds: 1,000 numbers 2 apart,
# no two closer than 1.5.
LONG = """import json

tests = [{"input": [[1.0, 2.0, 3.0], 0.5], "output": False}]
spread = [float(i) for i in range(0, 2000, 2)]
tests.append({"input": [spread, 1.5], "output": False})
print(json.dumps(tests))
"""
CRASHES = "import json\nprint(json.dumps([1 / 0]))\n"
PRINTS_NO_LIST = "print('I would rather not')\n"


def printing(testing: list[dict]) -> str:
    return f"import json\n\nprint(json.dumps({testing!r}))\n"


def program_script() -> dict:
    table = script(strategist=[])
    answers = [LONG, CRASHES, PRINTS_NO_LIST, *(printing(t) for t in SEED_TESTINGS[1:])]
    for call, program in enumerate(answers):
        table[("test_writer", f"evosyn;seed={SEED};tests={call};role=test_writer")] = fenced(
            program
        )
    return table


def test_tests_as_code_is_off_by_default():
    assert EvoSynSettings.from_dict({}).tests_as_code is False
    assert EvoSynSettings.source("tests_as_code") == "BenchForge"


def test_each_answer_is_a_program_whose_printed_list_is_the_testing(world, fake_server):
    seed_set, endpoint = world
    responder = respond(fake_server, program_script())
    prompts: dict[str, str] = {}

    def capture(body, headers):
        key = headers.get("X-BenchForge-Key", headers.get("x-benchforge-key", ""))
        prompts[key] = json.dumps(body.get("messages"))
        return responder(body, headers)

    fake_server.responder = capture
    campaign = services.evosyn_campaign_create(
        name="evosyn tests as code",
        seed_set=seed_set,
        endpoint=endpoint,
        settings={
            **SMALL_SETTINGS,
            "tests_as_code": True,
            "test_calls": 2,
            "max_iterations": 0,
            "synth_problems": 0,
        },
    )
    campaign_services.campaign_launch(campaign_id=campaign.pk)
    campaign = run_inline(campaign_id=campaign.pk, max_steps=60)
    assert campaign.state == CampaignState.COMPLETED, campaign.state_reason
    esc = campaign.evosyn
    seed = esc.instances.get(role=InstanceRole.SEED)

    # The test writer was asked for a program (section 4.3), not for the list itself.
    prompt = prompts[f"evosyn;seed={SEED};tests=0;role=test_writer"]
    assert "write a Python 3 program from which they are constructed" in prompt
    assert "## Problem 1" not in prompt  # Figure 6's examples belong to the list prompt

    # Six calls: the crashing program and the one printing no list made no testing, so two
    # more calls filled the N = 4 testings (test_calls = 2 per testing allows 8).
    programs = list(seed.test_programs.order_by("call"))
    assert [(p.call, p.status, p.unit_tests) for p in programs] == [
        (0, ProgramStatus.OK, 2),
        (1, ProgramStatus.FAILED, 0),
        (2, ProgramStatus.NO_TESTS, 0),
        (3, ProgramStatus.OK, 2),
        (4, ProgramStatus.OK, 1),
        (5, ProgramStatus.OK, 1),
    ]
    assert "ZeroDivisionError" in programs[1].error
    assert "no JSON list of tests" in programs[2].error
    assert programs[0].code == LONG and programs[0].call_id
    assert seed.test_calls_made == 6
    assert seed.matrix["tests"] == [0, 3, 4, 5] and seed.matrix["sizes"] == [2, 2, 1, 1]

    # The long input is the program's value, stored as the unit test's input (not as code).
    long_test = seed.tests.get(call=0, index=1)
    arguments = [json.loads(line) for line in long_test.input.splitlines()]
    assert len(arguments[0]) == 1000 and arguments[1] == 1.5
    assert long_test.input_expr == "" and long_test.output == "false"

    # The matrix is computed from the programs' tests, live: the two right solutions and
    # "always False" pass testing 0 (its long input included), "always True" fails it.
    assert seed.matrix["rows"] == [[1, 1, 0, 1], [1, 1, 0, 1], [1, 0, 0, 0], [0, 0, 1, 1]]
    assert seed.human == [True, True, False, False]
    # Every program run is a sandbox execution of the campaign (besides the matrix's and the
    # initial strategy's one run on the seed's matrix).
    solutions, unit_tests = 4, len({(t.input, t.output) for t in seed.tests.all()})
    human = seed.problem.tests.count()
    assert esc.sandbox_executions == len(programs) + solutions * (unit_tests + human) + 1
