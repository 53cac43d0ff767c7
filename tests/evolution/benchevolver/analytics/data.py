"""Realistic campaign data in bulk (bulk_create), for the analytics tests, the benchmark and
the docs' screenshots.

The shape follows the engine's records: seeds calibrated by every panel model K times, rounds
whose decisions follow Algorithm 1 (an accepted candidate is at least as hard as its parent and
gains at least one level over the seed; the lineage stops by the Table 5 rules unless
``full_rounds`` asks for every lineage to run all its rounds), accepted candidates with their
evolved problems, the panel's attempts and the call log.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import timedelta
from decimal import Decimal

from django.utils import timezone

from evolution import models as m
from evolution.benchevolver import models as bm
from evolution.judging.difficulty import phi

FAMILIES = [
    "add query dimension",
    "online updates",
    "modular counting",
    "graph generalization",
    "tighter constraints",
    "interval scheduling twist",
    "string automaton",
    "tree path queries",
    "geometry lift",
    "bitmask state",
    "game theory layer",
    "matrix exponentiation",
]
IDEAS = [
    "Answer the same question for every prefix under point updates, forcing a Fenwick tree.",
    "Count the solutions modulo 998244353 instead of finding one, needing inclusion-exclusion.",
    "Lift the array to a tree and ask for path aggregates: heavy-light decomposition.",
    "Raise n to 2e5 so the quadratic scan times out; a monotonic stack is required.",
    "Replace the fixed pattern set by many patterns matched at once with Aho-Corasick.",
    "Make the transition linear and n up to 1e18: matrix exponentiation of the recurrence.",
    "Players alternate removing items; decide the winner with Sprague-Grundy values.",
    "Ask for the k-th smallest answer over all subarrays with binary search on the value.",
]
SEED_TITLES = [
    "Two Sum Variants",
    "Balanced Brackets",
    "Longest Plateau",
    "Grid Walk",
    "Coin Change Lite",
    "Tower Heights",
    "Binary Flip",
    "Island Count",
    "Prefix Palindromes",
    "Meeting Rooms",
    "Digit Sums",
    "Shortest Route",
]
REJECTION_REASONS = {
    "invalid": [
        "brute force and reference disagree on hidden test 7 after 3 repairs",
        "statement underspecified: best-of-N pass rate 0.33 < 0.5",
        "reference exceeded the time limit on stress input 2",
    ],
    "not_harder": [
        "level 2 < seed level 1 + required gain 2 (family already accepted in another lineage: larger gain required)",
        "level 1 < seed level 1 + required gain 1",
        "level 2 is below the parent's level 3",
    ],
    "judge_rejected": ["judge: false difficulty — misleading sample output; unnatural edge case"],
    "duplicate": ["lexical near-duplicate of round 2 (jaccard 0.91)"],
    "error": ["model call failed: HTTP 503 after 5 tries"],
}
MODEL_NAMES = ["small-coder", "mid-coder", "large-coder"]
ROLES_COST = {"mutator": 0.004, "writer": 0.002, "test_generator": 0.002, "judge": 0.003}


@dataclass
class BuiltCampaign:
    campaign: m.Campaign
    lineages: list[bm.Lineage]
    candidates: list[bm.Candidate] = field(default_factory=list)
    endpoints: list[m.ModelEndpoint] = field(default_factory=list)


def _attempt_passes(rng: random.Random, rate: float, k: int) -> int:
    return sum(rng.random() < rate for _ in range(k))


def build_campaign(
    *,
    seeds: int,
    rounds: int = 10,
    rng_seed: int = 7,
    models: int = 3,
    k: int = 4,
    full_rounds: bool = False,
    candidate_attempts: bool = False,
    calls_per_candidate: int = 3,
    name: str | None = None,
    tag: str = "",
) -> BuiltCampaign:
    """A finished BenchEvolver campaign of ``seeds`` lineages with up to ``rounds`` candidates
    each (exactly ``rounds`` with ``full_rounds``). ``candidate_attempts`` also stores every
    panel attempt at every candidate (models * k rows per candidate); ``tag`` keeps names
    unique when one test builds several campaigns."""
    rng = random.Random(rng_seed)
    tag = tag or f"{rng_seed}-{seeds}-{rounds}"
    now = timezone.now()
    endpoints = [
        m.ModelEndpoint.objects.get_or_create(
            name=f"{MODEL_NAMES[i % len(MODEL_NAMES)]}{'' if i < len(MODEL_NAMES) else i}",
            defaults={"provider": "replay", "model": MODEL_NAMES[i % len(MODEL_NAMES)]},
        )[0]
        for i in range(models)
    ]
    evolver, _ = m.ModelEndpoint.objects.get_or_create(
        name="evolver", defaults={"provider": "replay", "model": "evolver"}
    )
    panel = m.Panel.objects.create(name=f"panel {tag}")
    m.PanelMember.objects.bulk_create(
        [m.PanelMember(panel=panel, endpoint=e, attempts=k) for e in endpoints]
    )
    seed_set = m.ProblemSet.objects.create(name=f"seeds {tag}")
    campaign = m.Campaign.objects.create(
        name=name or f"Campaign {tag}",
        state="completed",
        state_reason="every lineage stopped",
        seed_set=seed_set,
        evolver=evolver,
        panel=panel,
        started_at=now - timedelta(hours=5),
        finished_at=now,
    )
    difficulties = ["easy", "medium", "hard"]
    seed_problems = m.Problem.objects.bulk_create(
        [
            m.Problem(
                title=f"{SEED_TITLES[i % len(SEED_TITLES)]} {i + 1}",
                statement="Read the input and print the answer.",
                reference_solution="print(input())\n",
                harness="stdio",
                origin_dataset=f"analytics-{tag}",
                origin_id=f"s{i}",
                origin_difficulty=difficulties[i % 3],
            )
            for i in range(seeds)
        ]
    )
    seed_set.problems.add(*seed_problems)
    attempts_total = models * k
    seed_rates, lineages, seed_attempts = [], [], []
    for i, seed in enumerate(seed_problems):
        base = {"easy": 0.97, "medium": 0.88, "hard": 0.72}[seed.origin_difficulty]
        rate = min(1.0, max(0.0, rng.gauss(base, 0.08)))
        per_model = [_attempt_passes(rng, rate, k) for _ in endpoints]
        passes = sum(per_model)
        level = phi(passes / attempts_total)
        seed_rates.append((per_model, passes, level))
        skipped = level not in (1, 2) and not full_rounds
        lineages.append(
            bm.Lineage(
                campaign=campaign,
                seed=seed,
                position=i,
                state="skipped" if skipped else "done",
                stop_reason=f"seed level {level} is outside allowed_seed_levels [1, 2]"
                if skipped
                else "",
                seed_passes=passes,
                seed_attempts=attempts_total,
                seed_level=level,
                parent=seed,
                parent_level=level,
                best_level=level,
            )
        )
        for e_index, endpoint in enumerate(endpoints):
            for a in range(k):
                seed_attempts.append((i, endpoint, a, a < per_model[e_index]))
    lineages = bm.Lineage.objects.bulk_create(lineages)
    bm.SolverAttempt.objects.bulk_create(
        [
            bm.SolverAttempt(
                lineage=lineages[i],
                endpoint=endpoint,
                attempt_index=a,
                verdict="AC" if ok else "WA",
            )
            for i, endpoint, a, ok in seed_attempts
        ],
        batch_size=5000,
    )

    # Rounds: decide each candidate, then create the evolved problems of the accepted ones.
    plans = []  # (lineage index, round, decision, passes, per_model, level, family, idea, reason)
    lineage_updates = []
    for i, lin in enumerate(lineages):
        if lin.state == "skipped":
            continue
        _, seed_passes, seed_level = seed_rates[i]
        parent_level = seed_level
        rate = seed_passes / attempts_total
        accepted = no_improve = 0
        best = seed_level
        stop = ""
        for rnd in range(1, rounds + 1):
            family = rng.choice(FAMILIES)
            idea = rng.choice(IDEAS)
            roll = rng.random()
            if roll < 0.18:
                decision, measured = "invalid", False
            elif roll < 0.22:
                decision, measured = "error", False
            else:
                decision, measured = "measure", True
            per_model, passes, level = [], None, None
            if measured:
                trial = max(0.0, min(1.0, rate - rng.uniform(-0.1, 0.45)))
                per_model = [_attempt_passes(rng, trial, k) for _ in endpoints]
                passes = sum(per_model)
                level = phi(passes / attempts_total)
                if level < parent_level or level < seed_level + 1:
                    decision = "not_harder"
                else:
                    judge = rng.random()
                    decision = (
                        "judge_rejected"
                        if judge < 0.12
                        else "duplicate"
                        if judge < 0.18
                        else "accepted"
                    )
            if decision == "accepted":
                accepted += 1
                no_improve = 0
                parent_level = level
                rate = passes / attempts_total
                best = max(best, level)
            else:
                no_improve += 1
            reason = (
                f"level {level} (parent {parent_level}, seed {seed_level}, gain ≥ 1)"
                if decision == "accepted"
                else rng.choice(REJECTION_REASONS[decision])
            )
            plans.append((i, rnd, decision, passes, per_model, level, family, idea, reason))
            if not full_rounds:
                if best >= 5:
                    stop = f"accept_target_level reached (level {best})"
                elif accepted >= 3:
                    stop = f"max_accepted_per_seed reached ({accepted})"
                elif no_improve >= 4:
                    stop = f"no_improve_patience reached ({no_improve} consecutive non-accepted iterations)"
                if stop:
                    break
        lin.iterations = sum(1 for p in plans if p[0] == i)
        lin.accepted_count = accepted
        lin.best_level = best
        lin.stop_reason = stop or f"max_iters_per_seed reached ({rounds})"
        lin.steps_done = lin.iterations * 5 + 2
        lineage_updates.append(lin)
    bm.Lineage.objects.bulk_update(
        lineage_updates,
        ["iterations", "accepted_count", "best_level", "stop_reason", "steps_done"],
        batch_size=2000,
    )

    # Evolved problems in round order, so each one's parent exists before it.
    parents = {i: seed_problems[i] for i in range(len(lineages))}
    accepted_problems: dict[tuple[int, int], m.Problem] = {}
    by_round: dict[int, list] = {}
    for plan in plans:
        if plan[2] == "accepted":
            by_round.setdefault(plan[1], []).append(plan)
    candidate_parent: dict[tuple[int, int], m.Problem] = {}
    for plan in plans:  # the parent each round saw: the seed or the last accepted problem
        candidate_parent[(plan[0], plan[1])] = None
    for rnd in sorted({p[1] for p in plans}):
        todo = [p for p in plans if p[1] == rnd]
        for p in todo:
            candidate_parent[(p[0], rnd)] = parents[p[0]]
        made = m.Problem.objects.bulk_create(
            [
                m.Problem(
                    title=f"{parents[p[0]].title} · evolved R{rnd}",
                    statement=f"Evolved statement: {p[7]}",
                    reference_solution="print(input())\n",
                    harness="stdio",
                    kind="evolved",
                    method="benchevolver",
                    origin_difficulty=seed_problems[p[0]].origin_difficulty,
                    parent=parents[p[0]],
                    lineage_root=seed_problems[p[0]],
                    lineage_depth=parents[p[0]].lineage_depth + 1,
                )
                for p in by_round.get(rnd, [])
            ]
        )
        for p, problem in zip(by_round.get(rnd, []), made, strict=True):
            accepted_problems[(p[0], rnd)] = problem
            parents[p[0]] = problem

    start = now - timedelta(hours=4)
    candidates = []
    for n, (i, rnd, decision, passes, per_model, level, family, idea, reason) in enumerate(plans):
        panel_results = (
            {
                e.name: {"passes": per_model[j], "attempts": k, "verdicts": {"AC": per_model[j]}}
                for j, e in enumerate(endpoints)
            }
            if per_model
            else {}
        )
        candidates.append(
            bm.Candidate(
                lineage=lineages[i],
                round=rnd,
                parent=candidate_parent[(i, rnd)],
                stage="decided",
                title=f"{seed_problems[i].title} R{rnd}",
                statement=f"Evolved statement: {idea}",
                code="print(input())\n",
                code_diff="-print(1)\n+print(input())\n",
                idea=idea,
                family=family,
                valid=None if decision in ("error",) else decision != "invalid",
                panel_results=panel_results,
                passes=passes,
                attempts=attempts_total if per_model else None,
                level=level,
                decision=decision,
                decision_reason=reason,
                accepted_problem=accepted_problems.get((i, rnd)),
                decided_at=start + timedelta(seconds=n),
                validation_ledger=[{"step": "triangulate", "outcome": "agree"}],
            )
        )
    candidates = bm.Candidate.objects.bulk_create(candidates, batch_size=2000)

    if candidate_attempts:
        rows = []
        for cand, plan in zip(candidates, plans, strict=True):
            per_model = plan[4]
            for j, endpoint in enumerate(endpoints if per_model else []):
                for a in range(k):
                    rows.append(
                        bm.SolverAttempt(
                            lineage_id=cand.lineage_id,
                            candidate=cand,
                            endpoint=endpoint,
                            attempt_index=a,
                            verdict="AC" if a < per_model[j] else "WA",
                        )
                    )
        bm.SolverAttempt.objects.bulk_create(rows, batch_size=5000)

    calls = []
    total_cost = Decimal(0)
    roles = list(ROLES_COST)[: max(0, calls_per_candidate)]
    for cand in candidates:
        for role in roles:
            cost = Decimal(str(ROLES_COST[role]))
            total_cost += cost
            calls.append(
                m.LLMCall(
                    campaign=campaign,
                    lineage_id=cand.lineage_id,
                    candidate=cand,
                    role=role,
                    endpoint=evolver,
                    endpoint_name=evolver.name,
                    tokens_in=1200,
                    tokens_out=600,
                    cost=cost,
                    status="ok",
                    replayed=True,
                )
            )
    m.LLMCall.objects.bulk_create(calls, batch_size=5000)
    m.Campaign.objects.filter(pk=campaign.pk).update(
        calls_made=len(calls),
        tokens_in=1200 * len(calls),
        tokens_out=600 * len(calls),
        cost=total_cost,
        replayed=True,
    )
    campaign.refresh_from_db()
    return BuiltCampaign(
        campaign=campaign, lineages=lineages, candidates=candidates, endpoints=endpoints
    )
