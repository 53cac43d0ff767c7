"""Pure stages: the three mutation operators, both divergence estimates on crafted score
vectors (checked against values computed by hand), the verifier checks, top-N selection."""

from __future__ import annotations

import json
import math

import pytest

from frontiersmith.engine import agents, divergence, environment, formulation
from tests.frontiersmith.scripted import FORMULATION, mutation

PARENT = formulation.Formulation(**FORMULATION)


@pytest.mark.parametrize(
    ("operator", "part"),
    [("change_goal", "goal"), ("restrict_outputs", "outputs"), ("generalize_inputs", "inputs")],
)
def test_each_operator_changes_its_own_part_of_the_formulation(operator, part):
    parsed = formulation.parse_mutation(
        json.dumps(mutation(operator)), operator=operator, parent=PARENT
    )
    assert parsed.operator == operator
    assert getattr(parsed.formulation, part) != getattr(PARENT, part)
    assert parsed.direction == "max"


@pytest.mark.parametrize("operator", formulation.OPERATOR_ORDER)
def test_it_rejects_a_mutation_that_leaves_the_operators_part_unchanged(operator):
    answer = mutation(operator)
    answer["formulation"] = dict(FORMULATION)
    with pytest.raises(formulation.ParseProblem, match="unchanged"):
        formulation.parse_mutation(json.dumps(answer), operator=operator, parent=PARENT)


def test_it_rejects_a_mutation_without_a_direction():
    answer = mutation("change_goal")
    answer["direction"] = "better"
    with pytest.raises(formulation.ParseProblem, match="direction"):
        formulation.parse_mutation(json.dumps(answer), operator="change_goal", parent=PARENT)


def test_minimise_spellings_become_min():
    answer = {**mutation("change_goal"), "direction": "Minimize"}
    parsed = formulation.parse_mutation(json.dumps(answer), operator="change_goal", parent=PARENT)
    assert parsed.direction == "min"


def test_the_scoring_rule_states_direction_and_zero_cases():
    rule = formulation.scoring_rule("min", "route length")
    assert "minimise the objective (route length)" in rule
    assert "-(O(s) - O(b))" in rule
    assert "infeasible output scores 0" in rule


def test_judged_divergence_is_the_mean_of_pair_verdicts():
    # 4 solutions, 6 pairs; 4 judged different -> 4/6; an unusable answer is left out.
    verdicts = {"0-1": 1.0, "0-2": 1.0, "0-3": 0.0, "1-2": 1.0, "1-3": 0.0, "2-3": 1.0}
    assert divergence.judged_divergence(verdicts) == pytest.approx(4 / 6)
    assert divergence.judged_divergence({**verdicts, "2-3": None}) == pytest.approx(3 / 5)
    assert divergence.judged_divergence({}) is None


def test_execution_divergence_matches_a_hand_computed_value():
    # m = 4 tests. q0 = (1,0,0,0), q1 = (0,0,0,0), q2 = (1,1,1,1).
    # ||q0-q1|| = 1, ||q0-q2|| = sqrt(3), ||q1-q2|| = 2; each / sqrt(4) = / 2.
    # mean over 3 pairs = (1 + sqrt(3) + 2) / 2 / 3 = 0.78868...
    vectors = [[1, 0, 0, 0], [0, 0, 0, 0], [1, 1, 1, 1]]
    expected = (1 + math.sqrt(3) + 2) / 2 / 3
    assert divergence.execution_divergence(vectors) == pytest.approx(expected)
    assert expected == pytest.approx(0.788675, abs=1e-6)


def test_identical_score_vectors_have_zero_execution_divergence():
    assert divergence.execution_divergence([[0.3, 0.5]] * 5) == 0.0
    assert divergence.execution_divergence([[0.3, 0.5]]) is None


def test_it_rejects_score_vectors_of_unequal_length():
    with pytest.raises(ValueError, match="equal length"):
        divergence.execution_divergence([[1, 2], [1]])


def test_top_keeps_the_highest_and_puts_unknown_last():
    items = [("a", 0.2), ("b", None), ("c", 0.9), ("d", 0.2)]
    assert divergence.top(items, 3, key=lambda t: t[1]) == [("c", 0.9), ("a", 0.2), ("d", 0.2)]


def _obs(**overrides):
    m = environment.Measured
    data = dict(
        direction="max",
        tests=2,
        baseline=[m(10.0), m(20.0)],
        weak=[m(5.0), m(20.0)],
        samples=[[m(12.0), m(30.0)], [m(15.0), m(25.0)]],
        garbage_verdicts=["rejected"] * len(environment.GARBAGE_OUTPUTS),
    )
    data.update(overrides)
    return environment.Observations(**data)


def test_a_consistent_environment_passes_every_check():
    assert environment.check(_obs(), min_spread=0.05) == []


def texts(obs, **kw):
    return [f.text for f in environment.check(obs, min_spread=0.05, **kw)]


def test_it_reports_a_weak_solution_that_beats_the_baseline_as_inverted():
    m = environment.Measured
    assert texts(_obs(weak=[m(11.0), m(20.0)])) == [
        "relative quality inverted: the weak solution beats the baseline on test(s) 1"
    ]
    # Minimising, the same numbers are in order.
    assert texts(_obs(direction="min", weak=[m(11.0), m(20.0)], samples=[[m(8.0), m(10.0)]])) == []


def test_it_reports_scores_collapsed_into_a_narrow_band():
    m = environment.Measured
    flat = _obs(weak=[m(10.0), m(20.0)], samples=[[m(10.1), m(20.0)], [m(10.0), m(20.1)]])
    [problem] = environment.check(flat, min_spread=0.05)
    assert problem.check == "narrow"
    assert problem.text.startswith("scores collapse into a narrow band")


def test_it_reports_a_verifier_that_crashes_on_unparsable_output_and_an_infeasible_baseline():
    m = environment.Measured
    garbage = ["rejected", "crashed: verifier RE", "rejected", "accepted as feasible"]
    found = environment.check(
        _obs(
            garbage_verdicts=garbage, baseline=[m(None, "infeasible: over", "infeasible"), m(20.0)]
        ),
        min_spread=0.05,
    )
    problems = [f.text for f in found]
    assert (
        "baseline infeasible on test 1 (the verifier accepts other solutions there): "
        "infeasible: over"
    ) in problems
    assert any("crashed: verifier RE" in p for p in problems)
    assert any("accepted as feasible" in p for p in problems)
    # The garbage findings are the verifier's; the rejected baseline is the baseline's, since
    # the verifier accepts the weak and sampled solutions on that test.
    blamed = environment.blame(found)
    assert set(blamed) == {"verifier", "baseline"}
    assert len(blamed["verifier"]) == 2 and len(blamed["baseline"]) == 1


def test_a_verifier_that_rejects_every_solution_on_a_test_is_blamed_not_the_baseline():
    m = environment.Measured
    no = m(None, "infeasible: bad", "infeasible")
    found = environment.check(
        _obs(baseline=[no, m(20.0)], weak=[no, m(10.0)], samples=[[no, m(30.0)], [no, m(25.0)]]),
        min_spread=0.05,
    )
    assert [f.check for f in found] == ["all_rejected"]
    assert environment.blame(found) == {
        "verifier": [
            "the verifier rejects every solution on test 1, the baseline too: infeasible: bad"
        ]
    }


def test_each_program_is_validated_on_its_own_and_only_its_failures_blame_it():
    m = environment.Measured
    crash = m(None, "RE: Traceback", "run")
    found = environment.check(
        _obs(weak=[crash, m(10.0)], generator_problems=["generator seed 2: duplicate input"]),
        min_spread=0.05,
    )
    assert environment.blame(found) == {
        "generator": ["generator seed 2: duplicate input"],
        "weak": ["weak solution failed on test 1: RE: Traceback"],
    }
    # Without a verifier this attempt (its answer was unparsable), the programs that ran are
    # still checked on their own, and nothing is said about the verifier.
    alone = environment.check(
        _obs(baseline=[crash, m(20.0)], garbage_verdicts=[], samples=[]), min_spread=0.05
    )
    assert environment.blame(alone) == {
        "baseline": ["baseline solution failed on test 1: RE: Traceback"]
    }


def test_an_inversion_blames_the_weak_solution_first_then_the_verifier():
    m = environment.Measured
    found = environment.check(_obs(weak=[m(11.0), m(20.0)]), min_spread=0.05)
    assert list(environment.blame(found)) == ["weak"]
    # The rewritten weak solution still beats the baseline: the verifier's ordering is next.
    history = [{"attempt": 1, "checks": ["inverted"]}]
    assert list(environment.blame(found, history)) == ["verifier"]
    # A different check in between resets the count.
    history = [{"checks": ["inverted"]}, {"checks": ["garbage"]}]
    assert list(environment.blame(found, history)) == ["weak"]


def test_a_weak_solution_infeasible_everywhere_is_reported():
    m = environment.Measured
    no = m(None, "infeasible: over", "infeasible")
    found = environment.check(_obs(weak=[no, no]), min_spread=0.05)
    assert [f.check for f in found] == ["weak_infeasible"]
    assert list(environment.blame(found)) == ["weak"]


def test_it_reads_the_labelled_block_of_each_program_and_names_a_missing_one():
    names = ("verifier", "baseline", "weak")
    text = "```verifier\nprint(1)\n```\n```baseline\nprint(2)\n```"
    with pytest.raises(formulation.ParseProblem, match="weak"):
        environment.parse_blocks(text, names)
    found = environment.parse_blocks(text + "\n```weak\nprint(3)\n```", names)
    assert found == {"verifier": "print(1)\n", "baseline": "print(2)\n", "weak": "print(3)\n"}
    # One program per answer: a verifier answer is read for its own block only.
    assert environment.parse_blocks(text, ("verifier",)) == {"verifier": "print(1)\n"}


def _act(data, *, agent="test", results=1):
    text = "```json\n" + json.dumps(data) + "\n```"
    return agents.parse_action(text, agent=agent, samples=3, results=results)


def test_an_agent_reply_is_tool_calls_or_a_verdict():
    act = _act(
        {
            "tools": [
                {"tool": "run_generator", "seed": 2},
                {"tool": "run_solution", "program": "sample2", "input": "1 5\n3 4\n"},
                {"tool": "run_verifier", "seed": 1, "output": "junk"},
            ]
        },
        results=0,
    )
    assert [c.args() for c in act.tools] == [
        {"seed": 2},
        {"input": "1 5\n3 4\n", "program": "sample2"},
        {"seed": 1, "output": "junk"},
    ]
    assert act.verdict is None
    assert _act({"verdict": "accept"}).verdict == agents.Verdict(accept=True)
    defect = _act(
        {"verdict": "defect", "program": "weak", "defect": "beats s*", "evidence": "T2"},
        results=2,
    ).verdict
    assert (defect.accept, defect.program, defect.evidence) == (False, "weak", ("T2",))


@pytest.mark.parametrize(
    ("data", "results", "problem"),
    [
        ({"verdict": "accept"}, 0, "run at least one tool"),
        ({"verdict": "defect", "program": "verifier", "defect": "x"}, 1, "evidence"),
        (
            {"verdict": "defect", "program": "verifier", "defect": "x", "evidence": ["T3"]},
            2,
            "T1, T2",
        ),
        # The test-case agent names defects in the verifier agent's programs, not its own.
        (
            {"verdict": "defect", "program": "generator", "defect": "x", "evidence": ["T1"]},
            1,
            "other agent",
        ),
        ({"tools": [{"tool": "rm_rf", "seed": 1}]}, 0, "unknown tool"),
        (
            {"tools": [{"tool": "run_solution", "program": "oracle", "seed": 1}]},
            0,
            "program must be",
        ),
        ({"tools": [{"tool": "run_generator"}]}, 0, "integer seed"),
        ({"tools": [{"tool": "run_generator", "seed": 1}] * 5}, 0, "at most 4"),
        ({"verdict": "maybe"}, 1, "accept"),
        (
            {"verdict": "defect", "program": "weak", "defect": "x", "evidence": [{"T": 1}]},
            1,
            "evidence",
        ),
    ],
)
def test_an_unusable_agent_action_says_why(data, results, problem):
    with pytest.raises(formulation.ParseProblem, match=problem):
        _act(data, results=results)


def test_a_named_defect_quotes_its_evidence_for_the_other_agent():
    result = {
        "id": "T1",
        "tool": "run_generator",
        "args": {"seed": 1},
        "status": "OK",
        "stdout": "13 40\n5 6\n",
    }
    verdict = agents.Verdict(False, "generator", "13 items announced, 1 printed", ("T1",))
    assert agents.defect_text("verifier", verdict, [result]) == (
        "verifier agent: 13 items announced, 1 printed (evidence T1 run_generator(seed=1) "
        "-> OK: 13 40 5 6)"
    )
    shown = agents.results_message([result], steps_left=1)
    assert "T1 run_generator(seed=1) -> OK\nstdout:\n```\n13 40\n5 6\n```" in shown
    assert "last reply" in shown
