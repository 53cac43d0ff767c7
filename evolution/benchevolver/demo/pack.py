"""The offline demo pack: six seeds and the AUTHORED model responses of one demo campaign, one
story a seed (``stories/``; answers written with ``answers``).

Everything here is sample data written by hand to tell a story (labelled "replayed responses"
wherever it is shown). Nothing here decides an outcome: the engine executes every program in
the sandbox, votes, measures the panel and decides live. The stories the responses are written
to provoke:

- demo/array-sum     accepted (R1), accepted again from the new parent (R2: depth 2),
                     stop: max_accepted_per_seed
- demo/pair-count    brute force disagrees -> repaired -> accepted (R1); judge rejects false
                     difficulty (R2); lexical near-duplicate (R3); stop: no_improve_patience
- demo/sort-numbers  reference disagrees with brute force and oracle, three repairs fail ->
                     invalid (R1); not harder (R2); stop: no_improve_patience
- HumanEval/0        function-level (HumanEval's assertion harness, kept by the evolved task:
                     the same entry point, tests that are assertion programs), faithfulness
                     check passes, nobody on the panel solves it: accepted at level 5,
                     stop: accept_target_level
- HumanEval/12       malformed mutator answer -> recorded error (R1); underspecified statement
                     -> revised -> faithful, but not harder (R2); stop: no_improve_patience
- HumanEval/13       the panel fails the seed too often: skipped (outside allowed_seed_levels)

Every stdin/stdout candidate's generated inputs are checked by an input validator written from
its statement (``validate_inputs``, on as everywhere); each one accepts every input its
generator writes, so no story turns on it.

``python -m evolution.benchevolver.demo.pack`` rewrites the cassette from this file; a test checks that the
committed cassette is exactly what this file produces.
"""

from __future__ import annotations

import json
from pathlib import Path

from . import leaderboard_answers
from .answers import SOLVER_MODELS, Answers
from .stories import array_sum, humaneval_0, humaneval_12, humaneval_13, pair_count, sort_numbers

__all__ = ["SOLVER_MODELS", "STORIES", "responses", "seed_problems", "write_files"]

STORIES = (array_sum, pair_count, sort_numbers, humaneval_0, humaneval_12, humaneval_13)
CASSETTE = Path(__file__).resolve().parent / "cassettes" / "demo.jsonl"
SEEDS_FILE = Path(__file__).resolve().parent / "seeds.jsonl"
HUMANEVAL_SEEDS = ("HumanEval/0", "HumanEval/12", "HumanEval/13")
STDIO_SEEDS = ("demo/array-sum", "demo/pair-count", "demo/sort-numbers")

# Campaign settings of the demo: Table 5 defaults except where a smaller demo needs less.
DEMO_SETTINGS = {
    # The demo shows the judge's lexical near-duplicate check on a reskin of the parent; with
    # the parent check on, that reskin (the parent's reference still solves it) would end
    # not_harder at validation, before the judge. The demo says so where it shows the setting.
    "require_parent_insufficient": False,
    "execution_timeout": 1.0,
    "function_execution_timeout": 1.0,
    "program_gen_large_inputs": 2,
    "program_gen_stress_inputs": 1,
    "max_iters_per_seed": 3,
    "max_accepted_per_seed": 2,
    "no_improve_patience": 2,
}


def responses() -> dict[tuple[str, str], str]:
    """(role, replay key) -> authored answer content of every story, and the demo release's
    leaderboard: the panel's answers to the other kinds' problems."""
    answers = Answers()
    for story in STORIES:
        story.answers(answers.put, answers.panel)
    answers.out.update(leaderboard_answers.responses())
    return answers.out


def seed_problems() -> list[dict]:
    """The three stdin/stdout seeds of the pack, in the project's JSONL format."""

    def problem(origin_id, title, statement, ref, tests):
        return {
            "format": "benchforge-problem/1",
            "title": title,
            "statement": statement.strip() + "\n",
            "reference_solution": ref.strip() + "\n",
            "harness": "stdio",
            "entry_point": "",
            "starter_code": "",
            "time_limit_s": 2.0,
            "memory_mb": 256,
            "comparison": {},
            "origin_dataset": "benchforge-demo",
            "origin_id": origin_id,
            "origin_difficulty": "easy",
            "contest_date": None,
            "metadata": {"authored": "demo pack sample data"},
            "problem_set": "demo-pack",
            "tests": [
                {"tier": tier, "ordinal": n, "hidden": tier != "public", "input": i, "output": o}
                for n, (tier, i, o) in enumerate(tests)
            ],
        }

    return [
        problem(
            "demo/array-sum",
            "Array Sum",
            "# Array Sum\n\nGiven n integers, print their sum.\n\n## Input\nThe first line contains n "
            "(1 ≤ n ≤ 100); the second line contains n integers a_i (|a_i| ≤ 1000).\n\n## Output\n"
            "Print the sum.\n\n### Example\nInput\n```\n3\n1 2 3\n```\nOutput\n```\n6\n```",
            array_sum.SUM_REF,
            [
                ("public", "3\n1 2 3\n", "6\n"),
                ("small", "1\n-5\n", "-5\n"),
                ("small", "5\n10 20 30 40 50\n", "150\n"),
            ],
        ),
        problem(
            "demo/pair-count",
            "Pairs With Sum K",
            "# Pairs With Sum K\n\nCount the pairs i < j with a_i + a_j = k.\n\n## Input\nThe first "
            "line contains n and k (1 ≤ n ≤ 100, |k| ≤ 2000); the second line contains n integers "
            "(|a_i| ≤ 1000).\n\n## Output\nPrint the number of pairs.\n\n### Example\nInput\n```\n4 5\n"
            "1 4 2 3\n```\nOutput\n```\n2\n```",
            pair_count.PAIR_REF,
            [
                ("public", "4 5\n1 4 2 3\n", "2\n"),
                ("small", "1 2\n1\n", "0\n"),
                ("small", "5 4\n2 2 2 2 2\n", "10\n"),
            ],
        ),
        problem(
            "demo/sort-numbers",
            "Sort Numbers",
            "# Sort Numbers\n\nPrint the n given integers in non-decreasing order.\n\n## Input\nThe first "
            "line contains n (1 ≤ n ≤ 100); the second line contains n integers (|a_i| ≤ 1000).\n\n"
            "## Output\nThe sorted integers separated by spaces.\n\n### Example\nInput\n```\n3\n3 1 2\n```\n"
            "Output\n```\n1 2 3\n```",
            sort_numbers.SORT_REF,
            [
                ("public", "3\n3 1 2\n", "1 2 3\n"),
                ("small", "1\n-4\n", "-4\n"),
                ("small", "4\n2 2 -1 0\n", "-1 0 2 2\n"),
            ],
        ),
    ]


def write_files() -> None:
    CASSETTE.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        json.dumps(
            {
                "role": role,
                "key": key,
                "fingerprint": "",
                # Token counts are estimates (4 characters a token) so the demo shows accounting.
                "response": {
                    "content": content,
                    "tokens_in": 700,
                    "tokens_out": max(1, len(content) // 4),
                },
            },
            sort_keys=True,
        )
        for (role, key), content in sorted(responses().items())
    ]
    CASSETTE.write_text("\n".join(lines) + "\n", encoding="utf-8")
    SEEDS_FILE.write_text(
        "\n".join(json.dumps(p, sort_keys=True) for p in seed_problems()) + "\n", encoding="utf-8"
    )


if __name__ == "__main__":
    write_files()
    print(f"wrote {CASSETTE} and {SEEDS_FILE}")
