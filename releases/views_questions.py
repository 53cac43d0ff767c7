"""The leaderboard of a released question set: curators queue an answer model's evaluation,
everyone reads the scores by question type and difficulty level. Thin: one service each."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from accounts.roles import ADMIN, CURATOR, role_required
from evolution.models import ModelEndpoint

from . import blinding
from .blinding import closed_while_rating_blind
from .leaderboard import questions as question_leaderboard
from .models import Release
from .page_cache import cached_public_page
from .tasks import enqueue_question_run
from .views import published_release_or_404


@role_required(ADMIN, CURATOR)
@require_POST
def question_run_new(request, pk: int):
    release = get_object_or_404(Release, pk=pk)
    endpoint = get_object_or_404(ModelEndpoint, pk=request.POST.get("endpoint") or 0)
    judges = ModelEndpoint.objects.filter(pk__in=request.POST.getlist("judges"))
    try:
        samples = int(request.POST.get("samples") or 1)
        run = question_leaderboard.question_run_create(
            release=release, endpoint=endpoint, judges=judges, samples=samples, by=request.user
        )
    except ValueError:
        messages.error(request, "Answers per question must be a whole number.")
    except ValidationError as exc:
        messages.error(request, "; ".join(exc.messages))
    else:
        enqueue_question_run(run.pk)
        messages.success(request, f"Evaluation of {run.label} on the questions queued.")
    return redirect("releases:curate_detail", pk=pk)


@require_GET
@closed_while_rating_blind
@cached_public_page
def public_question_leaderboard(request, slug: str, version: str):
    release = published_release_or_404(slug, version)
    board = question_leaderboard.public_question_leaderboard(release=release)
    # Scores by type and by level would split the questions reviewers rate blind by both.
    withheld = bool(blinding.release_blind(release).questions)
    if withheld:
        board = {**board, "types": [], "levels": []}
    return render(
        request,
        "releases/question_leaderboard.html",
        {
            "release": release,
            "questions": release.questions.count(),
            "breakdown_withheld": withheld,
            **board,
        },
    )
