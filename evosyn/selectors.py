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


def latest_ablation(*, esc: EvoSynCampaign):
    """The campaign's most recent ablation (``evosyn.ablation``), or None."""
    return esc.ablations.select_related("strategy").first()


def ablation_series(*, ablation) -> dict:
    """The chart's data: per (M, N) pair the grid could compute, the consistency score per K
    with and without Criterion-1 (Table 1) and the usable synthesized problems (Figure 4b)."""
    cells = {(c["m"], c["n"], c["k"]): c for c in ablation.cells}
    pairs = [
        (m, n)
        for m in ablation.m_values
        for n in ablation.n_values
        if any(cells[m, n, k]["available"] for k in ablation.k_values)
    ]

    def column(key: str, k: int) -> list:
        return [cells[m, n, k][key] if cells[m, n, k]["available"] else None for m, n in pairs]

    usable = []
    for m, n in pairs:
        shown = next(cells[m, n, k] for k in ablation.k_values if cells[m, n, k]["available"])
        usable.append(shown["usable"])
    first = next((c for c in ablation.cells if c["available"]), {})
    return {
        "id": ablation.pk,
        "strategy": ablation.strategy_label,
        "replayed": ablation.replayed,
        "labels": [f"M={m} N={n}" for m, n in pairs],
        "executions": [m * n for m, n in pairs],
        "k": list(ablation.k_values),
        "score": {str(k): column("score", k) for k in ablation.k_values},
        "score_without_c1": {str(k): column("score_without_c1", k) for k in ablation.k_values},
        "usable": usable,
        "synthetic": first.get("synthetic", 0),
    }
