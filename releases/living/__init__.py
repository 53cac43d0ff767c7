"""A living benchmark: re-measure the published release when the panel changes (or on a
schedule), record each problem's dated difficulty and flag the problems the panel saturated.

The panel's pass@1 on a problem is POOLED over the panel's samples (passes / attempts over
every model), as the gate combines the campaign panel's attempts. Its 95% interval is the
Wilson score interval for a binomial proportion:

    centre = (p + z²/2n) / (1 + z²/n),  half = z·sqrt(p(1-p)/n + z²/4n²) / (1 + z²/n),  z = 1.96

which stays inside [0, 1] and is defined at p = 0 and p = 1, where the normal interval is not.
A problem is saturated when that pass@1 exceeds the release gate's ``max_pass_at_1`` (0.75 by
default, the upper end of the band a problem had to lie in to enter the release); the models
that saturated it are the panel models whose own pass@1 on it exceeds the same bound.

A flag is withdrawn (kept, with the date and the reason) by a later re-measurement of the same
release that finds the pooled pass@1 at or below the bound AND no panel model above the bound
on its own: a weaker model joining the panel lowers the pooled rate without making the problem
any harder for the model that saturated it, so the pooled rate alone never withdraws a flag.
In practice a flag falls when the models that saturated it leave the panel.

An open-ended (scored) problem (``scoring.is_scored`` of its comparison) is never passed or
failed: a re-measurement records the panel's mean verifier score over its answers (each
answer's mean score over the tests, 0 to 1 relative to the baseline solution; an answer
without code scores 0) and each model's, never a pass@1. Having no pass rate to bound, it is
never flagged saturated, and the saturated share is over the pass/fail problems only.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import replace

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from evolution import jobs
from evolution.models.campaigns import CampaignState
from evolution.sources import PanelFacts
from evolution.streams.kinds import kind_for, registered

from .. import leaderboard
from ..gate import GateRules, RulesError
from ..models import (
    Benchmark,
    DifficultyPoint,
    LeaderboardRun,
    LeaderboardSample,
    PanelSeat,
    ReEvolution,
    Release,
    ReleaseState,
    Remeasurement,
    RemeasurementTrigger,
    RunState,
    SaturationFlag,
)
from . import plots

Z95 = 1.959963984540054


# A model flags a problem saturated on its own (pass@1 above the bound) only over at least this
# many samples of that problem: a panel seat's default.
SATURATION_MIN_MODEL_SAMPLES = 4


def wilson_interval(passes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """95% Wilson score interval of passes/n (see the module docstring); (0, 1) when n = 0."""
    if n <= 0:
        return 0.0, 1.0
    p = passes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def saturation_bound(release: Release) -> float:
    try:
        return GateRules.from_dict(release.gate_rules).max_pass_at_1
    except RulesError:
        return GateRules().max_pass_at_1


def latest_published(benchmark: Benchmark) -> Release | None:
    return (
        Release.objects.filter(benchmark=benchmark, state=ReleaseState.PUBLISHED)
        .order_by("-major", "-minor", "-patch")
        .first()
    )


# --- the panel --------------------------------------------------------------------------------


@transaction.atomic
def panel_seat_add(*, benchmark: Benchmark, endpoint, samples: int = 4, by=None) -> Remeasurement:
    """Put ``endpoint`` on the benchmark's panel and re-measure its published release with
    the new panel (enqueued when the transaction commits)."""
    if not 1 <= samples <= 100:
        raise ValidationError({"samples": "Samples per problem must be between 1 and 100."})
    if latest_published(benchmark) is None:
        raise ValidationError({"benchmark": f"{benchmark.name} has no published release yet."})
    try:
        with transaction.atomic():
            PanelSeat.objects.create(
                benchmark=benchmark, endpoint=endpoint, samples=samples, added_by=by
            )
    except IntegrityError:
        raise ValidationError({"endpoint": f"{endpoint.name} is already on the panel."})
    return remeasurement_start(
        benchmark=benchmark,
        trigger=RemeasurementTrigger.PANEL_CHANGE,
        reason=f"{endpoint.name} joined the panel",
        by=by,
    )


@transaction.atomic
def panel_seat_remove(*, benchmark: Benchmark, endpoint, by=None) -> Remeasurement | None:
    """Take ``endpoint`` off the benchmark's panel and re-measure its published release with
    the panel that remains (None when none remains: nothing to measure with). Flags only the
    departed model held up are withdrawn by that re-measurement."""
    deleted, _ = PanelSeat.objects.filter(benchmark=benchmark, endpoint=endpoint).delete()
    if not deleted:
        raise ValidationError({"endpoint": f"{endpoint.name} is not on the panel."})
    if not PanelSeat.objects.filter(benchmark=benchmark).exists():
        return None
    if latest_published(benchmark) is None:
        return None
    return remeasurement_start(
        benchmark=benchmark,
        trigger=RemeasurementTrigger.PANEL_CHANGE,
        reason=f"{endpoint.name} left the panel",
        by=by,
    )


def remeasurement_create(
    *, benchmark: Benchmark, trigger: str, reason: str = "", by=None
) -> Remeasurement:
    """A queued re-measurement of the latest published release by the current panel: one
    leaderboard run per panel model, reusing a completed run with the same sample count."""
    release = latest_published(benchmark)
    if release is None:
        raise ValidationError({"benchmark": f"{benchmark.name} has no published release yet."})
    seats = list(PanelSeat.objects.filter(benchmark=benchmark).select_related("endpoint"))
    if not seats:
        raise ValidationError({"benchmark": f"{benchmark.name} has no evaluation panel yet."})
    remeasurement = Remeasurement.objects.create(
        benchmark=benchmark, release=release, trigger=trigger, reason=reason[:300], created_by=by
    )
    runs = []
    for seat in seats:
        run = (
            LeaderboardRun.objects.filter(
                release=release,
                endpoint=seat.endpoint,
                samples_per_problem=seat.samples,
                state=RunState.COMPLETED,
            )
            .order_by("-finished_at")
            .first()
        )
        if run is None:
            run = leaderboard.run_create(
                release=release, endpoint=seat.endpoint, samples=seat.samples, by=by
            )
        runs.append(run)
    remeasurement.runs.set(runs)
    return remeasurement


REMEASUREMENT_TASK = "releases.tasks.remeasurement_run"


def _publish(remeasurement_id: int) -> None:
    """Send the re-measurement's task (by name: releases.tasks imports this module) and note
    when. The publish is retried by Celery's publish retry policy; if it still fails, the row
    stays queued and the job supervisor (``evolution.jobs``) sends it again."""
    from celery import current_app

    current_app.send_task(REMEASUREMENT_TASK, (remeasurement_id,))
    Remeasurement.objects.filter(pk=remeasurement_id).update(sent_at=timezone.now())


def remeasurement_start(**kwargs) -> Remeasurement:
    remeasurement = remeasurement_create(**kwargs)
    transaction.on_commit(lambda: _publish(remeasurement.pk))
    return remeasurement


def remeasure_scheduled() -> list[int]:
    """Beat's entry: a re-measurement of every benchmark that has a panel and a published
    release. Returns the ids started."""
    started = []
    for benchmark in Benchmark.objects.filter(panel_seats__isnull=False).distinct():
        if latest_published(benchmark) is None:
            continue
        with transaction.atomic():
            started.append(
                remeasurement_start(
                    benchmark=benchmark,
                    trigger=RemeasurementTrigger.SCHEDULE,
                    reason="scheduled re-measurement",
                ).pk
            )
    return started


# --- executing -------------------------------------------------------------------------------


def remeasurement_execute(*, remeasurement_id: int) -> Remeasurement:
    """Run every unfinished leaderboard run of the re-measurement, then record the points and
    flags. Safe to call again: finished runs are skipped and recording is idempotent; a
    re-measurement a live execution holds is returned as is (``evolution.jobs``)."""
    token = jobs.claim(Remeasurement, remeasurement_id)
    if token is None:
        return Remeasurement.objects.select_related("release").get(pk=remeasurement_id)
    with jobs.beating(Remeasurement, remeasurement_id, token):
        _execute(remeasurement_id, token)
    return Remeasurement.objects.get(pk=remeasurement_id)


def _execute(remeasurement_id: int, token: str) -> None:
    remeasurement = Remeasurement.objects.select_related("release").get(pk=remeasurement_id)
    runs = list(remeasurement.runs.all())
    failed = []
    for run in runs:
        if run.state != RunState.COMPLETED:
            run = leaderboard.run_execute(run_id=run.pk)
        if run.state != RunState.COMPLETED:
            failed.append(f"{run.label}: {run.error or run.state}")
    measured = [r for r in remeasurement.runs.all() if r.state == RunState.COMPLETED]
    if not measured:
        jobs.finish(
            Remeasurement, remeasurement_id, token, state="failed", error="; ".join(failed)[:2000]
        )
        return
    # One model that could not be measured does not discard the others' results: what was
    # measured is recorded, and what was not is named.
    summary = _record(remeasurement, measured, whole_panel=not failed)
    if failed:
        summary["not_measured"] = failed
    jobs.finish(
        Remeasurement,
        remeasurement_id,
        token,
        state="completed",
        summary=summary,
        error=("not measured: " + "; ".join(failed))[:2000] if failed else "",
        finished_at=timezone.now(),
    )


def _scored_answers(runs: list[LeaderboardRun], scored: set[str]) -> dict[str, list[dict]]:
    """Per open-ended problem, each model's answers (``n``) and their mean verifier score,
    from the runs' judged samples (a run summarised before scored problems were set apart
    counts them as failed passes, so its summary is not read for them)."""
    out: dict[str, list[dict]] = {}
    if not scored:
        return out
    for run in runs:
        values: dict[str, list[float]] = defaultdict(list)
        for public_id, verdict, details in (
            LeaderboardSample.objects.filter(run=run, item__public_id__in=scored)
            .exclude(verdict__in=("", leaderboard.INFRA_ERROR))
            .values_list("item__public_id", "verdict", "details")
        ):
            values[public_id].append(leaderboard.answer_score(verdict, details))
        for public_id, scores in values.items():
            out.setdefault(public_id, []).append(
                {"label": run.label, "n": len(scores), "score": sum(scores) / len(scores)}
            )
    return out


@transaction.atomic
def _record(
    remeasurement: Remeasurement, runs: list[LeaderboardRun], *, whole_panel: bool = True
) -> dict:
    """Difficulty points and saturation flags from the completed ``runs``. Without the whole
    panel (a model could not be measured) a flag is raised but never withdrawn: the missing
    model may be the one above the bound. An open-ended (scored) problem gets its mean score
    and no flag (see the module docstring)."""
    release = remeasurement.release
    bound = saturation_bound(release)
    now = timezone.now()
    scored = leaderboard.scored_public_ids(release)
    scored_rows = _scored_answers(runs, scored)
    per_model: dict[str, list[dict]] = {}
    for run in runs:
        for row in run.summary.get("per_item", []):
            if row["public_id"] in scored or row.get("scored"):
                continue
            per_model.setdefault(row["public_id"], []).append(
                {
                    "label": run.label,
                    "n": row["n"],
                    "c": row["c"],
                    "pass_at_1": row["c"] / row["n"] if row["n"] else 0.0,
                }
            )
    DifficultyPoint.objects.filter(remeasurement=remeasurement).delete()
    active = {f.public_id: f for f in SaturationFlag.objects.active().filter(release=release)}
    newly, withdrawn = [], []
    for item in release.items.order_by("position"):
        if item.public_id in scored:
            rows = scored_rows.get(item.public_id, [])
            answers = sum(r["n"] for r in rows)
            if answers:  # no answer, no evidence: no point
                DifficultyPoint.objects.create(
                    remeasurement=remeasurement,
                    release=release,
                    public_id=item.public_id,
                    measured_at=now,
                    mean_score=sum(r["score"] * r["n"] for r in rows) / answers,
                    samples=answers,
                    models_detail=rows,
                )
            continue  # no pass rate, so no saturation flag
        rows = per_model.get(item.public_id, [])
        n = sum(r["n"] for r in rows)
        c = sum(r["c"] for r in rows)
        p = c / n if n else 0.0
        low, high = wilson_interval(c, n)
        DifficultyPoint.objects.create(
            remeasurement=remeasurement,
            release=release,
            public_id=item.public_id,
            measured_at=now,
            pass_at_1=p,
            low=low,
            high=high,
            samples=n,
            passes=c,
            models_detail=rows,
        )
        if not n:
            continue  # no evidence either way: a flag stays as it is
        above = [r["label"] for r in rows if r["pass_at_1"] > bound]
        # Per model as well as pooled: a strong model that solves a problem every time has
        # saturated it, however the weaker models pull the pooled pass@1 down; it must have
        # answered the seat's default number of samples, so one lucky answer flags nothing.
        solved_by = [
            r["label"]
            for r in rows
            if r["pass_at_1"] > bound and r["n"] >= SATURATION_MIN_MODEL_SAMPLES
        ]
        flag = active.get(item.public_id)
        if (p > bound or solved_by) and flag is None:
            active[item.public_id] = SaturationFlag.objects.create(
                release=release,
                public_id=item.public_id,
                flagged_at=now,
                pass_at_1=p,
                bound=bound,
                saturating_models=above,
                remeasurement=remeasurement,
            )
            newly.append(item.public_id)
        elif flag is not None and whole_panel and p <= bound and not above:
            flag.withdrawn_at = now
            flag.withdrawn_pass_at_1 = p
            flag.withdrawn_by = remeasurement
            flag.withdrawn_reason = _withdraw_reason(flag, p=p, bound=bound, rows=rows, at=now)
            flag.save(
                update_fields=[
                    "withdrawn_at",
                    "withdrawn_pass_at_1",
                    "withdrawn_by",
                    "withdrawn_reason",
                ]
            )
            del active[item.public_id]
            withdrawn.append(item.public_id)
    problems = release.items.count()
    return {
        "bound": bound,
        "problems": problems,
        # The saturated share is over the pass/fail problems: a scored one is never flagged.
        "pass_fail_problems": problems - len(scored),
        "scored_problems": len(scored),
        "saturated": len(active),
        "newly_saturated": newly,
        "withdrawn": withdrawn,
        "models": [run.label for run in runs],
    }


def _withdraw_reason(flag: SaturationFlag, *, p: float, bound: float, rows, at) -> str:
    present = {r["label"] for r in rows}
    gone = [m for m in flag.saturating_models if m not in present]
    stayed = [m for m in flag.saturating_models if m in present]
    why = []
    if gone:
        why.append(f"{', '.join(gone)} left the panel")
    if stayed:
        why.append(f"{', '.join(stayed)} now at or below the bound")
    text = (
        f"re-measured on {at:%Y-%m-%d}: pass@1 {p:.2f} over the panel <= {bound:g} "
        f"and no panel model above it"
    )
    return (text + (f" ({'; '.join(why)})" if why else ""))[:300]


# --- reading ---------------------------------------------------------------------------------


def saturation_share(*, release: Release) -> dict:
    """How much of ``release`` the panel has saturated: its active flags (a withdrawn flag no
    longer counts; see the module docstring) out of its ``problems`` that can saturate, the
    pass/fail ones; ``scored`` open-ended problems are never flagged, ``items`` counts all."""
    items = release.item_count or release.items.count()
    scored = len(leaderboard.scored_public_ids(release))
    problems = items - scored
    flagged = SaturationFlag.objects.active().filter(release=release).count()
    return {
        "saturated": flagged,
        "problems": problems,
        "scored": scored,
        "items": items,
        "share": flagged / problems if problems else 0.0,
        "bound": saturation_bound(release),
        "measured": Remeasurement.objects.filter(release=release, state="completed").exists(),
    }


def difficulty_history(*, release: Release, public_id: str) -> list[DifficultyPoint]:
    return list(
        DifficultyPoint.objects.filter(
            release=release, public_id=public_id, remeasurement__state="completed"
        ).order_by("measured_at", "id")
    )


# --- small plots (inline SVG: the pages' figures without JavaScript; plots.py draws
# the same data with plotly.js) -----------------------------------------------------------------

PLOT_W, PLOT_H, PLOT_PAD = 320, 120, 18


def point_text(point: DifficultyPoint) -> str:
    """A point's measurement as the pages say it: "pass@1 0.88 [0.53, 0.98] (7/8)", or for an
    open-ended problem "mean score 0.81 (8 answers)" (it has no pass@1)."""
    if point.scored:
        return f"mean score {point.mean_score:.2f} ({point.samples} answers)"
    return (
        f"pass@1 {point.pass_at_1:.2f} [{point.low:.2f}, {point.high:.2f}] "
        f"({point.passes}/{point.samples})"
    )


def history_plot(*, points: list[DifficultyPoint], bound: float) -> dict | None:
    """Coordinates of a dated pass@1 plot: one marker per re-measurement with its interval as
    a vertical bar, a line through the markers and a dashed line at the saturation bound. An
    open-ended problem's plot is of its mean score: no interval, no bound (``scored``)."""
    if not points:
        return None
    scored = all(p.scored for p in points)
    inner_w, inner_h = PLOT_W - 2 * PLOT_PAD, PLOT_H - 2 * PLOT_PAD

    def y(value: float) -> float:
        return round(PLOT_PAD + (1 - value) * inner_h, 1)

    step = inner_w / (len(points) - 1) if len(points) > 1 else 0
    marks = []
    for index, p in enumerate(points):
        x = round(PLOT_PAD + (index * step if len(points) > 1 else inner_w / 2), 1)
        value = p.mean_score if p.scored else p.pass_at_1
        marks.append(
            {
                "x": x,
                "y": y(value),
                "y_low": y(value if p.scored else p.low),
                "y_high": y(value if p.scored else p.high),
                "label": f"{p.measured_at:%Y-%m-%d %H:%M}: {point_text(p)}",
                "saturated": not p.scored and p.pass_at_1 > bound,
            }
        )
    return {
        "width": PLOT_W,
        "height": PLOT_H,
        "left": PLOT_PAD,
        "right": PLOT_W - PLOT_PAD,
        "scored": scored,
        "bound_y": None if scored else y(bound),
        "bound": bound,
        "line": " ".join(f"{m['x']},{m['y']}" for m in marks),
        "marks": marks,
        "latest": point_text(points[-1]),
        "first": points[0].measured_at,
        "last": points[-1].measured_at,
    }


def item_context(*, release: Release, public_id: str) -> dict:
    """What the public problem page shows of the problem's life since release."""
    bound = saturation_bound(release)
    points = difficulty_history(release=release, public_id=public_id)
    return {
        "history_plot": history_plot(points=points, bound=bound),
        "history_figure": plots.history_figure(points=points, bound=bound),
        "saturation_flag": SaturationFlag.objects.active()
        .filter(release=release, public_id=public_id)
        .first(),
        "withdrawn_flags": list(
            SaturationFlag.objects.withdrawn()
            .filter(release=release, public_id=public_id)
            .order_by("flagged_at", "id")
        ),
    }


# --- re-evolution ----------------------------------------------------------------------------

# Campaign states whose re-evolution gave nothing back.
GIVEN_BACK_STATES = (CampaignState.FAILED, CampaignState.CANCELLED)


def _retire_reason(flag: SaturationFlag) -> str:
    models_text = ", ".join(flag.saturating_models) or "the panel"
    if flag.pass_at_1 > flag.bound:
        return (
            f"saturated on {flag.flagged_at:%Y-%m-%d}: pass@1 {flag.pass_at_1:.2f} over the "
            f"panel > {flag.bound:g} (solved by {models_text})"
        )
    return (
        f"saturated on {flag.flagged_at:%Y-%m-%d}: solved by {models_text} above "
        f"{flag.bound:g} (pass@1 {flag.pass_at_1:.2f} over the panel)"
    )


def reevolution_source(*, release: Release):
    """The campaign ``release`` came from whose kind re-evolves saturated problems (its first,
    with an evolver; ``Kind.reevolver``): a re-evolution takes its kind, evolver and algorithm
    settings. None when there is none."""
    return (
        release.campaigns.filter(kind__in=[k.name for k in registered() if k.reevolver])
        .exclude(evolver__isnull=True)
        .order_by("id")
        .first()
    )


@transaction.atomic
def reevolution_create(
    *,
    release: Release,
    evolver=None,
    settings: dict | None = None,
    launch: bool = False,
    by=None,
) -> ReEvolution:
    """One action: the saturated problems of ``release`` become the seeds of a new campaign
    (of the kind of the campaign the release came from, else BenchEvolver's) whose target
    panel is the benchmark's current evaluation panel. The evolver is
    ``evolver`` or the one of the campaign the release came from; ``settings`` are the
    campaign's algorithm settings (validated; when None, those of the BenchEvolver campaign the
    release came from, else the defaults). Left in draft
    unless ``launch``, so the curator can adjust settings first."""
    from evolution.models import Panel, PanelMember, ProblemSet
    from evolution.models.campaigns import CampaignKind
    from evolution.services import campaigns as campaign_services

    flags = list(SaturationFlag.objects.active().filter(release=release).order_by("public_id"))
    # A problem is re-evolved once: a second action takes only the newly saturated ones. A
    # re-evolution whose campaign failed or was cancelled gave nothing back: its problems can be
    # re-evolved again.
    taken_ids = {
        pid
        for retired in ReEvolution.objects.filter(release=release)
        .exclude(campaign__state__in=GIVEN_BACK_STATES)
        .values_list("retired", flat=True)
        for pid in retired
    }
    flags = [f for f in flags if f.public_id not in taken_ids]
    if not flags:
        raise ValidationError(
            {"release": f"v{release.version} has no saturated problem left to re-evolve."}
        )
    seats = list(PanelSeat.objects.filter(benchmark=release.benchmark).select_related("endpoint"))
    if not seats:
        raise ValidationError({"release": "The benchmark has no evaluation panel."})
    source = reevolution_source(release=release)
    if evolver is None:
        evolver = source.evolver if source else None
    if settings is None and source is not None:
        # The campaign the problems came from ran with these: re-evolving them under other
        # settings (the defaults) would change the method midway.
        settings = dict(source.settings)
    if evolver is None:
        raise ValidationError({"evolver": "Choose the model that evolves the seeds."})
    items = {
        i.public_id: i for i in release.items.filter(public_id__in=[f.public_id for f in flags])
    }
    stamp = timezone.now().strftime("%Y-%m-%d %H:%M:%S")
    # Names are unique: a second re-evolution within the same second is numbered.
    earlier = ReEvolution.objects.filter(release=release).count()
    if earlier:
        stamp += f" #{earlier + 1}"
    label = f"{release.benchmark.name} v{release.version} saturated, {stamp}"
    seeds = ProblemSet.objects.create(
        name=label[:200],
        description=f"Problems of {release} the evaluation panel saturated.",
    )
    seeds.problems.add(*[items[f.public_id].problem for f in flags])
    panel = Panel.objects.create(
        name=f"{release.benchmark.name} panel, {stamp}"[:100],
        description="The benchmark's evaluation panel when its saturated problems were re-evolved.",
    )
    PanelMember.objects.bulk_create(
        PanelMember(panel=panel, endpoint=s.endpoint, attempts=s.samples) for s in seats
    )
    reevolver = kind_for(source.kind if source else CampaignKind.BENCHEVOLVER).reevolver
    campaign = reevolver.create(
        name=f"Re-evolve {label}"[:200],
        seed_set=seeds,
        evolver=evolver,
        panel=panel,
        settings=settings,
        created_by=by,
    )
    reevolution = ReEvolution.objects.create(
        release=release,
        campaign=campaign,
        retired={f.public_id: _retire_reason(f) for f in flags},
        created_by=by,
    )
    if launch:
        campaign_services.campaign_launch(campaign_id=campaign.pk)
    return reevolution


# A curator reviews a re-evolution drafted from the living page, adjusts it and launches it
# there (``releases.living.views``): which saturated problems go in, the campaign's name and
# budget. The evolver, the target panel and the algorithm settings stay those inherited, so
# the problems are re-evolved by the method that evolved them. Launching any other campaign
# stays an admin's action (``evolution.views.campaign_control``).


def reevolution_draft(*, reevolution: ReEvolution) -> dict:
    """What the living page shows a curator of a re-evolution: its problems with the reason
    each is retired, the evolver, the target panel, where its settings come from (and those
    that differ from the defaults) and its budget."""
    campaign = reevolution.campaign
    source = reevolution_source(release=reevolution.release)
    campaign_settings_table = kind_for(campaign.kind).reevolver.settings_table
    titles = dict(
        reevolution.release.items.filter(public_id__in=list(reevolution.retired)).values_list(
            "public_id", "title"
        )
    )
    table = campaign_settings_table(campaign)
    changed = [row for row in table if row.get("changed")]
    # Compared as validated (a source saved before a setting existed has its default).
    values = [(row["name"], row["value"]) for row in table]
    return {
        "problems": [
            {"public_id": pid, "title": titles.get(pid, ""), "why": why}
            for pid, why in sorted(reevolution.retired.items())
        ],
        "evolver": campaign.evolver,
        "panel": list(campaign.panel.members.select_related("endpoint").order_by("id"))
        if campaign.panel_id
        else [],
        "source": source,
        "inherited": source is not None
        and values == [(row["name"], row["value"]) for row in campaign_settings_table(source)],
        "changed_settings": [f"{row['name']}={row['value']}" for row in changed],
        "editable": campaign.state == CampaignState.DRAFT,
    }


def _draft_campaign(reevolution: ReEvolution):
    """The re-evolution's campaign, locked, while it is still a draft (else ValidationError)."""
    from evolution.models import Campaign

    campaign = Campaign.objects.select_for_update().get(pk=reevolution.campaign_id)
    if campaign.state != CampaignState.DRAFT:
        raise ValidationError(
            {"campaign": f"Campaign {campaign.name!r} is {campaign.state}, no longer a draft."}
        )
    return campaign


@transaction.atomic
def reevolution_update(
    *,
    reevolution: ReEvolution,
    keep: list[str],
    name: str | None = None,
    budget_max_calls: int | None = None,
    budget_max_tokens: int | None = None,
    budget_max_cost=None,
) -> ReEvolution:
    """A curator's edit of a drafted re-evolution: the saturated problems it keeps (a subset
    of those it took: a problem left out is given back, to be re-evolved by a later action),
    its campaign's name and budget (None: no limit). ValidationError naming the field, and
    nothing changed, on a bad value or a campaign that is no longer a draft."""
    from evolution.models import Campaign
    from evolution.services import campaigns as campaign_services

    reevolution = ReEvolution.objects.select_for_update().get(pk=reevolution.pk)
    campaign = _draft_campaign(reevolution)
    keep_ids = set(keep)
    unknown = sorted(keep_ids - set(reevolution.retired))
    if unknown:
        raise ValidationError(
            {"retired": f"{', '.join(unknown)} is not among this re-evolution's problems."}
        )
    if not keep_ids:
        raise ValidationError(
            {"retired": "Keep at least one problem, or discard the draft to give them all back."}
        )
    name = campaign.name if name is None else name.strip()
    if not name:
        raise ValidationError({"name": "A campaign needs a name."})
    longest = Campaign._meta.get_field("name").max_length
    if len(name) > longest:
        raise ValidationError({"name": f"A campaign name has at most {longest} characters."})
    campaign_services.campaign_bounds_check(
        budget_max_calls=budget_max_calls,
        budget_max_tokens=budget_max_tokens,
        budget_max_cost=budget_max_cost,
    )
    dropped = set(reevolution.retired) - keep_ids
    if dropped:
        items = reevolution.release.items.filter(public_id__in=dropped)
        problem_ids = list(items.values_list("problem_id", flat=True))
        campaign.seed_set.problems.remove(*problem_ids)
        kind_for(campaign.kind).reevolver.seeds_drop(campaign, problem_ids)
        reevolution.retired = {
            pid: why for pid, why in reevolution.retired.items() if pid in keep_ids
        }
        reevolution.save(update_fields=["retired"])
    campaign.name = name
    campaign.budget_max_calls = budget_max_calls
    campaign.budget_max_tokens = budget_max_tokens
    campaign.budget_max_cost = budget_max_cost
    campaign.save(
        update_fields=[
            "name",
            "budget_max_calls",
            "budget_max_tokens",
            "budget_max_cost",
            "updated_at",
        ]
    )
    return reevolution


@transaction.atomic
def reevolution_launch(*, reevolution: ReEvolution):
    """Launch a drafted re-evolution's campaign (a curator may: it is this draft, not any
    campaign). ValidationError when it is no longer a draft."""
    from evolution.services import campaigns as campaign_services

    campaign = _draft_campaign(reevolution)
    return campaign_services.campaign_launch(campaign_id=campaign.pk)


@transaction.atomic
def reevolution_discard(*, reevolution: ReEvolution, by=None):
    """Cancel a drafted re-evolution before it ran: its problems are given back (a later
    action can re-evolve them). ValidationError when it is no longer a draft."""
    from evolution.services import campaigns as campaign_services

    campaign = _draft_campaign(reevolution)
    who = f" by {by.get_username()}" if by is not None else ""
    return campaign_services.campaign_cancel(
        campaign_id=campaign.pk, reason=f"draft discarded{who} before launch"
    )


def carry_reevolutions(*, draft: Release) -> None:
    """A new version drafted after a release takes that release's re-evolution campaigns as
    sources, so their accepted problems reach the gate (hook in ``services.release_next``)."""
    if draft.previous_id is None:
        return
    campaigns = [r.campaign for r in ReEvolution.objects.filter(release=draft.previous_id)]
    if campaigns:
        draft.campaigns.add(*campaigns)


def remeasured_panel(*, release: Release, problems: list, panel: dict) -> None:
    """The gate's panel facts for problems of earlier versions, replaced by their latest
    re-measurement by the living panel (hook in ``services.gate_run_create``): a problem the
    panel has since saturated fails the pass@1 band and is retired by the gate, not kept on
    its stale campaign measurement. An open-ended problem's points hold a mean score, no
    passes: the gate reads no pass@1 of it."""
    by_public = {p.public_id: p.id for p in problems}
    points = (
        DifficultyPoint.objects.filter(
            release__benchmark=release.benchmark,
            public_id__in=list(by_public),
            remeasurement__state="completed",
            mean_score__isnull=True,
        )
        .exclude(release=release)
        .order_by("measured_at", "id")
    )
    for point in points:  # later points overwrite earlier ones
        # The figure is the living panel's; where it came from before (the campaign, the
        # candidate, the validation ledger) stays what the release keeps.
        pid = by_public[point.public_id]
        panel[pid] = replace(
            panel.get(pid) or PanelFacts(passes=None, attempts=None),
            passes=point.passes,
            attempts=point.samples,
            endpoints=frozenset(),
            level=None,
            measured_at=point.measured_at,
            remeasured_at=point.measured_at.isoformat(),
        )


def changelog_reasons(*, release: Release, changelog) -> dict:
    """Why items left or joined: {"retired": {public_id: reason}, "replacing": {public_id:
    "re-evolved from <seed public id> (<campaign>)"}}. Every item the previous version had
    and this one has not gets its reason (``removal_reason``); a problem joins with a reason
    when a re-evolution of the previous version's saturated problems made it."""
    from evolution.models import Problem
    from evolution.selectors import campaign_problems

    if changelog.previous is None:
        return {"retired": {}, "replacing": {}}
    reevolutions = list(
        ReEvolution.objects.filter(release=changelog.previous)
        .select_related("campaign")
        .order_by("created_at", "id")
    )
    added = {i.problem_id: i.public_id for i in changelog.added if hasattr(i, "problem_id")}
    # Each new problem a re-evolution campaign made grew from one of its seeds (the saturated
    # problems): followed up its parents, the first seed of the campaign is the one it replaces.
    made = []
    for r in reevolutions:
        seeds = set(r.campaign.seed_set.problems.values_list("pk", flat=True))
        for pid in (
            campaign_problems([r.campaign]).filter(pk__in=list(added)).values_list("pk", flat=True)
        ):
            made.append((pid, seeds, r.campaign))
    parent_of: dict[int, int | None] = {}
    frontier = {pid for pid, _, _ in made}
    while frontier:
        rows = list(Problem.objects.filter(pk__in=frontier).values_list("pk", "parent_id"))
        parent_of.update(rows)
        frontier = {parent for _, parent in rows if parent and parent not in parent_of}
    public = dict(Problem.objects.filter(pk__in=list(parent_of)).values_list("pk", "public_id"))
    replacing, into = {}, {}
    for pid, seeds, campaign in sorted(made, key=lambda m: added[m[0]]):
        node = parent_of.get(pid)
        while node is not None and node not in seeds:
            node = parent_of.get(node)
        if node is None:
            continue
        new, seed = added[pid], public[node]
        replacing[new] = f"re-evolved from saturated {seed} ({campaign.name})"
        into.setdefault(seed, []).append(new)
    facts = _removal_facts(release=release, changelog=changelog)
    # The re-evolution that took a problem: a later one, else one that gave it back.
    by_problem = {}
    for r in sorted(reevolutions, key=lambda r: r.campaign.state not in GIVEN_BACK_STATES):
        for pid in r.retired:
            by_problem[pid] = r
    retired = {
        item.public_id: removal_reason(
            item,
            reevolution=by_problem.get(item.public_id),
            replaced_by=into.get(item.public_id, []),
            **facts,
        )
        for item in changelog.removed
    }
    return {"retired": retired, "replacing": replacing}


def _removal_facts(*, release: Release, changelog) -> dict:
    """What decided this version's selection: its latest gate run (the one it was frozen
    on), its curators' latest decisions, the saturation flags of the previous version active
    when that gate ran, the re-measured points it read and the errata the removals fixed."""
    from ..models import CurationDecision

    gate = release.gate_runs.order_by("-created_at", "-id").first()
    at = gate.created_at if gate is not None else timezone.now()
    decisions = {}
    for d in CurationDecision.objects.filter(release=release).order_by("created_at", "id"):
        decisions[d.problem_id] = d  # the latest stands
    removed = [i.public_id for i in changelog.removed]
    flags = {}
    for flag in SaturationFlag.objects.filter(
        release=changelog.previous, public_id__in=removed, flagged_at__lte=at
    ).order_by("flagged_at", "id"):
        if flag.withdrawn_at is None or flag.withdrawn_at > at:
            flags[flag.public_id] = flag
    points = {}
    for point in (
        DifficultyPoint.objects.filter(
            release__benchmark=release.benchmark,
            public_id__in=removed,
            remeasurement__state="completed",
            measured_at__lte=at,
        )
        .exclude(release=release)
        .order_by("measured_at", "id")
    ):
        points[point.public_id] = point  # the latest: the one the gate read
    errata = {}
    for erratum in changelog.fixed_errata:
        if erratum.resolution == "removed":
            errata.setdefault(erratum.item_public_id, []).append(erratum)
    return {
        "gate": gate,
        "entries": {e["public_id"]: e for e in (gate.report if gate is not None else [])},
        "decisions": decisions,
        "flags": flags,
        "points": points,
        "errata": errata,
    }


def removal_reason(
    item,
    *,
    reevolution=None,
    replaced_by=(),
    gate=None,
    entries=None,
    decisions=None,
    flags=None,
    points=None,
    errata=None,
) -> str:
    """Why the previous version's ``item`` is not in this one, in the order that decided it:
    a curator excluded it (their justification); it was saturated and re-evolved (the retire
    reason and what replaced it, or the re-evolution's state); it was saturated and not
    re-evolved (the flag: when, pass@1, by which model); the gate refused it (each failed
    rule, a re-measured difficulty named as such); it was no longer a candidate. An erratum
    the removal fixed is added."""
    pid = item.public_id
    entry = (entries or {}).get(pid)
    decision = (decisions or {}).get(getattr(item, "problem_id", None))
    flag = (flags or {}).get(pid)
    if decision is not None and not decision.include:
        why = f"excluded by a curator: {decision.justification}"
    elif reevolution is not None:
        why = reevolution.retired[pid] + _reevolution_outcome(reevolution, replaced_by)
    elif flag is not None:
        why = f"{_retire_reason(flag)}; not re-evolved"
    elif entry is not None and not entry["passed"]:
        failed = [r for r in entry["rules"] if not r["passed"]]
        point = (points or {}).get(pid)
        why = "did not pass the gate: " + "; ".join(
            _gate_failure(rule, entry=entry, rules=gate.rules, point=point) for rule in failed
        )
    elif not hasattr(item, "problem_id"):
        why = (
            "a reasoning question this version does not carry over (its reference answer no "
            "longer counts as correct, or a curator took it out)"
        )
    elif entry is None:
        why = "no longer a candidate: this version's sources do not hold it"
    else:
        why = "left out of this version"
    for erratum in (errata or {}).get(pid, []):
        why += f"; fixes the erratum ({erratum.get_kind_display()}): {erratum.description}"
    return why


def _reevolution_outcome(reevolution: ReEvolution, replaced_by) -> str:
    campaign = reevolution.campaign
    if replaced_by:
        return f"; re-evolved into {', '.join(replaced_by)}"
    if campaign.state == CampaignState.COMPLETED:
        return f"; its re-evolution ({campaign.name}) accepted no replacement"
    if campaign.state in GIVEN_BACK_STATES:
        return f"; its re-evolution ({campaign.name}) {campaign.state}, nothing replaces it"
    return f"; its re-evolution ({campaign.name}) is {campaign.state}: nothing replaces it yet"


def _gate_failure(rule: dict, *, entry: dict, rules: dict, point) -> str:
    """A failed gate rule as the changelog says it: the difficulty rule on a re-measured
    pass@1 (the gate read the living panel's figure, ``remeasured_panel``) names the
    re-measurement instead of calling it the selection-time figure."""
    facts = entry.get("facts") or {}
    remeasured = (
        rule["rule"] == "difficulty"
        and point is not None
        and point.pass_at_1 is not None
        and not facts.get("independent_attempts")
        and (facts.get("panel_passes"), facts.get("panel_attempts"))
        == (point.passes, point.samples)
    )
    if not remeasured:
        return f"{rule['rule']}: {rule['detail']}"
    if entry.get("origin") == "original":
        band = f"originals' ceiling {rules.get('original_max_pass_at_1')}"
    else:
        band = f"band [{rules.get('min_pass_at_1')}, {rules.get('max_pass_at_1')}]"
    return (
        f"difficulty: pass@1 {point.pass_at_1:.2f} ({point.passes}/{point.samples}) over the "
        f"panel, re-measured on {point.measured_at:%Y-%m-%d}, outside the gate's {band}"
    )


# --- current levels ----------------------------------------------------------------------------


def current_levels(*, release: Release) -> dict[str, dict]:
    """Each item's difficulty level as the panel last measured it: ``{public_id: {"level",
    "measured_at", "source"}}``. A re-measured item's level is the one phi gives its latest
    re-measured pass@1 (with the level thresholds of the campaign it came from, else the
    defaults), dated; an item never re-measured keeps the level measured when it was accepted
    (its candidate's, dated when the candidate was decided, or its seed calibration's)."""
    from evolution.judging.difficulty import DEFAULT_LEVEL_THRESHOLDS, phi
    from evolution.models import Campaign
    from evolution.streams.kinds import problem_panel_facts

    latest = {}
    for point in DifficultyPoint.objects.filter(
        release=release, remeasurement__state="completed"
    ).order_by("measured_at", "id"):
        if point.pass_at_1 is not None:  # an open-ended problem's point has no pass@1
            latest[point.public_id] = point
    items = list(release.items.only("release_id", "public_id", "problem_id", "provenance"))
    campaign_ids = {((i.provenance or {}).get("campaign") or {}).get("id") for i in items} - {None}
    campaigns = list(Campaign.objects.filter(pk__in=campaign_ids).only("pk", "kind", "settings"))
    thresholds = {
        c.pk: c.settings.get("level_thresholds") or DEFAULT_LEVEL_THRESHOLDS for c in campaigns
    }
    # When an accepted problem was measured: as the kind whose panel measured it says.
    accepted = [i.problem_id for i in items if (i.provenance or {}).get("candidate")]
    decided = {pid: f.measured_at for pid, f in problem_panel_facts(accepted, campaigns).items()}
    out = {}
    for item in items:
        prov = item.provenance or {}
        point = latest.get(item.public_id)
        if point is not None:
            campaign_id = (prov.get("campaign") or {}).get("id")
            out[item.public_id] = {
                "level": phi(
                    point.pass_at_1, thresholds.get(campaign_id, DEFAULT_LEVEL_THRESHOLDS)
                ),
                "measured_at": point.measured_at,
                "source": "re-measured",
            }
        elif prov.get("candidate"):
            out[item.public_id] = {
                "level": prov["candidate"].get("level"),
                "measured_at": decided.get(item.problem_id),
                "source": "at acceptance",
            }
        elif prov.get("seed_calibration"):
            out[item.public_id] = {
                "level": prov["seed_calibration"].get("level"),
                "measured_at": None,
                "source": "seed calibration",
            }
    return out


def calibration_levels(*, calibration, release: Release) -> None:
    """Give the rows of ``release``'s calibration (``calibration.for_release``) the level of
    their latest measurement, the one their pass@1 comes from, with ``level_source`` and
    ``level_measured_at`` saying which and when (the level stored with an item at freeze is
    the one it was accepted with, however the panel has moved since)."""
    levels = current_levels(release=release)
    for row in calibration.rows:
        now = levels.get(row.public_id)
        if now is None:
            continue
        row.level = now["level"]
        row.level_source = now["source"]
        row.level_measured_at = now["measured_at"]


# --- the living-benchmark page ---------------------------------------------------------------


def saturation_plot(*, series: list[dict]) -> dict | None:
    """Coordinates of the saturated share at each completed re-measurement (0 to 1)."""
    if not series:
        return None
    inner_w, inner_h = 560 - 2 * PLOT_PAD, 140 - 2 * PLOT_PAD
    step = inner_w / (len(series) - 1) if len(series) > 1 else 0
    marks = []
    for index, row in enumerate(series):
        x = round(PLOT_PAD + (index * step if len(series) > 1 else inner_w / 2), 1)
        marks.append(
            {
                "x": x,
                "y": round(PLOT_PAD + (1 - row["share"]) * inner_h, 1),
                "label": f"{row['at']:%Y-%m-%d %H:%M} v{row['version']}: "
                f"{row['saturated']}/{row['problems']} saturated",
            }
        )
    return {
        "width": 560,
        "height": 140,
        "left": PLOT_PAD,
        "right": 560 - PLOT_PAD,
        "top": PLOT_PAD,
        "bottom": 140 - PLOT_PAD,
        "line": " ".join(f"{m['x']},{m['y']}" for m in marks),
        "marks": marks,
    }


def benchmark_living(*, benchmark: Benchmark) -> dict:
    """Everything the living-benchmark page shows: published releases with their saturated
    share, the saturated share after each re-measurement, the re-measurements, the panel and
    the re-evolution campaigns not finished yet."""
    from evolution.models.campaigns import CampaignState

    releases = list(
        Release.objects.filter(benchmark=benchmark, state=ReleaseState.PUBLISHED).order_by(
            "published_at"
        )
    )
    remeasurements = list(
        Remeasurement.objects.filter(benchmark=benchmark)
        .select_related("release")
        .prefetch_related("runs")
        .order_by("-created_at", "-id")
    )
    series = []
    for r in reversed(remeasurements):
        if r.state != "completed":
            continue
        # Out of the problems that can saturate: the pass/fail ones (a re-measurement before
        # scored problems were set apart counted every problem).
        problems = r.summary.get("pass_fail_problems", r.summary.get("problems", 0))
        saturated = r.summary.get("saturated", 0)
        series.append(
            {
                "at": r.finished_at,
                "version": r.release.version,
                "saturated": saturated,
                "problems": problems,
                "share": saturated / problems if problems else 0.0,
            }
        )
    pending = list(
        ReEvolution.objects.filter(release__benchmark=benchmark)
        .exclude(campaign__state__in=[CampaignState.COMPLETED, CampaignState.CANCELLED])
        .select_related("campaign", "release")
    )
    latest = latest_published(benchmark)
    return {
        "releases": [{"release": r, "saturation": saturation_share(release=r)} for r in releases],
        "series": series,
        "saturation_plot": saturation_plot(series=series),
        "saturation_figure": plots.saturation_figure(series=series),
        "remeasurements": remeasurements,
        "seats": list(PanelSeat.objects.filter(benchmark=benchmark).select_related("endpoint")),
        "pending": pending,
        "latest": latest,
        "flags": list(SaturationFlag.objects.active().filter(release=latest).order_by("flagged_at"))
        if latest
        else [],
        "withdrawn_flags": list(
            SaturationFlag.objects.withdrawn()
            .filter(release=latest)
            .select_related("withdrawn_by")
            .order_by("-withdrawn_at", "public_id")
        )
        if latest
        else [],
    }
