"""The scoring environment is built by two cooperating agents over real HTTP to the loopback
server: the test-case agent writes the generator, the verifier agent the verifier, the
baseline and the weak solution; each round both review the other's programs by calling tools
that run them in the real sandbox, and accept them or name a defect citing a tool result. The
loop ends when both accept (then the fixed-rule checks are the final gate) or at the round
bound; every round is an entry of the build ledger and a row of the candidate page."""

from __future__ import annotations

import json
import re

import pytest

from evolution.models import LLMCall
from evolution.models.campaigns import CampaignState
from evolution.services.campaigns import campaign_launch
from evolution.streams.runner import run_inline
from frontiersmith.demo.pack import BASELINE, GENERATOR, VERIFIER, WEAK, fenced
from frontiersmith.models import CandidateDecision, FrontierCampaign
from tests.frontiersmith.helpers import make_campaign
from tests.support.fake_openai import Fault

pytestmark = pytest.mark.django_db(transaction=False)

AGENT_ROLES = ("test_agent", "verifier_agent", "test_review", "verifier_review")
# A generator that announces one item more than it prints: the verifier agent finds it by
# running the generator and reading its output.
SHORT_GENERATOR = GENERATOR.replace("for _ in range(n):", "for _ in range(n - 1):")
# A baseline that ignores the capacity: the verifier (rightly) finds it infeasible while it
# accepts the sampled solutions; the agents do not look for it, the final gate does.
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


def asked(script, candidate: int) -> dict[str, list[str]]:
    """{agent role: ["<round>" or "<round>.<reply>", ...]} of round-1 candidate ``candidate``."""
    out: dict[str, list[str]] = {}
    for role, key in script.seen:
        found = re.search(rf"round=1;c={candidate};agent_round=(\d+)(?:;step=(\d+))?;", key)
        if role in AGENT_ROLES and found:
            rnd, step = found.groups()
            out.setdefault(role, []).append(f"{rnd}.{step}" if step else rnd)
    return out


def override(script, answers: dict[str, str]):
    """A responder answering the replay keys containing a given text, else the script."""

    def responder(body, headers):
        lowered = {k.lower(): v for k, v in headers.items()}
        key = lowered.get("x-benchforge-key", "")
        for part, answer in answers.items():
            if part in key:
                script.seen.append((lowered.get("x-benchforge-role", ""), key))
                return answer
        return script(body, headers)

    return responder


def test_the_agents_agree_after_the_verifier_agent_runs_the_generator_and_finds_a_defect(
    world, script, personas
):
    world["server"].responder = override(
        script, {"c=0;agent_round=1;role=test_agent": fenced("generator", SHORT_GENERATOR)}
    )
    fc = run(world)
    c = fc.candidates.get(round=1, index=0)
    assert c.decision == CandidateDecision.ACCEPTED
    # Round 1: both write, both review (tools, then a verdict); round 2: only the test-case
    # agent, whose generator the verifier agent named, revises it; both review again.
    assert asked(script, 0) == {
        "test_agent": ["1", "2"],
        "verifier_agent": ["1"],
        "verifier_review": ["1.1", "1.2", "2.1", "2.2"],
        "test_review": ["1.1", "1.2", "2.1", "2.2"],
    }
    first, second = c.build_ledger
    review = first["reviews"]["verifier"]
    assert (review["verdict"], review["program"], review["evidence"]) == (
        "defect",
        "generator",
        ["T1"],
    )
    # The tool really ran the generator in the sandbox: seed 1 announces 13 items, prints 12.
    tool = review["tools"][0]
    assert (tool["tool"], tool["args"], tool["status"]) == ("run_generator", {"seed": 1}, "OK")
    assert tool["result"].startswith("13 40 ")
    assert review["defect"] == "the first line announces 13 items but 12 follow"
    assert first["reviews"]["test"]["verdict"] == "accept"
    assert (first["agreed"], first["gate"]) == (False, None)
    [named] = first["blame"]["generator"]
    assert named.startswith(
        "verifier agent: the first line announces 13 items but 12 follow "
        "(evidence T1 run_generator(seed=1) -> OK: 13 40 "
    )
    assert second["asked"] == ["generator"]
    assert {a: r["verdict"] for a, r in second["reviews"].items()} == {
        "test": "accept",
        "verifier": "accept",
    }
    assert (second["agreed"], second["gate"], second["problems"]) == (True, "passed", [])
    assert c.generator == GENERATOR
    # The revising call carried the defect, its evidence and the generator to fix.
    writes = [
        json.loads(call.request_text)["messages"][0]["content"]
        for call in LLMCall.objects.filter(campaign_id=fc.pk, role="test_agent")
    ]
    [revise] = [text for text in writes if "Defects named against" in text]
    assert named in revise and "range(n - 1)" in revise
    # The verifier agent's second reply saw the tool results in its conversation.
    reviews = LLMCall.objects.filter(campaign_id=fc.pk, role="verifier_review")
    shown = [m["content"] for c in reviews for m in json.loads(c.request_text)["messages"]]
    assert any("T1 run_generator(seed=1) -> OK\nstdout:\n```\n13 40\n" in m for m in shown)

    html = personas.curator.client.get(f"/frontiersmith/candidates/{c.pk}/").content.decode()
    rows = re.findall(r'<tr data-round="(\d+)">(.*?)</tr>', html, re.S)
    assert [r for r, _ in rows] == ["1", "2"]
    assert "defect in generator" in rows[0][1] and "run_generator" in rows[0][1]
    assert "agreed" in rows[1][1] and "passed" in rows[1][1]


def test_the_round_bound_ends_construction_with_the_open_defect_as_reason(world, script, personas):
    fc = run(world, agent_rounds=3)
    # Candidate 1's verifier crashes on unparsable output: the test-case agent runs it on such
    # output in every round, names the crash, and the verifier agent rewrites the verifier
    # alone; after agent_rounds rounds without agreement the candidate is dropped.
    dropped = fc.candidates.get(round=1, index=1)
    assert dropped.decision == CandidateDecision.NOT_CONVERGED
    assert dropped.build_attempts == 3
    assert asked(script, 1)["verifier_agent"] == ["1", "2", "3"]
    assert asked(script, 1)["test_agent"] == ["1"]
    assert [e["asked"] for e in dropped.build_ledger] == [
        ["generator", "verifier", "baseline", "weak"],
        ["verifier"],
        ["verifier"],
    ]
    for entry in dropped.build_ledger:
        review = entry["reviews"]["test"]
        assert (review["verdict"], review["program"], entry["agreed"]) == (
            "defect",
            "verifier",
            False,
        )
        # Real program output: the verifier's own traceback from the sandbox.
        crash = review["tools"][0]
        assert crash["status"] == "CRASHED" and "ValueError" in crash["result"]
        assert len(review["calls"]) == 2 and entry["gate"] is None
    assert dropped.decision_reason.startswith(
        "the test-case agent and the verifier agent did not agree in 3 round(s): test-case "
        "agent: the verifier crashed on the output 'not an answer' instead of rejecting it "
        "(evidence T1 run_verifier(seed=1, output='not an answer') -> CRASHED: "
    )
    assert dropped.decision_reason.endswith(
        "Not blamed: test-case generator, baseline solution, weak solution"
    )
    states = {n: p["state"] for n, p in dropped.build_parts.items()}
    assert states == {"generator": "kept", "verifier": "failed", "baseline": "kept", "weak": "kept"}
    assert dropped.baseline == BASELINE
    html = personas.curator.client.get(f"/frontiersmith/candidates/{dropped.pk}/").content.decode()
    rows = re.findall(r'<tr data-round="(\d+)">(.*?)</tr>', html, re.S)
    assert [r for r, _ in rows] == ["1", "2", "3"]
    assert all("defect in verifier" in row and "CRASHED" in row for _, row in rows)


def test_agreed_programs_still_pass_the_fixed_rule_gate_whose_findings_go_back(world, script):
    world["server"].responder = override(
        script,
        {
            "c=0;agent_round=1;role=verifier_agent": fenced("verifier", VERIFIER)
            + fenced("baseline", GREEDY_OVERWEIGHT)
            + fenced("weak", WEAK),
        },
    )
    fc = run(world)
    c = fc.candidates.get(round=1, index=0)
    assert c.decision == CandidateDecision.ACCEPTED
    first, second = c.build_ledger
    # The agents agreed on a baseline the verifier rejects: the final gate caught it and the
    # verifier agent revised the baseline alone.
    assert (first["agreed"], first["gate"], first["checks"]) == (
        True,
        "failed",
        ["baseline_rejected"],
    )
    assert list(first["blame"]) == ["baseline"]
    assert first["blame"]["baseline"][0].startswith(
        "final gate: baseline infeasible on test 1 (the verifier accepts other solutions "
        "there): infeasible: over capacity"
    )
    assert second["asked"] == ["baseline"] and second["gate"] == "passed"
    assert c.baseline == BASELINE
    assert asked(script, 0)["verifier_agent"] == ["1", "2"]


def test_a_failed_call_keeps_the_programs_that_arrived_and_only_it_is_retried(world, script):
    world["server"].script("verifier_agent", [Fault.server_error()])
    fc = run(world)
    failed = LLMCall.objects.filter(campaign_id=fc.pk, role="verifier_agent", status="error")
    assert failed.count() == 1
    c = fc.candidates.get(round=1, index=0)
    assert c.decision == CandidateDecision.ACCEPTED
    # The verifier agent's first call failed: the step was retried asking it alone; the
    # generator that arrived was kept, and the failed call cost no round.
    assert asked(script, 0)["test_agent"] == ["1"]
    assert c.build_attempts == 1
    assert [e["asked"] for e in c.build_ledger] == [["generator", "verifier", "baseline", "weak"]]
