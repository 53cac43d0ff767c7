"""Blinding that holds against structure: every problem of a group is presented the same way
(starter code for all or none, the same limits) and nothing on the page names how a problem was
made (issue: only the seed carried starter code in HumanEval groups; an evolved title leaked its
operator, "Knapsack value (change_goal)")."""

from __future__ import annotations

import pytest

from review.selectors.reviewer import blind_heading, blind_title


@pytest.mark.parametrize(
    ("title", "shown"),
    [
        ("Knapsack value (change_goal)", "Knapsack value"),
        ("Evolved: Pair Count", "Pair Count"),
        ("Sort the Numbers (harder variant)", "Sort the Numbers"),
        ("Budget Pairs v2", "Budget Pairs"),
        ("Count Pairs (N ≤ 10^5)", "Count Pairs (N ≤ 10^5)"),
        ("Maximum Subarray Sum", "Maximum Subarray Sum"),
    ],
)
def test_a_title_names_no_operator_or_method_word(title, shown):
    assert blind_title(title) == shown


def test_a_leading_heading_is_blinded_like_a_title():
    text = "# Knapsack value (restrict_outputs)\n\nThere are n items."
    assert blind_heading(text) == "# Knapsack value\n\nThere are n items."
    assert blind_heading("No heading here.\n# (change_goal)") == "No heading here.\n# (change_goal)"


@pytest.mark.django_db
def test_starter_code_is_shown_for_every_problem_of_a_group_or_for_none(personas):
    """Only a seed imported with its prompt carries starter code: shown alone, it points at
    the seed. A title naming an operator in the statement's heading is blinded too."""
    from evolution.models import Problem
    from review import services
    from review.selectors import reviewer_group

    from .factories import lineage_with_problems

    lineage, problems = lineage_with_problems(n_evolved=2, tag="starter")
    seed, *evolved = problems
    Problem.objects.filter(pk__in=[p.pk for p in problems]).update(harness="function")
    Problem.objects.filter(pk=seed.pk).update(starter_code="def solve(xs):\n    pass\n")
    Problem.objects.filter(pk=evolved[0].pk).update(
        statement="# Knapsack value (change_goal)\n\nMaximise the value."
    )
    services.round_create(
        name="starter round",
        created_by=personas.curator.user,
        reviewers=[personas.reviewer_a.user],
        lineages=[lineage],
    )
    reviewer = personas.reviewer_a.user
    from review.models import Assignment

    assignment = Assignment.objects.get(reviewer=reviewer)
    group = reviewer_group(reviewer=reviewer, opaque_id=assignment.opaque_id)
    assert len(group.problems) == 3
    assert [p.starter_code for p in group.problems] == ["", "", ""]
    html = "".join(p.statement_html for p in group.problems)
    assert "change_goal" not in html and "Knapsack value" in html
