"""Reads of EvoSyn campaigns for the pages (admins and curators only: provenance is shown)."""

from __future__ import annotations

from evolution.models import Campaign
from evolution.models.campaigns import CampaignKind

from .models import EvoSynCampaign, InstanceRole


def campaign_list():
    return (
        Campaign.objects.filter(kind=CampaignKind.EVOSYN)
        .select_related("evosyn", "evosyn__best_strategy")
        .order_by("-created_at")
    )


def evosyn_get(*, campaign_id: int) -> EvoSynCampaign:
    return EvoSynCampaign.objects.select_related(
        "campaign", "campaign__evolver", "best_strategy", "output_set"
    ).get(pk=campaign_id)


def score_series(*, esc: EvoSynCampaign) -> dict:
    """Score per iteration and the best so far, for the chart: the document's Figure 4a."""
    rows = list(
        esc.strategies.order_by("iteration").values(
            "iteration", "version", "score", "best_so_far", "status", "island"
        )
    )
    return {
        "iterations": [r["iteration"] for r in rows],
        "scores": [r["score"] for r in rows],
        "best": [r["best_so_far"] for r in rows],
        "labels": [f"v{r['version']} island {r['island']} ({r['status']})" for r in rows],
    }


def instance_rows(*, esc: EvoSynCampaign, role: str):
    return (
        esc.instances.filter(role=role).select_related("problem", "kept_problem").order_by("slot")
    )


def summary(*, esc: EvoSynCampaign) -> dict:
    synthetic = esc.instances.filter(role=InstanceRole.SYNTHETIC)
    return {
        "seeds": esc.instances.filter(role=InstanceRole.SEED).count(),
        "seeds_ready": esc.instances.filter(role=InstanceRole.SEED, status="ready").count(),
        "strategies": esc.strategies.count(),
        "synthetic": synthetic.count(),
        "kept": synthetic.filter(status="kept").count(),
        "pruned": synthetic.filter(status="pruned").count(),
    }
