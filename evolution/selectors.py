"""Read-only queries. Views, API operations and tasks read through these."""

from __future__ import annotations

from decimal import Decimal

from django.db.models import (
    Count,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Sum,
    Value,
)
from django.db.models.functions import Coalesce
from django.utils import timezone

from .benchevolver.engine.config import EvolutionSettings
from .benchevolver.selectors import PANEL_ROLE, failed_requests
from .models import Campaign, Candidate, Lineage, LLMCall, Problem, ProblemSet
from .models.campaigns import Decision, LineageState
from .streams.kinds import registered


def problem_set_list() -> QuerySet[ProblemSet]:
    return ProblemSet.objects.annotate(problem_count=Count("problems")).order_by("name")


def problem_list(*, problem_set: str | None = None) -> QuerySet[Problem]:
    qs = Problem.objects.all().annotate(test_count=Count("tests"))
    if problem_set:
        qs = qs.filter(problem_sets__name=problem_set)
    return qs.order_by("id")


# --------------------------------------------------------------------------- campaigns


def campaign_list() -> QuerySet[Campaign]:
    return Campaign.objects.select_related("seed_set", "evolver", "panel")


def _seed_set_counts(campaigns: list[Campaign]) -> dict[int, int]:
    """Seeds of campaigns whose kind declares no ``seeds``: the first ``seed_limit``
    problems of the seed set (one query)."""
    sizes = dict(
        ProblemSet.objects.filter(pk__in={c.seed_set_id for c in campaigns})
        .annotate(n=Count("problems"))
        .values_list("pk", "n")
    )
    counts = {}
    for c in campaigns:
        size = sizes.get(c.seed_set_id, 0)
        counts[c.pk] = min(size, c.seed_limit) if c.seed_limit else size
    return counts


def campaign_list_rows(campaigns: QuerySet[Campaign] | None = None) -> list[Campaign]:
    """The campaign list pages' rows: every campaign (or those of ``campaigns``) with

    - ``seed_count``: the seeds it starts from, as its kind's own records say (the kind's
      ``seeds``: BenchEvolver's lineages, EvoSyn's seed instances, X-Coder's seeds with a
      reference, FrontierSmith's pool without what it accepted); a kind that declares none
      counts its seed set's first ``seed_limit`` problems; None: no seed set (the reasoning
      loop starts from none);
    - ``ledger_cost``: the sum of its LLM calls' costs, and ``unpriced_calls``: its calls
      that used tokens on an endpoint without a per-token price, whose cost is not known (so
      the page does not show it as $0).

    A fixed number of queries: the campaigns, the call ledger, one or two per kind.
    """
    campaigns = list(campaign_list() if campaigns is None else campaigns)
    ledger = {
        row["campaign"]: row
        for row in LLMCall.objects.filter(campaign__in=[c.pk for c in campaigns])
        .order_by()
        .values("campaign")
        .annotate(
            total=Sum("cost"),
            unpriced=Count("pk", filter=Q(cost=0) & (Q(tokens_in__gt=0) | Q(tokens_out__gt=0))),
        )
    }
    seeds: dict[int, int] = {}
    declared = {kind.name: kind for kind in registered() if kind.seeds}
    for name, kind in declared.items():
        ids = [c.pk for c in campaigns if c.kind == name]
        if ids:
            seeds.update({pk: 0 for pk in ids} | kind.seeds(ids))
    seeds.update(
        _seed_set_counts([c for c in campaigns if c.kind not in declared and c.seed_set_id])
    )
    for c in campaigns:
        c.seed_count = seeds.get(c.pk)
        calls = ledger.get(c.pk, {})
        c.ledger_cost = calls.get("total") or Decimal(0)
        c.unpriced_calls = calls.get("unpriced", 0)
    return campaigns


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
def featured_campaigns() -> dict:
    """For the landing page: the newest completed campaign (its heatmap is the best first
    picture) and the newest paused one (to resume)."""
    coding = Campaign.objects.filter(kind="benchevolver")
    return {
        "completed_campaign": coding.filter(state="completed").order_by("-finished_at").first(),
        "paused_campaign": coding.filter(state="paused").order_by("-updated_at").first(),
    }


# --------------------------------------------------------------------------- any kind's problems


def campaign_problems(campaigns) -> QuerySet[Problem]:
    """The problems campaigns of any coding kind made: BenchEvolver's accepted candidates and
    the problems other kinds record with their campaign's id (X-Coder's accepted tasks,
    EvoSyn's kept problems, FrontierSmith's accepted problems). Seeds are not included."""
    ids = [c.pk for c in campaigns]
    accepted = Candidate.objects.filter(
        lineage__campaign_id__in=ids, decision=Decision.ACCEPTED
    ).values_list("accepted_problem_id", flat=True)
    return Problem.objects.filter(
        Q(pk__in=accepted) | (Q(metadata__campaign__in=ids) & ~Q(kind="seed"))
    )
