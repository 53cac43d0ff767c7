"""Reads for the heatmap and the campaign charts, cached on the campaign's fingerprint.

Query budget (whatever the campaign's size): ``campaign_for_analytics`` is one query (the
campaign and its fingerprint); a chart computed on a cache miss adds a fixed number (listed per
chart in ``CHARTS``); a cache hit adds none. Rows are read with ``values()`` so ten thousand
candidates cost one round trip and no model instantiation.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

from django.core.cache import cache
from django.db.models import (
    Count,
    Exists,
    F,
    Func,
    OuterRef,
    Q,
    Subquery,
    Sum,
    TextField,
    Value,
)
from django.db.models.functions import Cast, Concat, Left

from evolution.benchevolver.models import Candidate, Lineage, SolverAttempt
from evolution.models import Campaign, LLMCall

from . import charts, heatmap
from .reviews import ReviewAggregates

# 2: funnel reasons carry their first example's own words ("label"); 3: the cost per role
# counts failed and unparsable calls
CACHE_VERSION = 3
CACHE_SECONDS = 6 * 3600

# --------------------------------------------------------------------------- fingerprint


def _stamp(qs, *parts: Func) -> Subquery:
    """One correlated subquery aggregating several columns into one text value, e.g.
    ``SELECT CONCAT(COUNT(id), ':', MAX(decided_at)) FROM … WHERE campaign = …``: one scan of
    the table per fingerprint instead of one per column."""
    pieces: list = []
    for part in parts:
        if pieces:
            pieces.append(Value(":"))
        pieces.append(Cast(part, output_field=TextField()))
    return Subquery(qs.order_by().values(v=Concat(*pieces, output_field=TextField()))[:1])


def _agg(function: str, field: str) -> Func:
    # A bare SQL aggregate: Django's Count/Max would add a GROUP BY to the subquery.
    return Func(F(field), function=function)


def campaign_for_analytics(*, pk: int, reviews: ReviewAggregates | None = None) -> Campaign:
    """The campaign with ``fp_*`` attributes that change whenever it advances: lineages
    calibrated or stepped (``steps_done`` grows with every step, also those that update rows
    without ``updated_at``), candidates proposed or decided, and (with ``reviews``, where the
    review-based charts read review aggregates) any review activity; the campaign's own
    counters (calls, cost, state) come with the row. One query; raises Campaign.DoesNotExist.

    The campaign keeps ``reviews`` as ``analytics_reviews``, and the charts read reviews from
    there: a chart cached under this fingerprint is always built from the reviews the
    fingerprint follows, and from none (nothing reviewed) when it follows none."""
    lineages = Lineage.objects.filter(campaign=OuterRef("pk"))
    candidates = Candidate.objects.filter(lineage__campaign=OuterRef("pk"))
    annotations = {
        "fp_lineages": _stamp(
            lineages,
            _agg("COUNT", "id"),
            _agg("SUM", "steps_done"),
            _agg("COUNT", "seed_attempts"),
            _agg("MAX", "updated_at"),
        ),
        "fp_candidates": _stamp(
            candidates, _agg("COUNT", "id"), _agg("COUNT", "decided_at"), _agg("MAX", "decided_at")
        ),
    }
    if reviews is not None:
        annotations.update(reviews.fingerprint())
    campaign = (
        Campaign.objects.select_related("panel", "evolver", "seed_set")
        .annotate(**annotations)
        .get(pk=pk)
    )
    campaign.analytics_reviews = reviews
    return campaign


def fingerprint(campaign: Campaign) -> str:
    parts = [
        campaign.pk,
        campaign.updated_at.isoformat() if campaign.updated_at else "",
        campaign.state,
        campaign.calls_made,
        str(campaign.cost),
    ]
    parts += [
        f"{name}={getattr(campaign, name)}"
        for name in sorted(vars(campaign))
        if name.startswith("fp_")
    ]
    return hashlib.sha1("|".join(map(str, parts)).encode()).hexdigest()[:20]


def _cached(campaign: Campaign, name: str, build: Callable[[], dict]) -> dict:
    key = f"bf:analytics:{CACHE_VERSION}:{name}:{campaign.pk}:{fingerprint(campaign)}"
    data = cache.get(key)
    if data is None:
        data = build()
        cache.set(key, data, CACHE_SECONDS)
    return data


# --------------------------------------------------------------------------- rows


def _lineage_rows(campaign: Campaign, *, offset: int = 0, limit: int = 0) -> list[dict]:
    """The campaign's lineages in position order; ``limit`` rows from ``offset`` (0: all)."""
    rows = (
        Lineage.objects.filter(campaign=campaign)
        .order_by("position", "id")
        .values(
            "id",
            "position",
            "state",
            "stop_reason",
            "seed_passes",
            "seed_attempts",
            "seed_level",
            seed_pk=F("seed_id"),
            seed_public_id=F("seed__public_id"),
            seed_title=F("seed__title"),
            seed_difficulty=F("seed__origin_difficulty"),
        )
    )
    return list(rows[offset : offset + limit] if limit else rows)


def _candidate_rows(campaign: Campaign, *fields: str, **expressions) -> list[dict]:
    return list(
        Candidate.objects.filter(lineage__campaign=campaign)
        .order_by()
        .values("id", "lineage_id", "round", "decision", *fields, **expressions)
    )


def _accepted_rows(campaign: Campaign) -> list[dict]:
    return list(
        Candidate.objects.filter(lineage__campaign=campaign, decision="accepted")
        .order_by()
        .values(
            "id",
            "lineage_id",
            "round",
            "passes",
            "attempts",
            "level",
            "panel_results",
            "accepted_problem_id",
        )
    )


def _reviews_for(campaign: Campaign) -> dict:
    """Review aggregates of the campaign's seeds and accepted problems, from the reviews the
    campaign was read with (``campaign_for_analytics``; none: nothing reviewed). The problems
    are named by subqueries, not by a list of ids: thousands of bound parameters cost more to
    plan than the join."""
    reviews: ReviewAggregates | None = campaign.analytics_reviews
    if reviews is None:
        return {}
    return reviews.aggregates(
        Lineage.objects.filter(campaign=campaign).values("seed_id"),
        Candidate.objects.filter(lineage__campaign=campaign, accepted_problem__isnull=False).values(
            "accepted_problem_id"
        ),
    )


# --------------------------------------------------------------------------- heatmap


def _cell_rows(candidates) -> list[dict]:
    """The heatmap's fields of ``candidates`` (a Candidate queryset), one round trip."""
    rows = list(
        candidates.order_by().values(
            "id",
            "lineage_id",
            "round",
            "decision",
            "passes",
            "attempts",
            "level",
            "family",
            idea_short=Left("idea", heatmap.IDEA_CHARS),
            reason=Left("decision_reason", heatmap.REASON_CHARS),
        )
    )
    for c in rows:
        c["idea"] = c.pop("idea_short")
    return rows


def _heatmap_key(campaign: Campaign) -> str:
    return f"bf:analytics:{CACHE_VERSION}:heatmap:{campaign.pk}:{fingerprint(campaign)}"


def heatmap_data(*, campaign: Campaign) -> dict:
    """Unfiltered heatmap rows and the filters' choices (2 queries on a miss)."""

    def build() -> dict:
        lineages = _lineage_rows(campaign)
        candidates = _cell_rows(Candidate.objects.filter(lineage__campaign=campaign))
        rows = heatmap.build_rows(lineages, candidates)
        return {"rows": rows, "options": heatmap.filter_options(rows)}

    return _cached(campaign, "heatmap", build)


def _heatmap_summary(campaign: Campaign) -> dict:
    """What a page needs of the rows it does not show: how many there are and the filters'
    choices (``heatmap.filter_options`` of every row), read by two grouped queries instead of
    the rows themselves."""
    accepted = Candidate.objects.filter(lineage=OuterRef("pk"), decision="accepted")
    groups = (
        Lineage.objects.filter(campaign=campaign)
        .annotate(any_accepted=Exists(accepted))
        .values("state", "any_accepted", difficulty=F("seed__origin_difficulty"))
        .annotate(n=Count("id"))
        .order_by()
    )
    groups = list(groups)
    families = (
        Candidate.objects.filter(lineage__campaign=campaign)
        .exclude(family="")
        .order_by()
        .values_list("family", flat=True)
        .distinct()
    )
    outcomes = {heatmap.outcome_of(g["state"], g["any_accepted"]) for g in groups}
    return {
        "total": sum(g["n"] for g in groups),
        "options": {
            "difficulties": sorted({g["difficulty"] or "" for g in groups}),
            "families": sorted(set(families)),
            "outcomes": [o for o in heatmap.OUTCOMES if o in outcomes],
            "sorts": list(heatmap.SORTS),
        },
    }


def _plain_page(query: HeatmapQuery) -> bool:
    """A page in seed order without filters: its rows are the lineages at its positions."""
    return (
        query.limit > 0
        and not (query.difficulty or query.family or query.outcome)
        and query.sort == "position"
    )


@dataclass(frozen=True)
class HeatmapQuery:
    difficulty: str = ""
    family: str = ""
    outcome: str = ""
    sort: str = "position"
    offset: int = 0
    limit: int = 200  # 0 = every row


def heatmap_page(*, campaign: Campaign, query: HeatmapQuery) -> dict:
    """The rows a heatmap request asks for: filtered, sorted, then one page of them.

    A plain page (seed order, no filter: what the heatmap opens with) while every row is not
    cached reads only its own lineages and their candidates, and the count and the filters'
    choices by grouped queries (4 queries whatever the campaign's size), instead of building
    every row of a 10,000-seed campaign to show 200. Any other request builds (and caches)
    every row, then filters, sorts and pages them."""
    data = cache.get(_heatmap_key(campaign))
    if data is None and _plain_page(query):
        summary = _heatmap_summary(campaign)
        lineages = _lineage_rows(campaign, offset=query.offset, limit=query.limit)
        candidates = _cell_rows(
            Candidate.objects.filter(lineage_id__in=[lin["id"] for lin in lineages])
        )
        page = heatmap.build_rows(lineages, candidates)
        return {
            "campaign": {"id": campaign.pk, "name": campaign.name, "replayed": campaign.replayed},
            "total": summary["total"],
            "all_rows": summary["total"],
            "offset": query.offset,
            "limit": query.limit,
            "max_round": heatmap.max_round(page),
            "options": summary["options"],
            "rows": page,
        }
    if data is None:
        data = heatmap_data(campaign=campaign)
    rows = heatmap.sort_rows(
        heatmap.filter_rows(
            data["rows"],
            difficulty=query.difficulty,
            family=query.family,
            outcome=query.outcome,
        ),
        query.sort,
    )
    total = len(rows)
    page = rows[query.offset : query.offset + query.limit] if query.limit else rows[query.offset :]
    return {
        "campaign": {"id": campaign.pk, "name": campaign.name, "replayed": campaign.replayed},
        "total": total,
        "all_rows": len(data["rows"]),
        "offset": query.offset,
        "limit": query.limit,
        "max_round": heatmap.max_round(page),
        "options": data["options"],
        "rows": page,
    }


# --------------------------------------------------------------------------- charts


def _pass_rates(campaign: Campaign) -> dict:
    seed_model_stats = list(
        SolverAttempt.objects.filter(lineage__campaign=campaign, candidate__isnull=True)
        .order_by()
        .values(difficulty=F("lineage__seed__origin_difficulty"), model=F("endpoint__name"))
        .annotate(
            passes=Count("id", filter=Q(verdict="AC")),
            attempts=Count("id"),
            seeds=Count("lineage_id", distinct=True),
        )
    )
    return charts.pass_rates(
        lineages=_lineage_rows(campaign),
        accepted=_accepted_rows(campaign),
        seed_model_stats=seed_model_stats,
    )


def _yield(campaign: Campaign) -> dict:
    lineages = _lineage_rows(campaign)
    candidates = _candidate_rows(campaign, "valid", "accepted_problem_id")
    return charts.yield_table(
        lineages=lineages, candidates=candidates, reviews=_reviews_for(campaign)
    )


def _funnel(campaign: Campaign) -> dict:
    candidates = _candidate_rows(campaign, reason=Left("decision_reason", 300))
    return charts.rejection_funnel(candidates=candidates)


def _cost(campaign: Campaign) -> dict:
    by_role = list(
        LLMCall.objects.filter(campaign=campaign)
        .order_by()
        .values("role")
        .annotate(
            calls=Count("id"),
            failed=Count("id", filter=Q(status=LLMCall.Status.ERROR)),
            unparsable=Count("id", filter=Q(status=LLMCall.Status.UNPARSABLE)),
            cost=Sum("cost"),
            tokens_in=Sum("tokens_in"),
            tokens_out=Sum("tokens_out"),
        )
    )
    accepted = Candidate.objects.filter(lineage__campaign=campaign, decision="accepted").count()
    totals = {
        "calls": campaign.calls_made,
        "tokens_in": campaign.tokens_in,
        "tokens_out": campaign.tokens_out,
        "cost": campaign.cost,
    }
    return charts.cost_summary(totals=totals, by_role=by_role, accepted=accepted)


def _families(campaign: Campaign) -> dict:
    return charts.families_over_time(candidates=_candidate_rows(campaign, "family"))


def _review_inputs(campaign: Campaign) -> dict:
    lineages = _lineage_rows(campaign)
    accepted = _accepted_rows(campaign)
    return {"lineages": lineages, "accepted": accepted, "reviews": _reviews_for(campaign)}


def _categories(campaign: Campaign) -> dict:
    return charts.category_shift(**_review_inputs(campaign))


def _ratings(campaign: Campaign) -> dict:
    return charts.rating_distributions(**_review_inputs(campaign))


def _new_categories(campaign: Campaign) -> dict:
    return charts.new_categories(**_review_inputs(campaign))


# Queries on a cache miss: pass_rates 3, yield 2 (+1 or 4 for reviews), funnel 1, cost 2,
# families 1, each review chart 2 (+1 or 4): constant in the campaign's size.
@dataclass(frozen=True)
class Chart:
    name: str
    title: str
    description: str
    build: Callable[[Campaign], dict]
    uses_reviews: bool = False


CHARTS: dict[str, Chart] = {
    c.name: c
    for c in (
        Chart(
            "pass_rates",
            "Pass rate: seeds vs evolved",
            "Pass@1 per target model and seed difficulty, seeds vs their accepted evolutions "
            "(Figures 2 and 4).",
            _pass_rates,
        ),
        Chart(
            "yield",
            "Yield and validity by seed difficulty",
            "Completed seeds with at least one accepted problem (Table 1).",
            _yield,
            uses_reviews=True,
        ),
        Chart(
            "funnel",
            "Rejection funnel",
            "Decided candidates through each filter of the pipeline, and rejections by reason.",
            _funnel,
        ),
        Chart(
            "cost",
            "Cost and calls per accepted problem",
            "Model calls, tokens and cost per accepted problem, by call role.",
            _cost,
        ),
        Chart(
            "families",
            "Mutation families over rounds",
            "Candidates proposed per mutation family in each round, and how many were accepted.",
            _families,
        ),
        Chart(
            "categories",
            "Algorithm categories: seed → evolved",
            "Share of algorithm-tag mentions among reviewed seeds vs evolved problems, largest "
            "shift first (Figures 3 and 9).",
            _categories,
            uses_reviews=True,
        ),
        Chart(
            "ratings",
            "Review ratings: seed vs evolved",
            "Per-problem clarity, novelty, difficulty and Codeforces estimate (Figure 8 a-d).",
            _ratings,
            uses_reviews=True,
        ),
        Chart(
            "new_categories",
            "New categories per lineage",
            "Algorithm categories a lineage's evolved problems add to its seed (Figure 8 f).",
            _new_categories,
            uses_reviews=True,
        ),
    )
}


def chart_data(*, campaign: Campaign, name: str) -> dict:
    """One chart's data (KeyError for an unknown chart name). ``campaign`` comes from
    ``campaign_for_analytics``: a review-based chart reads the reviews it was read with."""
    chart = CHARTS[name]
    return _cached(campaign, f"chart-{name}", lambda: chart.build(campaign))
