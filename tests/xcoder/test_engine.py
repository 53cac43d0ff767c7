"""The pure parts of SynthSmith: gates, the vote and its weights, sampling, settings."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from django.core.exceptions import ValidationError

from xcoder.config import XcoderSettings
from xcoder.engine import features as feat
from xcoder.engine import gates, voting
from xcoder.stages.plan import choose_style
from xcoder.stages.solve import solution_gate

from .helpers import STATEMENT

KEY = str.strip


# --------------------------------------------------------------------------- gates


def test_the_scripted_statement_passes_every_gate():
    results = gates.run_gates(
        STATEMENT, style="codeforces", features=["binary heap"], min_words=200, min_samples=2
    )
    assert [r.passed for r in results] == [True] * 4, results


def test_the_length_floor_counts_words_and_punctuation_and_says_so():
    """C.1's 200-token floor, counted as words and punctuation marks (no tokenizer ships): the
    gate's detail names what it counted, so nobody reads it as tokenizer tokens."""
    result = gates.gate_length("word " * 199, min_words=200)
    assert not result.passed
    assert result.detail.startswith("199 words and punctuation marks")
    assert "not tokenizer tokens" in result.detail
    assert gates.gate_length("word " * 200, min_words=200).passed
    # Punctuation marks count one each; a long number or word counts once (a BPE tokenizer
    # would split it into several tokens, so this count is the lower of the two).
    assert gates.count_words("Let n = 1000000007; print(n).") == 10
    assert gates.count_words("incomprehensibilities") == 1


def test_it_rejects_examples_without_explanations():
    no_explanations = STATEMENT.replace("Explanation\n", "")
    result = gates.gate_samples(no_explanations, min_samples=2)
    assert not result.passed and result.detail.startswith("0 example(s)")


def test_it_rejects_a_single_example():
    result = gates.gate_samples(STATEMENT.split("### Example 2")[0], min_samples=2)
    assert not result.passed and result.detail.startswith("1 example(s)")


def test_it_counts_leetcode_style_examples():
    text = (
        "Example 1:\nInput: nums = [1]\nOutput: 1\nExplanation: one.\n\n"
        "Example 2:\nInput: nums = [2]\nOutput: 2\nExplanation: two.\n"
    )
    assert gates.gate_samples(text, min_samples=2).passed


@pytest.mark.parametrize(
    "leak",
    ["Use dynamic programming here.", "Remember to read fast.", "Good luck!", "Hint: sort."],
)
def test_it_rejects_algorithm_names_and_motivational_phrases(leak):
    result = gates.gate_hints(STATEMENT + leak, features=[])
    assert not result.passed and "leaks:" in result.detail


def test_it_rejects_a_statement_naming_its_own_selected_feature():
    result = gates.gate_hints(
        STATEMENT + "\nA tournament_selection helps.", features=["tournament selection"]
    )
    assert not result.passed and "tournament selection" in result.detail


def test_feature_names_inside_other_words_are_not_leaks():
    assert gates.gate_hints("The prefix summary is given.", features=["prefix sum"]).passed


def test_it_rejects_missing_input_output_or_bounds():
    no_io = STATEMENT.replace("## Input", "## Data").replace("## Output", "## Result")
    result = gates.gate_io_spec(no_io, style="codeforces")
    assert not result.passed and "Input section" in result.detail
    no_bounds = STATEMENT.replace("1 <= k <= n <= 200000 and 0 <= a_i <= 10^9", "small")
    assert not gates.gate_io_spec(no_bounds, style="codeforces").passed
    # LeetCode statements describe a function: no Input/Output sections, bounds still needed.
    assert gates.gate_io_spec("## Constraints\n1 <= n <= 10", style="leetcode").passed


# --------------------------------------------------------------------------- the vote


def test_majority_labels_a_test_and_a_tie_leaves_it_unlabelled():
    assert voting.majority(["1", "1", "2", None], KEY)[0] == "1"
    label, stats = voting.majority(["1", "2", None], KEY)
    assert label is None and stats == {"answered": 2, "top": 1, "runner_up": 1}
    assert voting.majority([None, None], KEY)[0] is None


def test_semantic_weights_follow_the_category():
    assert [voting.semantic_weight(c) for c in ("nominal", "complex", "boundary", "stress")] == [
        1,
        2,
        3,
        4,
    ]
    # The D.1 names map onto the same scale.
    assert [voting.semantic_weight(c) for c in ("small", "medium", "edge", "large")] == [1, 2, 3, 4]


def test_size_weights_are_quartiles_of_input_size():
    sizes = [50, 10, 40, 20, 80, 30, 70, 60]
    assert voting.size_weights(sizes) == [3, 1, 2, 1, 4, 2, 4, 3]


def test_the_weighted_score_picks_the_candidate_right_on_heavy_tests():
    """Two candidates each agree with the majority on some tests; the heavy test decides."""
    # Inputs 0-3 (all golden with this split seed) and one hold-out input where all agree.
    outputs = [
        ["a", "x", "a"],  # heavy: candidates 0 and 2 right
        ["b", "b", "y"],  # light: candidates 0 and 1 right
        ["c", "c", "z"],  # light
        ["d", "w", "d"],  # light
        ["e", "e", "e"],
    ]
    weights = [4, 1, 1, 1, 1]
    ver = voting.verify(outputs, weights=weights, key=KEY, holdout_fraction=0.2, seed=7)
    golden = [i for i, s in enumerate(ver.split) if s == "golden"]
    expected = [sum(weights[i] for i in golden if ver.agree[i][j]) for j in range(3)]
    assert ver.weighted_scores == expected
    assert ver.golden == 0 and ver.reason_code == ""


def test_it_discards_when_the_weighted_winner_is_not_best_on_the_hold_out():
    split = voting.partition(4, holdout_fraction=0.5, seed="s")
    g1, g2 = [i for i in range(4) if split[i] == "golden"]
    outputs = [None] * 4
    outputs[g1] = ["1", "2", "1"]  # weight 4: candidates 0 and 2
    outputs[g2] = ["4", "3", "3"]  # weight 1: candidates 1 and 2
    for i in range(4):
        if split[i] == "val":
            outputs[i] = ["5", "5", "6"]  # candidate 2 wrong on the hold-out
    weights = [1] * 4
    weights[g1] = 4
    ver = voting.verify(outputs, weights=weights, key=KEY, holdout_fraction=0.5, seed="s")
    assert ver.chosen == 2 and ver.best_val == [0, 1]
    assert ver.golden is None and ver.reason_code == "holdout_disagrees"
    assert "hold-out" in ver.reason


def test_unlabelled_inputs_are_dropped_from_both_sets():
    outputs = [["1", "2"], ["3", "3"], ["4", "4"], ["5", "5"]]
    ver = voting.verify(outputs, weights=[1] * 4, key=KEY, holdout_fraction=0.5, seed=1)
    assert ver.split[0] == "dropped" and ver.labels[0] is None
    assert ver.agree[0] == [None, None]
    assert ver.golden == 0 and ver.golden_pass_rate == 1.0


def test_partition_holds_out_half_and_keeps_one_of_each():
    split = voting.partition(15, holdout_fraction=0.5, seed=42)
    assert Counter(split) == {"golden": 7, "val": 8}
    assert Counter(voting.partition(2, holdout_fraction=0.9, seed=1)) == {"golden": 1, "val": 1}
    assert voting.partition(15, holdout_fraction=0.5, seed=42) == split


# --------------------------------------------------------------------------- candidates


def test_the_static_gates_of_a_candidate_solution():
    ok = "```python\nprint(1)\n```"
    assert solution_gate(ok, tokens_out=10, max_tokens=25000) == ("print(1)\n", "")
    two = ok + "\n" + ok
    assert "exactly one" in solution_gate(two, tokens_out=10, max_tokens=25000)[1]
    bad = "```python\ndef f(:\n```"
    assert "does not parse" in solution_gate(bad, tokens_out=10, max_tokens=25000)[1]
    assert "exceeds the cap" in solution_gate(ok, tokens_out=25001, max_tokens=25000)[1]
    assert "never closed" in solution_gate("```python\nprint(1)", tokens_out=5, max_tokens=99)[1]


# --------------------------------------------------------------------------- tree and styles


def test_the_default_style_mix_is_70_15_15():
    rng = random.Random(0)
    counts = Counter(choose_style(XcoderSettings().style_mix, rng) for _ in range(4000))
    assert abs(counts["codeforces"] / 4000 - 0.70) < 0.03
    assert abs(counts["atcoder"] / 4000 - 0.15) < 0.03
    assert abs(counts["leetcode"] / 4000 - 0.15) < 0.03


def test_evolution_diff_tells_depth_from_breadth():
    existing = {"algorithm", "algorithm / sorting", "algorithm / sorting / quick sort"}
    leaves = {"algorithm / sorting / quick sort"}
    expanded = feat.as_tree(
        {"sorting": {"quick sort": ["3-way quick sort"], "heap sort": []}, "graphs": ["bfs"]}
    )
    diff = feat.evolution_diff("algorithm", existing, leaves, expanded)
    assert [s.path for s in diff.depth] == ["algorithm / sorting / quick sort / 3-way quick sort"]
    assert sorted(s.path for s in diff.breadth) == [
        "algorithm / graphs",
        "algorithm / graphs / bfs",
        "algorithm / sorting / heap sort",
    ]


def test_sampling_draws_from_the_requested_number_of_categories():
    leaves = {
        "algorithm": [("a", str(i)) for i in range(10)],
        "data structures": [("d", str(i)) for i in range(10)],
        "problem type": [("p",)],
    }
    picked = feat.sample_leaves(leaves, leaves=6, categories=2, rng=random.Random(3))
    assert len(picked) == 6
    assert len({p[0] for p in picked}) == 2
    again = feat.sample_leaves(leaves, leaves=6, categories=2, rng=random.Random(3))
    assert picked == again


def test_extraction_keeps_only_the_tree_categories():
    text = '<begin>{"Algorithms": {"graph": ["BFS"]}, "summary": "x", "Data_Structures": ["heap"]}<end>'
    cats = feat.extraction_categories(feat.parse_extraction(text))
    assert cats == {"algorithm": {"graph": {"BFS": {}}}, "data structures": {"heap": {}}}
    with pytest.raises(feat.ParseError):
        feat.parse_extraction('<begin>{"summary": "only prose"}<end>')


def test_settings_name_each_bad_key():
    with pytest.raises(ValidationError) as exc:
        XcoderSettings.from_dict(
            {"holdout_fraction": 1.5, "test_mode": "guess", "bogus": 1, "style_mix": {"x": 1}}
        )
    assert set(exc.value.message_dict) >= {"holdout_fraction", "test_mode", "bogus"}
    with pytest.raises(ValidationError) as exc:
        XcoderSettings.from_dict({"style_mix": {"topcoder": 10}})
    assert "style_mix" in exc.value.message_dict
    assert XcoderSettings.from_dict({}).generator_seed == 42
