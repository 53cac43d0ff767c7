"""The scoring environment's four programs (test-case generator, verifier, baseline, weak
solution) come from four separate model calls with their own prompts, each program is checked
on its own and the verifier against the baseline and the weak solution; a failure of one is
asked again alone (the others are kept), over real HTTP to the loopback server and with every
program run in the real sandbox."""

from __future__ import annotations

import re

import pytest

from evolution.models import LLMCall
from evolution.models.campaigns import CampaignState
from evolution.services.campaigns import campaign_launch
from evolution.streams.runner import run_inline
from frontiersmith.demo.pack import BASELINE, fenced
from frontiersmith.models import CandidateDecision, FrontierCampaign
from tests.frontiersmith.conftest import make_campaign
from tests.support.fake_openai import Fault

pytestmark = pytest.mark.django_db(transaction=False)

WRITERS = ("test_writer", "verifier_writer", "baseline_writer", "weak_writer")
# A baseline that ignores the capacity: the verifier (rightly) finds it infeasible while it
# accepts the sampled solutions, so the baseline is at fault, not the verifier.
GREEDY_OVERWEIGHT = """\
import sys
data = sys.stdin.read().split()
print(*range(int(data[0])))
"""


def run(world, **overrides):
    campaign = make_campaign(world, rounds=1, **overrides)
    campaign_launch(campaign_id=campaign.pk)
    campaign = run_inline(campaign_id=campaign.pk)
    assert campaign.state == CampaignState.COMPLETED, campaign.state_reason
    return FrontierCampaign.objects.get(pk=campaign.pk)


def asked(script, candidate: int) -> dict[str, list[int]]:
    """{writer role: [attempts it was asked for]} of round-1 candidate ``candidate``."""
    out: dict[str, list[int]] = {}
    for role, key in script.seen:
        found = re.search(rf"round=1;c={candidate};attempt=(\d+)", key)
        if role in WRITERS and found:
            out.setdefault(role, []).append(int(found.group(1)))
    return out


def test_each_program_comes_from_its_own_call_and_a_crashing_verifier_is_asked_again_alone(
    world, script, personas
):
    fc = run(world)
    # Candidate 0 converges at once: four calls, one per program, each with its own prompt.
    assert asked(script, 0) == {role: [1] for role in WRITERS}
    prompts = {
        call.role: call.request_text
        for call in LLMCall.objects.filter(role__in=WRITERS, campaign_id=fc.pk)
    }
    assert set(prompts) == set(WRITERS)
    assert "```verifier" in prompts["verifier_writer"]
    assert "```baseline" not in prompts["verifier_writer"]
    assert "```weak" not in prompts["verifier_writer"]
    assert "```verifier" not in prompts["baseline_writer"]
    good = fc.candidates.get(round=1, index=0)
    assert good.decision == CandidateDecision.ACCEPTED
    assert {n: p["state"] for n, p in good.build_parts.items()} == dict.fromkeys(
        ("generator", "verifier", "baseline", "weak"), "passed"
    )

    # Candidate 1's verifier crashes on unparsable output: only the verifier is asked again;
    # the generator, the baseline and the weak solution were written once and kept.
    assert asked(script, 1) == {
        "test_writer": [1],
        "verifier_writer": [1, 2],
        "baseline_writer": [1],
        "weak_writer": [1],
    }
    dropped = fc.candidates.get(round=1, index=1)
    assert dropped.decision == CandidateDecision.NOT_CONVERGED
    states = {n: p["state"] for n, p in dropped.build_parts.items()}
    assert states == {"generator": "kept", "verifier": "failed", "baseline": "kept", "weak": "kept"}
    assert [e["asked"] for e in dropped.build_ledger] == [
        ["generator", "verifier", "baseline", "weak"],
        ["verifier"],
    ]
    assert list(dropped.build_ledger[-1]["blame"]) == ["verifier"]
    assert "verifier (failed): verifier on unparsable output" in dropped.decision_reason
    assert "Kept (no check blamed them): test-case generator, baseline solution, weak solution" in (
        dropped.decision_reason
    )
    # The kept programs are still on the candidate, and its page says where each one stands.
    assert dropped.baseline == BASELINE and dropped.generator and dropped.weak
    html = personas.curator.client.get(f"/frontiersmith/candidates/{dropped.pk}/").content.decode()
    verifier_row = re.search(r'<tr data-part="verifier">(.*?)</tr>', html, re.S).group(1)
    baseline_row = re.search(r'<tr data-part="baseline">(.*?)</tr>', html, re.S).group(1)
    assert "<td>failed</td>" in verifier_row and "crashed" in verifier_row
    assert "<td>1</td><td>kept</td>" in baseline_row
    assert "<td>2</td><td>verifier</td>" in html  # attempt 2 asked the verifier alone


def test_a_wrong_baseline_is_rewritten_and_the_verifier_kept(world, script):
    def responder(body, headers):
        key = {k.lower(): v for k, v in headers.items()}.get("x-benchforge-key", "")
        if "c=0;attempt=1;role=baseline_writer" in key:
            script.seen.append(("baseline_writer", key))
            return fenced("baseline", GREEDY_OVERWEIGHT)
        return script(body, headers)

    world["server"].responder = responder
    fc = run(world)
    assert asked(script, 0) == {
        "test_writer": [1],
        "verifier_writer": [1],
        "baseline_writer": [1, 2],
        "weak_writer": [1],
    }
    c = fc.candidates.get(round=1, index=0)
    assert c.decision == CandidateDecision.ACCEPTED
    first = c.build_ledger[0]
    assert list(first["blame"]) == ["baseline"]
    assert first["blame"]["baseline"][0].startswith(
        "baseline infeasible on test 1 (the verifier accepts other solutions there): "
        "infeasible: over capacity"
    )
    assert c.build_ledger[1] == {
        "attempt": 2,
        "asked": ["baseline"],
        "problems": [],
        "checks": [],
        "blame": {},
        "tests": 3,
    }
    # The second baseline prompt carried the baseline's own findings, nothing else.
    calls = LLMCall.objects.filter(campaign_id=fc.pk, role="baseline_writer")
    [retried] = [c.request_text for c in calls if "previous answer failed" in c.request_text]
    assert "over capacity" in retried and "verifier on" not in retried
    assert c.baseline == BASELINE


def test_a_failed_call_keeps_the_programs_that_arrived_and_only_it_is_retried(world, script):
    world["server"].script("weak_writer", [Fault.server_error()])
    fc = run(world)
    # The weak writer's first call failed: the step was retried asking for it alone.
    assert asked(script, 0) == {
        "test_writer": [1],
        "verifier_writer": [1],
        "baseline_writer": [1],
        "weak_writer": [1],
    }
    failed = LLMCall.objects.filter(campaign_id=fc.pk, role="weak_writer", status="error")
    assert failed.count() == 1
    weak_calls = LLMCall.objects.filter(campaign_id=fc.pk, role="weak_writer")
    # One failed, then one answer for each of candidates 0, 1 and 3 (2 was filtered out).
    assert weak_calls.count() == 4
    c = fc.candidates.get(round=1, index=0)
    assert c.decision == CandidateDecision.ACCEPTED
    assert c.build_attempts == 1  # the failed call cost no attempt
    assert [e["asked"] for e in c.build_ledger] == [["generator", "verifier", "baseline", "weak"]]
