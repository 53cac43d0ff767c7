"""Read-only queries. Views, API operations and tasks read through these."""

from __future__ import annotations

from decimal import Decimal

from django.db.models import (
    Count,
    Q,
    QuerySet,
    Sum,
)

from evolution.models import Campaign, LLMCall, Problem, ProblemSet

from .streams.kinds import campaigns_by_kind, registered


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


def featured_campaigns() -> dict:
    """For the landing page: the newest completed campaign (its heatmap is the best first
    picture) and the newest paused one (to resume)."""
    coding = Campaign.objects.filter(kind="benchevolver")
    return {
        "completed_campaign": coding.filter(state="completed").order_by("-finished_at").first(),
        "paused_campaign": coding.filter(state="paused").order_by("-updated_at").first(),
    }


# --------------------------------------------------------------------------- any kind's problems


def _kinds_answer(campaigns, question: str) -> QuerySet[Problem]:
    """The problems each kind of ``campaigns`` answers to ``question`` (a ``Kind`` field taking
    the kind's campaign ids and giving a Problem queryset), as one queryset."""
    by_kind = campaigns_by_kind(campaigns)
    found = Q(pk__in=[])
    for kind in registered():
        answer = getattr(kind, question)
        if kind.name in by_kind and answer is not None:
            found |= Q(pk__in=answer(by_kind[kind.name]).values("pk"))
    return Problem.objects.filter(found)


def campaign_problems(campaigns) -> QuerySet[Problem]:
    """The problems campaigns of any coding kind made, as each kind answers
    (``Kind.accepted_problems``: BenchEvolver's accepted candidates, the problems X-Coder,
    EvoSyn and FrontierSmith record with their campaign's id). Seeds are not included."""
    return _kinds_answer(campaigns, "accepted_problems")


def campaign_seeds(campaigns) -> QuerySet[Problem]:
    """The seeds campaigns measured themselves (``Kind.seed_problems``: BenchEvolver's
    lineages' seeds), which a release built from them may keep as originals."""
    return _kinds_answer(campaigns, "seed_problems")


def problem_kind_tags(problem_ids) -> dict[int, set[str]]:
    """{problem id: {tag, ...}}: the review vocabulary's tags the kinds themselves gave
    ``problem_ids`` (``Kind.problem_tags``: BenchEvolver's mutation families); problems no kind
    tagged are absent."""
    tags: dict[int, set[str]] = {}
    for kind in registered():
        if kind.problem_tags is not None:
            for pid, found in kind.problem_tags(list(problem_ids)).items():
                tags.setdefault(pid, set()).update(found)
    return tags
