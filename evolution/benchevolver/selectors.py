"""What BenchEvolver's pages read: a campaign's progress (lineages, candidates, calls, cost),
its settings and endpoints as tables, its lineages; and on its lineage and candidate pages the provider errors behind each pass
rate (requests failed and retried, shown next to it and never counted in it) and a candidate
with its lineage, seed, parent and accepted problem."""

from __future__ import annotations

from django.db.models import (
    Case,
    Count,
    F,
    IntegerField,
    OuterRef,
    QuerySet,
    Subquery,
    Sum,
    Value,
    When,
)
from django.db.models.functions import Coalesce, Greatest
from django.utils import timezone

from evolution.benchevolver.models import Candidate, Decision, Lineage, LineageState
from evolution.models import Campaign, LLMCall

from .engine.config import EvolutionSettings

PANEL_ROLE = "solver"


def failed_requests():
    """Per ledger row, the requests the provider failed (transport errors, HTTP 429/5xx, a
    refusal): every try of a call that got no usable answer, and the tries before the answer of
    one that got it (``tries`` counts requests sent). A call still "sent" failed nothing yet."""
    return Case(
        When(status=LLMCall.Status.ERROR, then=Greatest(F("tries"), Value(1))),
        When(
            status__in=(LLMCall.Status.OK, LLMCall.Status.UNPARSABLE),
            tries__gt=1,
            then=F("tries") - 1,
        ),
        default=Value(0),
        output_field=IntegerField(),
    )


def provider_errors(calls: QuerySet[LLMCall], by: str) -> dict:
    """The provider errors behind ``calls`` (requests failed and retried: a failed call asked
    again, or a request repeated inside one call), summed per value of the column ``by``;
    values without any are left out. These are the infrastructure errors a pass rate leaves
    out: shown next to it, never counted in it."""
    rows = calls.order_by().values(by).annotate(n=Sum(failed_requests()))
    return {row[by]: row["n"] for row in rows if row["n"]}


def panel_provider_errors(*, lineage: Lineage, candidate: Candidate | None = None) -> dict:
    """Provider errors behind a measurement's panel attempts, per endpoint name: the seed's
    calibration (``candidate`` None) or one candidate's difficulty measurement."""
    calls = LLMCall.objects.filter(lineage=lineage, role=PANEL_ROLE)
    calls = calls.filter(candidate=candidate) if candidate else calls.filter(candidate__isnull=True)
    return provider_errors(calls, "endpoint_name")


def attempt_provider_errors(attempts) -> dict[int, int]:
    """Provider errors behind each panel attempt (by pk), from the calls it records: the
    failed calls before it was answered (``details["infra_errors"]``, each its tries; one
    without a ledger row counts once) and the retried requests of the call that answered it
    (``details["call_id"]``)."""
    attempts = list(attempts)
    ids = set()
    for attempt in attempts:
        details = attempt.details or {}
        ids.add(details.get("call_id"))
        ids.update(e.get("call_id") for e in details.get("infra_errors", []))
    ids.discard(None)
    failed = dict(
        LLMCall.objects.filter(pk__in=ids)
        .annotate(failed=failed_requests())
        .values_list("pk", "failed")
    )
    out = {}
    for attempt in attempts:
        details = attempt.details or {}
        n = sum(failed.get(e.get("call_id"), 1) for e in details.get("infra_errors", []))
        n += failed.get(details.get("call_id"), 0)
        if n:
            out[attempt.pk] = n
    return out


def candidate_queryset() -> QuerySet[Candidate]:
    return Candidate.objects.select_related(
        "lineage__campaign", "lineage__seed", "parent", "accepted_problem"
    )


def campaign_progress(campaign: Campaign) -> dict:
    """Counts for the live campaign page and the progress API (a constant number of queries)."""
    lineage_counts = dict(
        Lineage.objects.filter(campaign=campaign)
        .values_list("state")
        .annotate(n=Count("id"))
        .values_list("state", "n")
    )
    candidates = Candidate.objects.filter(lineage__campaign=campaign)
    decisions = dict(
        candidates.values_list("decision").annotate(n=Count("id")).values_list("decision", "n")
    )
    in_flight = decisions.pop("", 0)
    decided = sum(decisions.values())
    accepted = decisions.get(Decision.ACCEPTED, 0)
    total_lineages = sum(lineage_counts.values())
    unfinished = lineage_counts.get(LineageState.PENDING, 0) + lineage_counts.get(
        LineageState.EVOLVING, 0
    )
    # Lineages are "active" only while the campaign runs: a paused campaign's unfinished
    # lineages wait, a finished campaign's were stopped.
    active = unfinished if campaign.is_active else 0
    # Only BenchEvolver campaigns bound their lineages by max_iters_per_seed.
    max_iters = (
        EvolutionSettings.from_dict(campaign.settings).max_iters_per_seed
        if campaign.kind == "benchevolver"
        else 0
    )
    remaining_iters = (
        Lineage.objects.filter(
            campaign=campaign, state__in=[LineageState.PENDING, LineageState.EVOLVING]
        )
        .aggregate(done=Sum("iterations"))
        .get("done")
        or 0
    )
    remaining_iters = max(0, unfinished * max_iters - remaining_iters)
    # Working time: pauses do not count, so neither the rate nor the estimate drifts while
    # the campaign waits.
    elapsed = campaign.elapsed_seconds(timezone.now())
    rate = decided / elapsed if elapsed > 0 and decided else None
    eta = remaining_iters / rate if rate and active else None
    return {
        "state": campaign.state,
        "state_reason": campaign.state_reason,
        "replayed": campaign.replayed,
        "lineages": {
            "total": total_lineages,
            "active": active,
            "waiting": unfinished - active,
            "finished": total_lineages - unfinished,
            "by_state": lineage_counts,
        },
        "candidates": {
            "proposed": decided + in_flight,
            "in_flight": in_flight,
            "validated": candidates.filter(valid=True).count(),
            "accepted": accepted,
            "rejected": decided - accepted,
            "by_decision": decisions,
        },
        "calls": campaign.calls_made,
        "calls_by_status": calls_by_status(campaign),
        "tokens_in": campaign.tokens_in,
        "tokens_out": campaign.tokens_out,
        "cost": float(campaign.cost),
        "cost_per_accepted": float(campaign.cost) / accepted if accepted else None,
        "elapsed_s": round(elapsed, 1),
        "eta_s": round(eta, 1) if eta is not None else None,
        "percent": round(100.0 * (total_lineages - unfinished) / total_lineages, 1)
        if total_lineages
        else 0.0,
    }


def calls_by_status(campaign: Campaign) -> dict[str, int]:
    """The campaign's logged calls that did not end "ok", per status: "error" (no usable
    answer after the endpoint's retries), "unparsable" (answered, but the answer could not be
    read) and "sent" (no outcome recorded: in flight, or its worker died)."""
    rows = (
        LLMCall.objects.filter(campaign=campaign)
        .exclude(status=LLMCall.Status.OK)
        .order_by()
        .values_list("status")
        .annotate(n=Count("id"))
    )
    return dict(rows.values_list("status", "n"))


def campaign_settings_table(campaign: Campaign) -> list[dict]:
    return EvolutionSettings.table(campaign.settings)


def campaign_endpoint_table(campaign: Campaign) -> list[dict]:
    """What each model of the campaign is sent: the evolver, and per panel member its K and
    sampling, resolved exactly as the engine resolves them (``evolution/llm/sampling.py``)."""
    from evolution.llm.sampling import resolve_sampling

    current = EvolutionSettings.from_dict(campaign.settings)

    def row(role: str, endpoint, k: int | None) -> dict:
        sampling = resolve_sampling(
            endpoint, temperature=current.temperature, timeout=current.timeout
        )
        return {"role": role, "endpoint": endpoint.name, "k": k, "sampling": sampling.describe()}

    rows = [row("evolver", campaign.evolver, None)]
    for member in campaign.panel.members.select_related("endpoint"):
        rows.append(row("panel", member.endpoint, member.k(current.target_eval_k)))
    return rows


def lineage_list(campaign: Campaign) -> QuerySet[Lineage]:
    """The campaign's lineages, each with ``seed_provider_errors``: the provider errors retried
    behind its seed calibration's attempts (``panel_provider_errors``)."""
    calibration = (
        LLMCall.objects.filter(lineage=OuterRef("pk"), candidate__isnull=True, role=PANEL_ROLE)
        .order_by()
        .values("lineage")
        .annotate(n=Sum(failed_requests()))
        .values("n")
    )
    return (
        Lineage.objects.filter(campaign=campaign)
        .select_related("seed")
        .annotate(
            candidate_count=Count("candidates"),
            seed_provider_errors=Coalesce(Subquery(calibration), Value(0)),
        )
        .order_by("position")
    )


# --------------------------------------------------------------------------- provider errors


# The role of a panel attempt's call (calibration and difficulty measurement alike).
