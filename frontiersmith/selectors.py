"""Reads of FrontierSmith campaigns for pages and the API."""

from __future__ import annotations

from django.db.models import Q

from . import calibration
from .models import (
    CandidateDecision,
    CandidateStage,
    FilterProbe,
    FrontierCampaign,
    FrontierCandidate,
)

FUNNEL_KEYS = ("proposed", "parsed", "passed_filter", "kept_div", "converged", "accepted")


def round_funnel(*, fc: FrontierCampaign, number: int) -> dict:
    """Counts of a round's funnel: proposed -> parsed -> passed filter -> kept (N_div) ->
    converged -> accepted, plus the yield of the build stage (converged / kept)."""
    qs = FrontierCandidate.objects.filter(frontier=fc, round=number)
    proposed = qs.count()
    parsed = qs.exclude(decision=CandidateDecision.UNPARSABLE).count()
    passed = qs.filter(filter_passed=True).count()
    kept = qs.filter(build_attempts__gt=0).count()
    # Converged: its environment was built and the solutions scored, whether or not enough of
    # them scored for an execution divergence (such a candidate is refused, not unbuilt).
    converged = qs.filter(
        Q(execution_divergence__isnull=False)
        | Q(stage=CandidateStage.EXECUTED)
        | Q(decision=CandidateDecision.UNMEASURED_DIVERGENCE)
    ).count()
    accepted = qs.filter(decision=CandidateDecision.ACCEPTED).count()
    return {
        "proposed": proposed,
        "parsed": parsed,
        "passed_filter": passed,
        "kept_div": kept,
        "converged": converged,
        "accepted": accepted,
        "build_yield": (converged / kept) if kept else None,
    }


def frontier_get(*, campaign_id: int) -> FrontierCampaign:
    return FrontierCampaign.objects.select_related(
        "campaign", "mutator_endpoint", "solver_endpoint", "seed_pool", "output_set"
    ).get(pk=campaign_id)


def filter_rates(*, fc: FrontierCampaign) -> dict:
    """The coarse filter on the labelled sets: false-positive rate (closed-ended problems it
    accepted) and false-negative rate (open-ended problems it rejected). Probes whose answer
    was unusable are counted apart, not as either error."""
    probes = list(fc.probes.select_related("problem"))
    sets = {"closed": fc.calibration_closed, "open": fc.calibration_open}
    closed = [p for p in probes if p.label == FilterProbe.Label.CLOSED and p.accepted is not None]
    opened = [p for p in probes if p.label == FilterProbe.Label.OPEN and p.accepted is not None]
    fp = sum(1 for p in closed if p.accepted)
    fn = sum(1 for p in opened if not p.accepted)
    return {
        "closed": len(closed),
        "open": len(opened),
        "false_positives": fp,
        "false_negatives": fn,
        "false_positive": fp / len(closed) if closed else None,
        "false_negative": fn / len(opened) if opened else None,
        "unusable": sum(1 for p in probes if p.accepted is None),
        "probes": probes,
        # Which labelled sets measured it, and whether each is the bundled authored one.
        "sets": {
            label: {"name": s.name, "bundled": calibration.is_bundled(s)} if s else None
            for label, s in sets.items()
        },
        "bundled_note": calibration.NOTE,
    }


def funnel(*, fc: FrontierCampaign) -> dict:
    """Per-round funnels (live for the open round) and their total."""
    numbers = sorted(set(fc.candidates.values_list("round", flat=True)))
    rounds = [{"number": n, **round_funnel(fc=fc, number=n)} for n in numbers]
    total = {k: sum(r[k] for r in rounds) for k in FUNNEL_KEYS}
    total["build_yield"] = total["converged"] / total["kept_div"] if total["kept_div"] else None
    return {"rounds": rounds, "total": total}


def candidate_list(*, fc: FrontierCampaign, round: int | None = None):
    qs = FrontierCandidate.objects.filter(frontier=fc).select_related("parent", "accepted_problem")
    if round is not None:
        qs = qs.filter(round=round)
    return qs.order_by("round", "index")
