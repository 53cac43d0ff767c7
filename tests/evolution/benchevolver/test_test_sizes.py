"""Generated tests are bounded by the test-size limit (MAX_TEST_BYTES), not by the captured
output of a program run (max_output_bytes): the generator's output streams to a file. An
ordinary-size large input (about 1.2 MB) is kept byte for byte; a generator that writes more
than the limit is refused naming the limit and the setting, with the counts in the ledger."""

from __future__ import annotations

import subprocess
import sys

import pytest
from django.test import override_settings

from evolution.benchevolver.demo import answers, pack
from evolution.benchevolver.demo.stories import array_sum
from evolution.benchevolver.services import campaign_create
from evolution.models import LLMCall

from .helpers import build_world
from .test_scenarios import SETTINGS, advance_until_done, put, running
from .test_validation_rules import PromptRecorder

pytestmark = pytest.mark.django_db(transaction=True)

SEED = "demo/array-sum"
# The demo's generator with its large tier at n = 110,000 (|a_i| ≤ 10^9, as the statement
# allows up to 2·10^5): about 1.2 MB of input per large test, above max_output_bytes (10^6).
LARGE_GENERATOR = array_sum.ARRAY_GENERATOR.replace('"large": 20000', '"large": 110000')


def _generated(program: str, tier: str, seed: int) -> str:
    """What the generator writes for (tier, seed), run here directly."""
    args = [sys.executable, "-c", program, "--tier", tier, "--seed", str(seed)]
    return subprocess.run(args, capture_output=True, check=True, text=True).stdout


def _run(fake_server, table, **settings):
    fake_server.responder = PromptRecorder(table)
    seed_set, evolver, panel = build_world(fake_server, seeds=(SEED,))
    campaign = running(
        campaign_create(
            name="sizes",
            seed_set=seed_set,
            evolver=evolver,
            panel=panel,
            settings={**SETTINGS, "validate_inputs": True, **settings},
        )
    )
    lineage = advance_until_done(campaign.lineages.get())
    return campaign, lineage.candidates.get(round=1)


def test_a_generator_writing_megabyte_inputs_gets_them_as_hidden_tests_byte_for_byte(
    fake_server,
):
    table = pack.responses()
    put(table, SEED, "test_generator", "round=1;try=0", answers.code(LARGE_GENERATOR))
    campaign, cand = _run(fake_server, table)
    assert cand.test_repairs == 0
    assert LLMCall.objects.filter(campaign=campaign, role="test_generator").count() == 1
    large = [t for t in cand.tests if t["tier"] == "large"]
    assert [t["provenance"]["seed"] for t in large] == [1000, 1001]
    for test in large:
        expected = _generated(LARGE_GENERATOR, "large", test["provenance"]["seed"])
        assert len(expected.encode()) > 1_100_000  # more than max_output_bytes
        assert test["input"] == expected
    # Checked by the statement's validator, vetted by the brute force (too slow for them:
    # infeasible, not wrong), measured, accepted: the stored problem keeps them whole.
    steps = {e["step"]: e for e in cand.validation_ledger}
    assert steps["materialize"]["outcome"] == "ok" and steps["materialize"]["hidden"] == 13
    assert "input validation" not in steps
    assert steps["hidden check"]["outcome"] == "agree"
    assert cand.valid and cand.decision == "accepted"
    stored = cand.accepted_problem.tests.filter(tier="large").order_by("ordinal")
    assert [t.input for t in stored] == [t["input"] for t in large]
    assert [t.output for t in stored] == [t["output"] for t in large]


@override_settings(MAX_TEST_BYTES=200_000)
def test_a_generator_writing_more_than_the_test_size_limit_is_refused_naming_it(fake_server):
    """The demo's generator writes about 220 kB per large test (n = 20,000): above a
    200,000-byte limit. It is regenerated with the reason, then refused."""
    table = pack.responses()
    for attempt in (1, 2):
        put(
            table,
            SEED,
            "test_generator",
            f"round=1;try={attempt}",
            answers.code(array_sum.ARRAY_GENERATOR),
        )
    campaign, cand = _run(fake_server, table)
    reason = "test generator wrote more than MAX_TEST_BYTES (200000 bytes) on tier large seed 1000"
    assert cand.decision == "invalid"
    assert cand.decision_reason == reason
    entries = [e for e in cand.validation_ledger if e["step"] == "materialize"]
    assert [e["outcome"] for e in entries] == [
        "generator failed; regenerating",
        "generator failed; regenerating",
        "invalid",
    ]
    for entry in entries:
        assert entry["reason"] == reason
        # The two examples, and the small and medium tiers' five inputs each before it.
        assert (entry["public"], entry["hidden"], entry["generated"]) == (2, 10, 10)
    # The generator was written again twice, each time told what went wrong.
    assert cand.test_repairs == 2
    assert LLMCall.objects.filter(campaign=campaign, role="test_generator").count() == 3
    prompts = fake_server.responder.prompts
    for attempt in (1, 2):
        key = f"seed={SEED};round=1;try={attempt};role=test_generator"
        assert f"The previous generator failed: {reason}." in prompts[("test_generator", key)]


def test_a_reference_printing_more_than_max_output_bytes_is_refused_naming_it(fake_server):
    """Every program judged on a test is held to max_output_bytes: a reference whose expected
    output is longer could never be matched; the reason names the setting."""
    table = pack.responses()
    put(table, SEED, "test_generator", "round=1;try=0", answers.code(LARGE_GENERATOR))
    echo = "import sys\nsys.stdout.write(sys.stdin.read())\n"
    put(
        table,
        SEED,
        "mutator",
        "round=1",
        answers.mutation("Echo the array.", "It sums it.", "input echo", echo),
    )
    _, cand = _run(fake_server, table)
    assert cand.decision == "invalid"
    assert cand.decision_reason == (
        "reference solution printed more than max_output_bytes (1000000 bytes) on large test "
        "seed 1000"
    )
    entry = cand.validation_ledger[-1]
    assert (entry["step"], entry["outcome"]) == ("materialize", "invalid")
    assert (entry["public"], entry["hidden"]) == (2, 13)
