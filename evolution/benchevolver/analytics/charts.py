"""The campaign charts as plain data: pure functions over the dicts the selectors read.

Shapes of the inputs (every key is read with ``[]`` only where the selectors always supply it):

- lineage: id, position, state, seed_pk, seed_title, seed_difficulty, seed_passes,
  seed_attempts, seed_level
- candidate: id, lineage_id, round, decision, reason, family, level, passes, attempts, valid,
  panel_results (only needed for accepted ones), accepted_problem_id
- reviews: {problem pk: {"clarity", "novelty", "difficulty", "quality", "cf_rating",
  "validity", "tags": [...]}} (final per-problem values; see ``analytics.reviews``)
"""

from __future__ import annotations

import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable

POOLED = "all models (pooled)"
UNLABELLED = "unlabelled"
ALL = "all"
DIFFICULTY_ORDER = ("easy", "medium", "hard")
REJECTIONS = ("invalid", "not_harder", "judge_rejected", "duplicate", "error")
RATING_DIMENSIONS = ("clarity", "novelty", "difficulty")
RATING_BINS = [1.0 + 0.5 * i for i in range(9)]  # 1, 1.5, ..., 5
CF_BIN = 200
CF_MIN, CF_MAX = 800, 3500


def difficulty_label(value: str | None) -> str:
    return (value or "").strip().lower() or UNLABELLED


def difficulty_sorted(labels: Iterable[str]) -> list[str]:
    """easy, medium, hard first, then any other label alphabetically, unlabelled last."""

    def key(label: str):
        if label in DIFFICULTY_ORDER:
            return (0, DIFFICULTY_ORDER.index(label), label)
        return (2 if label == UNLABELLED else 1, 0, label)

    return sorted(set(labels), key=key)


def _ratio(numerator: float, denominator: float, digits: int = 4) -> float | None:
    return round(numerator / denominator, digits) if denominator else None


# --------------------------------------------------------------------------- Figures 2 and 4


def pass_rates(*, lineages: list[dict], accepted: list[dict], seed_model_stats: list[dict]) -> dict:
    """Pass@1 of seeds vs evolved problems per target model and seed difficulty.

    Seeds: each calibrated seed's attempts (``seed_model_stats`` rows: difficulty, model,
    passes, attempts, from the solver attempts with no candidate). Evolved: every accepted
    candidate's panel results, grouped by its seed's difficulty. The pooled model row uses the
    lineage and candidate totals, so it exists even where per-attempt rows do not.
    """
    difficulty_of = {lin["id"]: difficulty_label(lin["seed_difficulty"]) for lin in lineages}
    cells: dict[tuple[str, str], dict] = defaultdict(
        lambda: {"seed_p": 0, "seed_a": 0, "seed_n": 0, "evo_p": 0, "evo_a": 0, "evo_n": 0}
    )
    for lin in lineages:
        if lin["seed_attempts"]:
            cell = cells[(POOLED, difficulty_label(lin["seed_difficulty"]))]
            cell["seed_p"] += lin["seed_passes"] or 0
            cell["seed_a"] += lin["seed_attempts"]
            cell["seed_n"] += 1
    for row in seed_model_stats:
        cell = cells[(row["model"], difficulty_label(row["difficulty"]))]
        cell["seed_p"] += row["passes"]
        cell["seed_a"] += row["attempts"]
        cell["seed_n"] += row.get("seeds", 0)
    for cand in accepted:
        difficulty = difficulty_of.get(cand["lineage_id"], UNLABELLED)
        if cand["attempts"]:
            cell = cells[(POOLED, difficulty)]
            cell["evo_p"] += cand["passes"] or 0
            cell["evo_a"] += cand["attempts"]
            cell["evo_n"] += 1
        for model, result in (cand.get("panel_results") or {}).items():
            attempts = int(result.get("attempts") or 0)
            if not attempts:
                continue
            cell = cells[(model, difficulty)]
            cell["evo_p"] += int(result.get("passes") or 0)
            cell["evo_a"] += attempts
            cell["evo_n"] += 1
    models = sorted({m for m, _ in cells if m != POOLED})
    if any(m == POOLED for m, _ in cells):
        models = [POOLED, *models]
    difficulties = difficulty_sorted(d for _, d in cells)
    rows = []
    for model in models:
        for difficulty in difficulties:
            if (model, difficulty) not in cells:
                continue
            c = cells[(model, difficulty)]
            rows.append(
                {
                    "model": model,
                    "difficulty": difficulty,
                    "seed_passes": c["seed_p"],
                    "seed_attempts": c["seed_a"],
                    "seeds": c["seed_n"],
                    "seed_rate": _ratio(c["seed_p"], c["seed_a"]),
                    "evolved_passes": c["evo_p"],
                    "evolved_attempts": c["evo_a"],
                    "evolved_rate": _ratio(c["evo_p"], c["evo_a"]),
                    "evolved_problems": c["evo_n"],
                }
            )
    return {"models": models, "difficulties": difficulties, "rows": rows}


# --------------------------------------------------------------------------- Table 1


def yield_table(*, lineages: list[dict], candidates: list[dict], reviews: dict) -> dict:
    """Per seed difficulty (and overall): completed seeds (lineage finished by a stopping rule),
    the fraction of them with at least one accepted problem (the yield of Table 1), accepted
    problems, the engine's validation pass rate (candidates that passed validation / candidates
    whose validation finished) and, where reviewers judged accepted problems, the post-hoc
    validity rate (valid / reviewed)."""
    difficulty_of = {lin["id"]: difficulty_label(lin["seed_difficulty"]) for lin in lineages}
    groups: dict[str, dict] = defaultdict(
        lambda: {
            "seeds": 0,
            "skipped": 0,
            "completed": 0,
            "with_accepted": 0,
            "accepted": 0,
            "validation_checked": 0,
            "validation_passed": 0,
            "reviewed": 0,
            "reviewed_valid": 0,
        }
    )
    accepted_by_lineage: Counter = Counter()
    for cand in candidates:
        difficulty = difficulty_of.get(cand["lineage_id"])
        if difficulty is None:
            continue
        for key in (difficulty, ALL):
            g = groups[key]
            if cand["valid"] is not None:
                g["validation_checked"] += 1
                g["validation_passed"] += bool(cand["valid"])
            if cand["decision"] == "accepted":
                g["accepted"] += 1
                review = reviews.get(cand.get("accepted_problem_id"))
                if review and review.get("validity"):
                    g["reviewed"] += 1
                    g["reviewed_valid"] += review["validity"] == "valid"
        if cand["decision"] == "accepted":
            accepted_by_lineage[cand["lineage_id"]] += 1
    for lin in lineages:
        for key in (difficulty_of[lin["id"]], ALL):
            g = groups[key]
            g["seeds"] += 1
            g["skipped"] += lin["state"] == "skipped"
            if lin["state"] == "done":
                g["completed"] += 1
                g["with_accepted"] += accepted_by_lineage[lin["id"]] > 0
    order = [d for d in difficulty_sorted(groups) if d != ALL]
    if ALL in groups:
        order.append(ALL)
    rows = []
    for key in order:
        g = groups[key]
        rows.append(
            {
                "difficulty": key,
                **g,
                "yield": _ratio(g["with_accepted"], g["completed"]),
                "validation_rate": _ratio(g["validation_passed"], g["validation_checked"]),
                "validity": _ratio(g["reviewed_valid"], g["reviewed"]),
            }
        )
    return {"rows": rows}


# --------------------------------------------------------------------------- rejection funnel

_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def first_clause(text: str, limit: int = 90) -> str:
    """The reason's first clause as written (before ';', ' — ' or a line break)."""
    first = re.split(r";| — |\n", text or "", maxsplit=1)[0].strip()
    if len(first) > limit:
        first = first[: limit - 1].rstrip() + "…"
    return first or "(no reason recorded)"


def normalize_reason(text: str, limit: int = 90) -> str:
    """Group free-text decision reasons: numbers become #, and only the first clause (before
    ';', ' — ' or a line break) is kept, so "level 2 < seed level 1 + required gain 1" and
    "level 3 < seed level 2 + required gain 1" count as one reason."""
    first = re.split(r";| — |\n", text or "", maxsplit=1)[0].strip()
    first = _NUMBER.sub("#", first)
    if len(first) > limit:
        first = first[: limit - 1].rstrip() + "…"
    return first or "(no reason recorded)"


FUNNEL_STAGES = (
    ("proposed", "proposed (decided)", ()),
    ("ran", "ran without error", ("error",)),
    ("valid", "passed validation", ("invalid",)),
    ("harder", "measured harder", ("not_harder",)),
    ("judged", "passed the judge", ("duplicate", "judge_rejected")),
)


def rejection_funnel(*, candidates: list[dict], top_reasons: int = 30) -> dict:
    """Decided candidates through the pipeline's filters: each stage keeps the candidates not
    rejected by it (errors may happen at any stage and are taken out first). ``reasons`` counts
    each rejection decision's normalized reasons, with one example candidate for each."""
    decided = [c for c in candidates if c["decision"]]
    by_decision = Counter(c["decision"] for c in decided)
    stages = []
    remaining = len(decided)
    for key, label, removed in FUNNEL_STAGES:
        remaining -= sum(by_decision[d] for d in removed)
        stages.append({"stage": key, "label": label, "count": remaining})
    stages.append({"stage": "accepted", "label": "accepted", "count": by_decision["accepted"]})
    reasons: dict[tuple[str, str], dict] = {}
    for c in decided:
        if c["decision"] == "accepted":
            continue
        key = (c["decision"], normalize_reason(c.get("reason") or ""))
        entry = reasons.setdefault(
            key,
            {
                "decision": key[0],
                "reason": key[1],
                # What a chart shows: the first example's own words (its numbers, not "#").
                "label": first_clause(c.get("reason") or ""),
                "count": 0,
                "example": c["id"],
            },
        )
        entry["count"] += 1
    ordered = sorted(reasons.values(), key=lambda e: (-e["count"], e["decision"], e["reason"]))
    return {
        "decided": len(decided),
        "in_flight": len(candidates) - len(decided),
        "stages": stages,
        "by_decision": [
            {"decision": d, "count": by_decision[d]} for d in ("accepted", *REJECTIONS)
        ],
        "reasons": ordered[:top_reasons],
        "reasons_total": len(ordered),
    }


# --------------------------------------------------------------------------- cost


def cost_summary(*, totals: dict, by_role: list[dict], accepted: int) -> dict:
    """Cost, calls and tokens in total and per accepted problem, and per model-call role.
    ``totals`` are the campaign's own counters (calls, tokens_in, tokens_out, cost); the role
    breakdown comes from the call log, with the calls of each role that failed (no usable
    answer) and that were answered but could not be parsed ("unparsable")."""
    tokens = (totals.get("tokens_in") or 0) + (totals.get("tokens_out") or 0)
    cost = float(totals.get("cost") or 0)
    calls = totals.get("calls") or 0
    roles = []
    for row in sorted(by_role, key=lambda r: (-float(r["cost"] or 0), -r["calls"], r["role"])):
        role_cost = float(row["cost"] or 0)
        role_tokens = (row.get("tokens_in") or 0) + (row.get("tokens_out") or 0)
        roles.append(
            {
                "role": row["role"],
                "calls": row["calls"],
                "failed": row.get("failed", 0),
                "unparsable": row.get("unparsable", 0),
                "tokens": role_tokens,
                "cost": round(role_cost, 6),
                "calls_per_accepted": _ratio(row["calls"], accepted, 2),
                "tokens_per_accepted": _ratio(role_tokens, accepted, 1),
                "cost_per_accepted": _ratio(role_cost, accepted, 6),
            }
        )
    return {
        "accepted": accepted,
        "calls": calls,
        "failed": sum(r["failed"] for r in roles),
        "unparsable": sum(r["unparsable"] for r in roles),
        "tokens": tokens,
        "cost": round(cost, 6),
        "calls_per_accepted": _ratio(calls, accepted, 2),
        "tokens_per_accepted": _ratio(tokens, accepted, 1),
        "cost_per_accepted": _ratio(cost, accepted, 6),
        "roles": roles,
    }


# --------------------------------------------------------------------------- families


def families_over_time(*, candidates: list[dict], top: int = 8) -> dict:
    """Mutation families proposed and accepted per round (the lineage's clock: round r is the
    r-th iteration of every seed). The ``top`` most proposed families keep their names, the
    rest are folded into "other"."""
    proposed = Counter((c["family"] or "unnamed") for c in candidates)
    names = [f for f, _ in sorted(proposed.items(), key=lambda kv: (-kv[1], kv[0]))[:top]]
    fold = len(proposed) > len(names)
    series = [*names, "other"] if fold else names
    rounds = sorted({c["round"] for c in candidates})
    index = {r: i for i, r in enumerate(rounds)}
    counts = {f: [0] * len(rounds) for f in series}
    accepted = {f: [0] * len(rounds) for f in series}
    table: dict[str, dict] = {}
    for c in candidates:
        family = c["family"] or "unnamed"
        key = family if family in counts else "other"
        counts[key][index[c["round"]]] += 1
        row = table.setdefault(family, {"family": family, "proposed": 0, "accepted": 0})
        row["proposed"] += 1
        if c["decision"] == "accepted":
            accepted[key][index[c["round"]]] += 1
            row["accepted"] += 1
    rows = sorted(table.values(), key=lambda r: (-r["proposed"], r["family"]))
    for row in rows:
        row["acceptance_rate"] = _ratio(row["accepted"], row["proposed"])
    return {
        "rounds": rounds,
        "families": series,
        "proposed": counts,
        "accepted": accepted,
        "table": rows,
    }


# --------------------------------------------------------------------------- reviews (Figs 3, 8, 9)


def _evolved_by_lineage(accepted: list[dict]) -> dict[int, list[int]]:
    out: dict[int, list[int]] = defaultdict(list)
    for c in accepted:
        if c.get("accepted_problem_id"):
            out[c["lineage_id"]].append(c["accepted_problem_id"])
    return out


def category_shift(*, lineages: list[dict], accepted: list[dict], reviews: dict) -> dict:
    """Algorithm-tag shares among reviewed seeds vs reviewed evolved problems (Figures 3, 9).

    A problem's tags are the union over its reviewers (canonical names); a tag's share is its
    mentions divided by all tag mentions in that group. Rows are ordered by the absolute shift.
    """
    seed_ids = {lin["seed_pk"] for lin in lineages}
    evolved_ids = {pid for ids in _evolved_by_lineage(accepted).values() for pid in ids}
    seed_mentions: Counter = Counter()
    evolved_mentions: Counter = Counter()
    seeds_reviewed = evolved_reviewed = 0
    for pid in seed_ids:
        review = reviews.get(pid)
        if review and review.get("tags"):
            seeds_reviewed += 1
            seed_mentions.update(set(review["tags"]))
    for pid in evolved_ids:
        review = reviews.get(pid)
        if review and review.get("tags"):
            evolved_reviewed += 1
            evolved_mentions.update(set(review["tags"]))
    seed_total = sum(seed_mentions.values())
    evolved_total = sum(evolved_mentions.values())
    rows = []
    for tag in set(seed_mentions) | set(evolved_mentions):
        seed_share = seed_mentions[tag] / seed_total if seed_total else 0.0
        evolved_share = evolved_mentions[tag] / evolved_total if evolved_total else 0.0
        rows.append(
            {
                "tag": tag,
                "seed_mentions": seed_mentions[tag],
                "evolved_mentions": evolved_mentions[tag],
                "seed_share": round(seed_share, 4),
                "evolved_share": round(evolved_share, 4),
                "shift": round(evolved_share - seed_share, 4),
            }
        )
    rows.sort(key=lambda r: (-abs(r["shift"]), r["tag"]))
    return {
        "seeds_reviewed": seeds_reviewed,
        "evolved_reviewed": evolved_reviewed,
        "seed_categories": len(seed_mentions),
        "evolved_categories": len(evolved_mentions),
        "rows": rows,
    }


def _rating_bin(value: float) -> float:
    return min(5.0, max(1.0, round(value * 2) / 2))


def _cf_bin(value: float) -> int:
    clamped = min(CF_MAX, max(CF_MIN, value))
    return int(clamped // CF_BIN * CF_BIN)


def _summary(values: list[float]) -> dict:
    if not values:
        return {"n": 0, "mean": None, "median": None}
    return {
        "n": len(values),
        "mean": round(statistics.fmean(values), 3),
        "median": round(statistics.median(values), 3),
    }


def rating_distributions(*, lineages: list[dict], accepted: list[dict], reviews: dict) -> dict:
    """Figure 8 (a-d): per-problem final ratings of seeds vs evolved problems for clarity,
    novelty, difficulty (per-problem means binned to halves) and the Codeforces estimate
    (bins of 200)."""
    seed_ids = {lin["seed_pk"] for lin in lineages}
    evolved_ids = {pid for ids in _evolved_by_lineage(accepted).values() for pid in ids}
    cf_bins = list(range(CF_MIN // CF_BIN * CF_BIN, CF_MAX + 1, CF_BIN))
    out = {}
    for dim in (*RATING_DIMENSIONS, "cf_rating"):
        bins = cf_bins if dim == "cf_rating" else RATING_BINS
        to_bin = _cf_bin if dim == "cf_rating" else _rating_bin
        panel = {"bins": bins}
        for name, ids in (("seed", seed_ids), ("evolved", evolved_ids)):
            values = [
                float(reviews[pid][dim])
                for pid in ids
                if pid in reviews and reviews[pid].get(dim) is not None
            ]
            counts = Counter(to_bin(v) for v in values)
            panel[name] = [counts.get(b, 0) for b in bins]
            panel[f"{name}_summary"] = _summary(values)
        out[dim] = panel
    return {"dimensions": out}


def new_categories(*, lineages: list[dict], accepted: list[dict], reviews: dict) -> dict:
    """Figure 8 (f): per lineage whose seed and at least one accepted problem carry reviewed
    tags, the categories of its evolved problems that its seed lacks."""
    evolved = _evolved_by_lineage(accepted)
    rows = []
    for lin in lineages:
        seed_review = reviews.get(lin["seed_pk"])
        evolved_tags: set[str] = set()
        reviewed_children = 0
        for pid in evolved.get(lin["id"], []):
            review = reviews.get(pid)
            if review and review.get("tags"):
                reviewed_children += 1
                evolved_tags |= set(review["tags"])
        if not (seed_review and seed_review.get("tags")) or not reviewed_children:
            continue
        seed_tags = set(seed_review["tags"])
        new = sorted(evolved_tags - seed_tags)
        rows.append(
            {
                "lineage": lin["id"],
                "seed_title": lin.get("seed_title") or "",
                "seed_tags": sorted(seed_tags),
                "evolved_tags": sorted(evolved_tags),
                "new_tags": new,
                "new": len(new),
            }
        )
    counts = [r["new"] for r in rows]
    histogram = Counter(counts)
    return {
        "lineages": len(rows),
        "mean_new": round(statistics.fmean(counts), 3) if counts else None,
        "share_with_new": _ratio(sum(1 for n in counts if n > 0), len(counts)),
        "histogram": [{"new": k, "lineages": histogram[k]} for k in sorted(histogram)],
        "rows": rows,
    }
