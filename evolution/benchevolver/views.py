"""BenchEvolver's own pages: its creation page, its campaign page (lineages, progress,
settings and endpoints), a lineage (its seed's measurement and every candidate's round) and a
candidate (its statement, tests by tier, panel results and every model call made for it). What
every kind's pages share is the platform's (``evolution.pages``)."""

from __future__ import annotations

from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import NoReverseMatch, reverse

from accounts.roles import ADMIN, CURATOR, has_role, role_required
from evolution import selectors as platform_selectors
from evolution.benchevolver.models import Lineage, SolverAttempt
from evolution.models import Campaign
from evolution.models.campaigns import CampaignKind
from evolution.pages import kind_campaign_new, render_campaign_page

from . import selectors, services
from .forms import BenchEvolverCampaignForm


def _campaign_context(campaign: Campaign) -> dict:
    return {
        "campaign": campaign,
        "progress": selectors.campaign_progress(campaign),
        "lineages": selectors.lineage_list(campaign),
    }


@role_required(ADMIN, CURATOR)
def campaign_detail(request, pk: int):
    campaign = get_object_or_404(platform_selectors.campaign_list(), pk=pk)
    if campaign.kind != CampaignKind.BENCHEVOLVER:
        # Other kinds have their own page (their app's "<kind>:campaign_detail").
        try:
            return redirect(reverse(f"{campaign.kind}:campaign_detail", args=[pk]))
        except NoReverseMatch:
            raise Http404(f"no page for campaigns of kind {campaign.kind}")
    context = _campaign_context(campaign)
    context["settings_table"] = selectors.campaign_settings_table(campaign)
    context["endpoint_table"] = selectors.campaign_endpoint_table(campaign)
    context["can_control"] = has_role(request.user, ADMIN)
    return render_campaign_page(
        request,
        "evolution/campaign_detail.html",
        context,
        live_body="evolution/_live_benchevolver.html",
    )


# The creation page makes BenchEvolver campaigns.
campaign_new = kind_campaign_new("evolution", BenchEvolverCampaignForm, services.campaign_create)


@role_required(ADMIN, CURATOR)
def lineage_detail(request, pk: int):
    lineage = get_object_or_404(Lineage.objects.select_related("campaign", "seed"), pk=pk)
    # Next to every pass rate, the provider errors retried behind its attempts (not counted).
    candidates = list(lineage.candidates.select_related("accepted_problem").order_by("round"))
    per_candidate = selectors.provider_errors(
        lineage.llm_calls.filter(role=selectors.PANEL_ROLE, candidate__isnull=False),
        "candidate_id",
    )
    for cand in candidates:
        cand.provider_errors = per_candidate.get(cand.pk, 0)
    seed_attempts = list(
        SolverAttempt.objects.filter(lineage=lineage, candidate__isnull=True).select_related(
            "endpoint"
        )
    )
    per_attempt = selectors.attempt_provider_errors(seed_attempts)
    for attempt in seed_attempts:
        attempt.provider_errors = per_attempt.get(attempt.pk, 0)
    return render(
        request,
        "evolution/lineage_detail.html",
        {
            "lineage": lineage,
            "candidates": candidates,
            "seed_attempts": seed_attempts,
            "seed_provider_errors": sum(selectors.panel_provider_errors(lineage=lineage).values()),
        },
    )


@role_required(ADMIN, CURATOR)
def candidate_detail(request, pk: int):
    candidate = get_object_or_404(selectors.candidate_queryset(), pk=pk)
    errors = selectors.panel_provider_errors(lineage=candidate.lineage, candidate=candidate)
    return render(
        request,
        "evolution/candidate_detail.html",
        {
            "c": candidate,
            "attempts": candidate.solver_attempts.select_related("endpoint").order_by(
                "endpoint__name", "attempt_index"
            ),
            "panel_rows": [
                (model, result, errors.get(model, 0))
                for model, result in (candidate.panel_results or {}).items()
            ],
            "provider_errors": sum(errors.values()),
            "faithfulness_provider_errors": sum(
                selectors.provider_errors(
                    candidate.llm_calls.filter(role="faithfulness"), "role"
                ).values()
            ),
            # Every call made for the candidate, its mutator's and writer's included.
            "calls": candidate.llm_calls.order_by("id"),
            "tests_by_tier": _tests_by_tier(candidate.tests),
        },
    )


def _tests_by_tier(tests: list[dict]) -> list[tuple[str, list[dict]]]:
    order = ["public", "small", "medium", "large", "stress"]
    grouped: dict[str, list[dict]] = {}
    for t in tests:
        grouped.setdefault(t["tier"], []).append(t)
    return [(tier, grouped[tier]) for tier in order if tier in grouped]
