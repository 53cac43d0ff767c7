"""What BenchEvolver tells the gate and releases about its problems (``Kind.seed_problems`` and
``Kind.panel_facts``), so that they never read its lineages, candidates or attempts.

An accepted problem's figure is its candidate's panel measurement (pooled when several
campaigns measured it); a seed's is its lineages' calibration. The provenance a release keeps
says which: the campaign and candidate (round, level, family, idea, why it was accepted, the
validation ledger), or the seed calibration's level, with the per-model results either way.
"""

from __future__ import annotations

from collections import defaultdict

from django.db.models import Q, QuerySet

from evolution.models import Problem
from evolution.sources import PanelFacts

from .models import Candidate, Lineage, SolverAttempt


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


def _seed_results(attempts: list[SolverAttempt]) -> dict:
    """Per panel model, the seed calibration's passes, attempts and verdicts."""
    rows: dict[str, dict] = {}
    for a in attempts:
        row = rows.setdefault(a.endpoint.name, {"passes": 0, "attempts": 0, "verdicts": {}})
        row["attempts"] += 1
        row["passes"] += a.verdict == "AC"
        row["verdicts"][a.verdict] = row["verdicts"].get(a.verdict, 0) + 1
    return rows


def panel_facts(problem_ids: list[int], campaign_ids: list[int]) -> dict[int, PanelFacts]:
    """The panel facts of those of ``problem_ids`` that BenchEvolver measured: by the
    candidates of ``campaign_ids`` (every campaign when empty) that became them, else by any
    campaign's; a seed by its lineages' calibration. A few queries, whatever the number."""
    ids = list(problem_ids)
    in_campaigns = Q(lineage__campaign_id__in=campaign_ids) if campaign_ids else Q()
    candidates: dict[int, list[Candidate]] = defaultdict(list)
    for cand in Candidate.objects.filter(in_campaigns, accepted_problem_id__in=ids).select_related(
        "lineage__campaign"
    ):
        candidates[cand.accepted_problem_id].append(cand)
    if campaign_ids:
        # A problem from a set or an earlier release may have been measured elsewhere.
        for cand in (
            Candidate.objects.filter(accepted_problem_id__in=ids)
            .exclude(accepted_problem_id__in=list(candidates))
            .select_related("lineage__campaign")
        ):
            candidates[cand.accepted_problem_id].append(cand)
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

    in_campaigns = Q(campaign_id__in=campaign_ids) if campaign_ids else Q()
    lineages: dict[int, list[Lineage]] = defaultdict(list)
    for lin in Lineage.objects.filter(in_campaigns, seed_id__in=ids).exclude(
        seed_id__in=list(facts)
    ):
        lineages[lin.seed_id].append(lin)
    if campaign_ids:
        for lin in Lineage.objects.filter(seed_id__in=ids).exclude(
            seed_id__in=list(lineages) + list(facts)
        ):
            lineages[lin.seed_id].append(lin)
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
                "panel_results": _seed_results(mine),
            },
            level=lins[0].seed_level,
        )
    return facts
