"""What BenchEvolver tells review, the gate and releases about its problems
(``Kind.accepted_problems``, ``Kind.seed_problems``, ``Kind.panel_facts``, ``Kind.lineages``
and ``Kind.problem_tags``), so that they never read its lineages, candidates or attempts.

An accepted problem's figure is its candidate's panel measurement (pooled when several
campaigns measured it); a seed's is its lineages' calibration. The provenance a release keeps
says which: the campaign and candidate (round, level, family, idea, why it was accepted, the
validation ledger), or the seed calibration's level, with the per-model results either way.
"""

from __future__ import annotations

from collections import defaultdict

from django.db.models import Count, Q, QuerySet

from evolution.judging.difficulty import pool
from evolution.models import Problem
from evolution.sources import PanelFacts

from .models import Candidate, Decision, Lineage, SolverAttempt


def accepted_problems(campaign_ids: list[int]) -> QuerySet:
    """The problems these campaigns' candidates were accepted as."""
    return Problem.objects.filter(
        source_candidate__lineage__campaign_id__in=list(campaign_ids),
        source_candidate__decision=Decision.ACCEPTED,
    )


def seed_problems(campaign_ids: list[int]) -> QuerySet:
    """The seeds these campaigns started a lineage from."""
    return Problem.objects.filter(
        pk__in=Lineage.objects.filter(campaign_id__in=list(campaign_ids)).values("seed_id")
    )


def reviewable_lineages() -> QuerySet:
    """Lineages with at least one accepted problem (``n_accepted``), by campaign and position."""
    return (
        Lineage.objects.select_related("campaign", "seed")
        .annotate(n_accepted=Count("candidates", filter=Q(candidates__decision=Decision.ACCEPTED)))
        .filter(n_accepted__gte=1)
        .order_by("campaign_id", "position")
    )


def lineage_problems(lineage: Lineage) -> list[Problem]:
    """The lineage's seed, then the problems its candidates were accepted as, by round."""
    accepted = (
        Candidate.objects.filter(lineage=lineage, decision=Decision.ACCEPTED)
        .exclude(accepted_problem=None)
        .select_related("accepted_problem")
        .order_by("round")
    )
    return [lineage.seed] + [c.accepted_problem for c in accepted]


def lineage_label(lineage: Lineage) -> str:
    """A row of ``reviewable_lineages`` as the review round form lists it."""
    return f"{lineage.campaign.name} · {lineage.seed.title} ({lineage.n_accepted} accepted)"


def problem_tags(problem_ids: list[int]) -> dict[int, set[str]]:
    """The mutation family each of these problems was evolved by (a tag of the review
    vocabulary, ``engine.families``); problems evolved by no named family are absent."""
    tags: dict[int, set[str]] = defaultdict(set)
    for problem_id, family in (
        Candidate.objects.filter(accepted_problem_id__in=list(problem_ids))
        .exclude(family="")
        .values_list("accepted_problem_id", "family")
    ):
        tags[problem_id].add(family)
    return dict(tags)


def _pooled(pairs) -> tuple[int | None, int | None]:
    measured = [(p or 0, a) for p, a in pairs if a]
    if not measured:
        return None, None
    return sum(p for p, _ in measured), sum(a for _, a in measured)


def _by_problem(rows: QuerySet, key: str, campaign: str, campaign_ids) -> dict[int, list]:
    """``rows`` by the problem ``key`` names: those whose ``campaign`` (a lookup path) is one of
    ``campaign_ids`` (every campaign when empty), and for a problem they have none of (from a
    set or an earlier release), any campaign's."""
    in_campaigns = Q(**{f"{campaign}__in": campaign_ids}) if campaign_ids else Q()
    found: dict[int, list] = defaultdict(list)
    for row in rows.filter(in_campaigns):
        found[getattr(row, key)].append(row)
    if campaign_ids:
        for row in rows.exclude(**{f"{key}__in": list(found)}):
            found[getattr(row, key)].append(row)
    return found


def panel_facts(problem_ids: list[int], campaign_ids: list[int]) -> dict[int, PanelFacts]:
    """The panel facts of those of ``problem_ids`` that BenchEvolver measured: by the
    candidates of ``campaign_ids`` (every campaign when empty) that became them, else by any
    campaign's; a seed by its lineages' calibration. A few queries, whatever the number."""
    ids = list(problem_ids)
    candidates = _by_problem(
        Candidate.objects.filter(accepted_problem_id__in=ids).select_related("lineage__campaign"),
        "accepted_problem_id",
        "lineage__campaign_id",
        campaign_ids,
    )
    answered: dict[int, set[int]] = defaultdict(set)
    for cand_id, endpoint_id in (
        SolverAttempt.objects.filter(
            candidate_id__in=[c.pk for cands in candidates.values() for c in cands]
        )
        .values_list("candidate_id", "endpoint_id")
        .distinct()
    ):
        answered[cand_id].add(endpoint_id)

    facts: dict[int, PanelFacts] = {}
    for pid, cands in candidates.items():
        passes, attempts = _pooled([(c.passes, c.attempts) for c in cands])
        first = cands[0]
        facts[pid] = PanelFacts(
            passes=passes,
            attempts=attempts,
            endpoints=frozenset(e for c in cands for e in answered[c.pk]),
            provenance={
                "campaign": {"id": first.lineage.campaign_id, "name": first.lineage.campaign.name},
                "candidate": {
                    "id": first.pk,
                    "round": first.round,
                    "level": first.level,
                    "family": first.family,
                    "idea": first.idea,
                    "decision_reason": first.decision_reason,
                },
                "validation_ledger": first.validation_ledger,
                "panel_results": first.panel_results,
            },
            level=first.level,
            measured_at=first.decided_at,
            source="candidate",
        )

    lineages = _by_problem(
        Lineage.objects.filter(seed_id__in=ids).exclude(seed_id__in=list(facts)),
        "seed_id",
        "campaign_id",
        campaign_ids,
    )
    seed_attempts: dict[int, list[SolverAttempt]] = defaultdict(list)
    for a in SolverAttempt.objects.filter(
        lineage_id__in=[lin.pk for lins in lineages.values() for lin in lins],
        candidate__isnull=True,
    ).select_related("endpoint"):
        seed_attempts[a.lineage_id].append(a)
    for pid, lins in lineages.items():
        passes, attempts = _pooled([(lin.seed_passes, lin.seed_attempts) for lin in lins])
        mine = [a for lin in lins for a in seed_attempts[lin.pk]]
        facts[pid] = PanelFacts(
            passes=passes,
            attempts=attempts,
            endpoints=frozenset(a.endpoint_id for a in mine),
            provenance={
                "campaign": {"id": lins[0].campaign_id},
                "seed_calibration": {"level": lins[0].seed_level},
                "validation_ledger": [],
                # Per model as the calibration pooled them (infrastructure errors apart).
                "panel_results": pool([(a.endpoint.name, a.verdict) for a in mine]).per_model,
            },
            level=lins[0].seed_level,
            source="calibration",
        )
    return facts
