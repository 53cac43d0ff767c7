"""Reads for X-Coder pages. All of them serve admins and curators only (the views enforce the
role): the method, the features and the vote matrix are provenance that reviewers never see."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Count, Q, QuerySet

from evolution.measurement import selectors as measurement_selectors
from evolution.models import LLMCall

from .engine import difficulty, diversity
from .engine.features import CATEGORIES
from .models import (
    CandidateSolution,
    FeatureNode,
    SynthTask,
    TaskStatus,
    XcoderCampaign,
)
from .stages.testfiles import shown


def campaign_list() -> QuerySet[XcoderCampaign]:
    return (
        XcoderCampaign.objects.select_related("campaign", "generator_endpoint")
        .annotate(
            n_tasks=Count("tasks", distinct=True),
            n_accepted=Count("tasks", filter=Q(tasks__status=TaskStatus.ACCEPTED), distinct=True),
        )
        .order_by("-campaign__created_at")
    )


def xcoder_get(*, campaign_id: int) -> XcoderCampaign:
    return XcoderCampaign.objects.select_related(
        "campaign", "generator_endpoint", "problem_set"
    ).get(pk=campaign_id)


def count_rows(xc: XcoderCampaign) -> list[dict]:
    """Table 8 for this campaign: features per category extracted, after evolution, growth."""
    rows = []
    for category in CATEGORIES:
        before = (xc.counts_extracted or {}).get(category)
        after = (xc.counts_evolved or {}).get(category)
        if before is None and after is None:
            continue
        growth = f"×{after / before:.2f}" if before and after is not None else "–"
        rows.append({"category": category, "before": before, "after": after, "growth": growth})
    return rows


@dataclass
class TreeNode:
    node: FeatureNode
    children: list[TreeNode] = field(default_factory=list)

    @property
    def leaves(self) -> int:
        return 1 if not self.children else sum(c.leaves for c in self.children)


def feature_tree(xc: XcoderCampaign) -> list[TreeNode]:
    """The merged tree, one root per category, children sorted by name."""
    nodes = list(FeatureNode.objects.filter(xcoder=xc).order_by("depth", "path"))
    wrapped = {n.pk: TreeNode(n) for n in nodes}
    roots = []
    for node in nodes:
        if node.parent_id and node.parent_id in wrapped:
            wrapped[node.parent_id].children.append(wrapped[node.pk])
        elif node.depth == 0:
            roots.append(wrapped[node.pk])
    return roots


def task_list(xc: XcoderCampaign) -> QuerySet[SynthTask]:
    return SynthTask.objects.filter(xcoder=xc).select_related("problem").order_by("index")


def status_counts(xc: XcoderCampaign) -> dict[str, int]:
    counts = dict.fromkeys(TaskStatus.values, 0)
    for row in SynthTask.objects.filter(xcoder=xc).values("status").annotate(n=Count("id")):
        counts[row["status"]] = row["n"]
    return counts


def discard_reasons(xc: XcoderCampaign) -> list[dict]:
    return list(
        SynthTask.objects.filter(
            xcoder=xc, status__in=[TaskStatus.REJECTED, TaskStatus.DISCARDED, TaskStatus.ERROR]
        )
        .values("reason_code")
        .annotate(n=Count("id"))
        .order_by("-n", "reason_code")
    )


def task_get(*, campaign_id: int, index: int) -> SynthTask:
    return SynthTask.objects.select_related("xcoder__campaign", "problem").get(
        xcoder_id=campaign_id, index=index
    )


def solutions(task: SynthTask) -> QuerySet[CandidateSolution]:
    return task.solutions.select_related("endpoint").order_by("endpoint__name", "sample")


def vote_matrix(task: SynthTask) -> dict:
    """Rows: tests (source, category, weight, split, voted label, vote counts); columns: the
    candidates that voted; cells: agrees with the label / disagrees / no output (status)."""
    ver = task.verification or {}
    if not ver:
        return {}
    candidates = ver.get("candidates", [])
    rows = []
    for i, test in enumerate(task.tests):
        cells = []
        for j in range(len(candidates)):
            agree = ver["agree"][i][j]
            status = (
                ver.get("statuses", [[]] * len(task.tests))[i][j] if ver.get("statuses") else ""
            )
            if status and status != "OK":
                mark = status
            elif agree is None:
                mark = "·"
            else:
                mark = "✓" if agree else "✗"
            cells.append({"mark": mark, "agree": agree, "status": status})
        rows.append(
            {
                "index": i,
                "source": test.get("source", ""),
                "category": test.get("category", ""),
                "description": test.get("description", ""),
                "input": test["input"] if "input" in test else shown(test),
                "weight": ver["weights"][i],
                "split": ver["split"][i],
                "label": shown(ver["labels"][i]),
                "votes": ver["votes"][i],
                "cells": cells,
            }
        )
    columns = []
    for j, cand in enumerate(candidates):
        val = ver["val_accuracy"][j] if ver.get("val_accuracy") else None
        columns.append(
            {
                **cand,
                "index": j,
                "weighted": ver["weighted_scores"][j],
                "val": val,
                "chosen": ver.get("chosen") == j,
                "golden": ver.get("golden") == j,
            }
        )
    return {"rows": rows, "columns": columns, "ver": ver}


# Tasks whose statement passed the gates: what B.4 measures (generated tasks).
DIVERSITY_STATES = (
    TaskStatus.WRITTEN,
    TaskStatus.TESTED,
    TaskStatus.SOLVED,
    TaskStatus.ACCEPTED,
    TaskStatus.DISCARDED,
)
MAP_SIZE = 300


def diversity_map(xc: XcoderCampaign) -> dict | None:
    """B.4's diversity estimate over the campaign's gated statements (engine/diversity.py:
    TF-IDF, a 2-D SVD map, K-means, centroid distances), with the map in SVG coordinates;
    None with fewer than two such tasks."""
    tasks = list(
        SynthTask.objects.filter(xcoder=xc, status__in=DIVERSITY_STATES)
        .exclude(statement="")
        .order_by("index")
        .only("index", "title", "statement", "status")
    )
    result = diversity.estimate([t.statement for t in tasks])
    if result is None:
        return None
    pad = 12
    scale = MAP_SIZE - 2 * pad
    points = [
        {
            "index": t.index,
            "title": t.title or f"task {t.index}",
            "cluster": result.labels[i],
            "x": round(pad + x * scale, 1),
            "y": round(pad + (1 - y) * scale, 1),
        }
        for i, (t, (x, y)) in enumerate(zip(tasks, result.points, strict=True))
    ]
    return {
        "size": MAP_SIZE,
        "tasks": len(tasks),
        "points": points,
        "clusters": [{"n": i, "size": n} for i, n in enumerate(result.sizes)],
        "mean": result.mean_distance,
        "min": result.min_distance,
        "max": result.max_distance,
        "method": result.method,
    }


def difficulty_replayed(task: SynthTask) -> bool:
    """Whether the task's difficulty estimate came from a replayed judge answer."""
    call_id = (task.difficulty or {}).get("call_id")
    return bool(call_id) and LLMCall.objects.filter(pk=call_id, replayed=True).exists()


def difficulty_agreement(xc: XcoderCampaign) -> dict:
    """B.3 done differently, calibrated: each accepted task's judged rating beside its problem's
    measured pass@1 (the panel's newest measurement, where there is one), and Spearman's rank
    correlation between the two over the tasks that have both, with n. Agreement is a negative
    coefficient (a higher rating, a lower pass rate); None below 3 pairs or on constant data.
    An estimate whose judge call was answered by a replay cassette is ``replayed`` (and the
    whole section when any is)."""
    tasks = list(
        SynthTask.objects.filter(xcoder=xc, status=TaskStatus.ACCEPTED)
        .exclude(difficulty={})
        .select_related("problem")
        .order_by("index")
    )
    measured = measurement_selectors.problem_difficulty(
        [t.problem_id for t in tasks if t.problem_id]
    )
    replayed_calls = set(
        LLMCall.objects.filter(
            pk__in=[t.difficulty["call_id"] for t in tasks if t.difficulty.get("call_id")],
            replayed=True,
        ).values_list("pk", flat=True)
    )
    rows, ratings, passes = [], [], []
    for task in tasks:
        est = task.difficulty
        m = measured.get(task.problem_id)
        pass_at_1 = m.pass_rate if m is not None and m.attempts else None
        rows.append(
            {
                "task": task,
                "status": est.get("status"),
                "rating": est.get("rating"),
                "reason": est.get("reason", ""),
                "pass_at_1": pass_at_1,
                "attempts": m.attempts if m is not None else 0,
                "judge": est.get("judge", ""),
                "replayed": est.get("call_id") in replayed_calls,
            }
        )
        if est.get("status") == "ok" and pass_at_1 is not None:
            ratings.append(float(est["rating"]))
            passes.append(pass_at_1)
    rated = [r for r in rows if r["status"] == "ok"]
    return {
        "method": difficulty.METHOD_LABEL,
        "rows": rows,
        "rated": len(rated),
        "failed": len(rows) - len(rated),
        "replayed": any(r["replayed"] for r in rows),
        "n": len(ratings),
        "spearman": difficulty.spearman(ratings, passes),
        "bins": _bins([r["rating"] for r in rated]),
    }


def _bins(ratings: list[int]) -> list[dict]:
    """Table 10's layout for this campaign: tasks per rating bin (nearest bin)."""
    counts = dict.fromkeys(difficulty.TABLE10_BINS, 0)
    for rating in ratings:
        counts[difficulty.table10_bin(rating)] += 1
    total = len(ratings)
    return [{"bin": b, "tasks": n, "share": n / total if total else 0.0} for b, n in counts.items()]
