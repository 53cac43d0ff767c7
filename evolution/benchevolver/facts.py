"""What BenchEvolver tells the gate and releases about its problems (``Kind.accepted_problems``,
``Kind.seed_problems`` and ``Kind.panel_facts``), so that they never read its lineages,
candidates or attempts.

An accepted problem's figure is its candidate's panel measurement (pooled when several
campaigns measured it); a seed's is its lineages' calibration. The provenance a release keeps
says which: the campaign and candidate (round, level, family, idea, why it was accepted, the
validation ledger), or the seed calibration's level, with the per-model results either way.
"""

from __future__ import annotations

from collections import defaultdict

from django.db.models import Q, QuerySet

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
        )
    return facts
