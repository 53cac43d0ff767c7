"""A problem is no near-duplicate of itself (issue: the gate called each saturated problem
carried into the next version "near-duplicate of seed <itself>", since a re-evolution made it a
seed of its own campaign)."""

from __future__ import annotations

from releases.gate import CandidateFacts, GateRules, evaluate

STATEMENT = "Given n integers, print the largest sum of a contiguous run of them."


def _duplicate_rule(report):
    return next(r for r in report.rules if r.rule == "duplicate")


def test_a_candidate_that_is_also_a_seed_is_not_its_own_duplicate():
    facts = CandidateFacts(
        problem_id=7, public_id="p7", title="Max run", origin="evolved", statement=STATEMENT
    )
    (report,) = evaluate([facts], GateRules(), seed_statements={"p7": (7, STATEMENT)})
    assert _duplicate_rule(report).passed


def test_a_reskin_of_another_seed_still_is():
    facts = CandidateFacts(
        problem_id=8, public_id="p8", title="Max run", origin="evolved", statement=STATEMENT
    )
    (report,) = evaluate([facts], GateRules(), seed_statements={"p7": (7, STATEMENT)})
    rule = _duplicate_rule(report)
    assert not rule.passed and rule.detail.startswith("near-duplicate of seed p7")
