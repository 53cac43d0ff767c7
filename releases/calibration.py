"""Human against model difficulty: how the experts' difficulty ratings rank the problems of a
release (or a campaign) against how the evaluation panel ranks them.

Per problem: the experts' mean difficulty (1-5, after curator overrides) and Codeforces
estimate beside the panel's pass@1 (a release's latest re-measurement, else the measurement
its gate used; for a campaign, its candidates' panel attempts) and level. The figure is
Spearman's rank correlation between expert difficulty and model hardness (1 - pass@1):
Pearson's correlation of the two rank vectors, ties given their average rank. Its 95% interval
is the Fisher transform with the Fieller-Hartley-Pearson standard error for Spearman's rho:

    z = atanh(rho),  se = sqrt(1.06 / (n - 3)),  interval = tanh(z -/+ 1.96 se)   (n >= 4)

Disagreement of one problem: the gap between its two rank fractions (rank / n, so 0 to 1)
of the same two orderings; the largest gaps (at least ``MIN_GAP``) go to the adjudication
queue with the reason. "Model-only hardness" (experts rate it easy, the models fail) is the
signature of artificial difficulty: an ambiguous statement or a wrong test rather than a
hard problem.

An open-ended (scored) problem has no pass@1 (its verifier scores answers; none "passes"), so
it is left out of this pass-rate comparison and counted in ``Calibration.scored``: read as
pass@1 0 it would look like a problem the panel fails, and so like model-only hardness.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from django.db import transaction

from evolution.correlation import average_ranks, spearman_rho
from evolution.sandbox import scoring
from evolution.streams.kinds import kind_for
from review.models import Adjudication, GroupItem

from .reviews import problem_reviews

Z95 = 1.959963984540054
MIN_GAP = 0.5  # rank fractions apart: half the release between the two orderings
TOP_DISAGREEMENTS = 5
# Model-only hardness: experts' mean difficulty at most EASY on 1-5 while the panel's pass@1
# is at most FAILING.
EASY = 2.0
FAILING = 0.25
DIMENSION = "calibration"


@dataclass(frozen=True)
class Correlation:
    rho: float | None
    low: float | None
    high: float | None
    n: int

    def to_dict(self) -> dict:
        return {"rho": self.rho, "low": self.low, "high": self.high, "n": self.n}


def spearman(x: list[float], y: list[float]) -> Correlation:
    """Spearman's rho of x and y with its 95% interval (see the module docstring)."""
    n = len(x)
    if n != len(y):
        raise ValueError("x and y need the same length")
    if n < 2:
        return Correlation(None, None, None, n)
    rho = spearman_rho(x, y)
    if rho is None:
        return Correlation(None, None, None, n)
    if n < 4 or abs(rho) >= 1:
        return Correlation(rho, None, None, n)
    z, se = math.atanh(rho), math.sqrt(1.06 / (n - 3))
    return Correlation(rho, math.tanh(z - Z95 * se), math.tanh(z + Z95 * se), n)


@dataclass
class Row:
    problem_id: int
    public_id: str
    title: str
    expert_difficulty: float
    cf_rating: float | None
    pass_at_1: float
    level: int | None
    n_reviews: int
    gap: float = 0.0
    reason: str = ""
    model_only: bool = False

    def to_dict(self) -> dict:
        return self.__dict__.copy()


@dataclass
class Calibration:
    rows: list[Row] = field(default_factory=list)
    correlation: Correlation = field(default_factory=lambda: Correlation(None, None, None, 0))
    unrated: int = 0  # problems without expert difficulty or panel measurement
    scored: int = 0  # open-ended problems: no pass@1, left out (see the module docstring)

    @property
    def disagreements(self) -> list[Row]:
        ranked = sorted((r for r in self.rows if r.gap >= MIN_GAP), key=lambda r: -r.gap)
        return ranked[:TOP_DISAGREEMENTS]

    def plot(self) -> dict | None:
        """Scatter coordinates: expert difficulty (1-5) across, panel pass@1 (0-1) up."""
        if not self.rows:
            return None
        w, h, pad = 420, 260, 32
        flagged = {r.problem_id for r in self.disagreements}
        return {
            "width": w,
            "height": h,
            "left": pad,
            "right": w - pad,
            "top": pad,
            "bottom": h - pad,
            "points": [
                {
                    "x": round(pad + (r.expert_difficulty - 1) / 4 * (w - 2 * pad), 1),
                    "y": round(pad + (1 - r.pass_at_1) * (h - 2 * pad), 1),
                    "flagged": r.problem_id in flagged,
                    "label": f"{r.public_id}: experts {r.expert_difficulty:.1f}/5, "
                    f"pass@1 {r.pass_at_1:.2f}",
                }
                for r in self.rows
            ],
        }


def compute(measured: list[tuple]) -> Calibration:
    """``measured``: (problem, pass@1 or None, level or None) per problem; open-ended
    problems are counted, not compared."""
    out = Calibration()
    graded = []
    for row in measured:
        if scoring.is_scored(row[0].comparison):
            out.scored += 1
        else:
            graded.append(row)
    reviews = problem_reviews(problem_ids=[p.id for p, _, _ in graded])
    for problem, pass_at_1, level in graded:
        agg = reviews[problem.id]
        difficulty = agg.final.get("difficulty")
        if difficulty is None or pass_at_1 is None:
            out.unrated += 1
            continue
        out.rows.append(
            Row(
                problem_id=problem.id,
                public_id=problem.public_id,
                title=problem.title,
                expert_difficulty=float(difficulty),
                cf_rating=agg.cf_rating,
                pass_at_1=float(pass_at_1),
                level=level,
                n_reviews=agg.n_reviews,
            )
        )
    experts = [r.expert_difficulty for r in out.rows]
    models = [1 - r.pass_at_1 for r in out.rows]
    out.correlation = spearman(experts, models)
    n = len(out.rows)
    if n:
        expert_ranks, model_ranks = average_ranks(experts), average_ranks(models)
        for r, er, mr in zip(out.rows, expert_ranks, model_ranks, strict=True):
            r.gap = abs(er - mr) / n
            r.model_only = r.expert_difficulty <= EASY and r.pass_at_1 <= FAILING
            harder = "the panel finds" if mr > er else "the experts find"
            r.reason = (
                f"experts rate difficulty {r.expert_difficulty:.1f}/5"
                + (f" (Codeforces ~{r.cf_rating:.0f})" if r.cf_rating else "")
                + f", panel pass@1 {r.pass_at_1:.2f}: {harder} it much harder"
                + ("; model-only hardness" if r.model_only else "")
            )
    return out


def for_release(*, release) -> Calibration:
    from .models import DifficultyPoint

    latest = {}
    for point in DifficultyPoint.objects.filter(
        release=release, remeasurement__state="completed", mean_score__isnull=True
    ).order_by("measured_at", "id"):
        latest[point.public_id] = point.pass_at_1
    measured = []
    scored = 0
    for item in release.items.select_related("problem").order_by("position"):
        if scoring.is_scored(item.record.get("comparison")):  # as the release froze it
            scored += 1
            continue
        panel = (item.provenance or {}).get("panel") or {}
        pass_at_1 = latest.get(item.public_id)
        if pass_at_1 is None and panel.get("attempts"):
            pass_at_1 = panel["passes"] / panel["attempts"]
        prov = item.provenance or {}
        level = (prov.get("candidate") or prov.get("seed_calibration") or {}).get("level")
        measured.append((item.problem, pass_at_1, level))
    out = compute(measured)
    out.scored += scored
    return out


def for_campaign(*, campaign) -> Calibration:
    """The calibration of the problems ``campaign`` accepted, by the figure and level its own
    panel measured (as its kind answers: ``Kind.accepted_problems``, ``Kind.panel_facts``)."""
    kind = kind_for(campaign.kind)
    if kind.accepted_problems is None or kind.panel_facts is None:
        return compute([])
    problems = list(kind.accepted_problems([campaign.pk]).order_by("pk"))
    facts = kind.panel_facts([p.pk for p in problems], [campaign.pk])
    measured = [
        (p, (f.passes or 0) / f.attempts if f.attempts else None, f.level)
        for p in problems
        if (f := facts.get(p.pk)) is not None
    ]
    return compute(measured)


@transaction.atomic
def disagreements_route(*, calibration: Calibration) -> list[Adjudication]:
    """Open a "calibration" adjudication, with the reason, on the review item of each of the
    most-disagreeing problems (once: an open or settled one is left as it is)."""
    opened = []
    for row in calibration.disagreements:
        item = GroupItem.objects.filter(problem_id=row.problem_id).order_by("-id").first()
        if item is None:
            continue
        adjudication, created = Adjudication.objects.get_or_create(
            item=item, dimension=DIMENSION, defaults={"detail": row.reason[:300]}
        )
        if created:
            opened.append(adjudication)
    return opened
