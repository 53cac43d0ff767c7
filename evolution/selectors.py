"""Read-only queries. Views, API operations and tasks read through these."""

from __future__ import annotations

from django.db.models import Count, QuerySet

from .models import Problem, ProblemSet


def problem_set_list() -> QuerySet[ProblemSet]:
    return ProblemSet.objects.annotate(problem_count=Count("problems")).order_by("name")


def problem_list(*, problem_set: str | None = None) -> QuerySet[Problem]:
    qs = Problem.objects.all().annotate(test_count=Count("tests"))
    if problem_set:
        qs = qs.filter(problem_sets__name=problem_set)
    return qs.order_by("id")
