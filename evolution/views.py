from __future__ import annotations

from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, render

from benchapp.roles import ADMIN, CURATOR, role_required

from . import selectors


@role_required(ADMIN, CURATOR)
def problem_list(request):
    problem_set = request.GET.get("set", "")
    problems = selectors.problem_list(problem_set=problem_set or None)
    page = Paginator(problems, 50).get_page(request.GET.get("page"))
    return render(
        request,
        "evolution/problem_list.html",
        {"page": page, "problem_sets": selectors.problem_set_list(), "current_set": problem_set},
    )


@role_required(ADMIN, CURATOR)
def problem_detail(request, public_id: str):
    problem = get_object_or_404(selectors.problem_list(), public_id=public_id)
    return render(
        request,
        "evolution/problem_detail.html",
        {
            "problem": problem,
            "tests": problem.tests.all()[:50],
            "test_count": problem.tests.count(),
        },
    )
