"""The gate's independent difficulty: the release candidates measured again, by fresh samples.

Why. A candidate enters a release when its selection-time pass@1 (the campaign panel's
measurement that accepted it, or a seed's calibration) lies in the gate's window. Among many
candidates measured with a few samples each, the ones kept are those whose panel happened to
do badly: the selection-time figure of a kept problem is biased toward difficulty (the
winner's curse). A second, independent measurement of the same problems is unbiased for them.

What. A draft's evaluation panel (``GatePanel``: endpoints, K fresh samples per problem, and
whether models used for selection are left out; default: the benchmark's living panel) samples
every pass/fail candidate K times through the leaderboard's machinery: the solver prompt the
campaign panel got (``leaderboard.solver_answer``) and the judge on every test, hidden ones
included, under the problem's own output contract (``leaderboard.judge_job``). A model call
that fails for transport or provider reasons is an infrastructure error (verdict "IE"): asked
again, never counted; an endpoint whose samples still fail after ``INFRA_TRIES`` rounds fails
the evaluation with a reason naming it, and running it again resumes. Samples are unique per
(evaluation, endpoint, problem, index), so a redelivered task redoes nothing.

The gate (``services.gate_run_create``) reads each candidate's pooled independent pass@1 from
the release's latest completed evaluation when that candidate was evaluated in its current
content (item hash unchanged); the report shows both figures. The gap, selection-time minus
independent pass@1 per problem and its mean with a bootstrap interval over problems, is the
size of the winner's curse (``evaluation_summary``, shown on the curator's release page).
"""

from __future__ import annotations

import contextlib
import logging
from collections import defaultdict

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from evolution import jobs
from evolution.models import PanelMember
from evolution.sandbox import scoring
from evolution.sources import PanelFacts

from . import content, leaderboard
from .leaderboard.stats import bootstrap_mean
from .living import wilson_interval
from .models import (
    GateEvaluation,
    GateEvaluationSample,
    GateEvaluationState,
    GatePanel,
    PanelSeat,
    Release,
    ReleaseState,
)

log = logging.getLogger(__name__)

INFRA_ERROR = leaderboard.INFRA_ERROR  # the engine's verdict for a failed model call too
INFRA_TRIES = leaderboard.INFRA_TRIES
MAX_THREADS = 16  # each thread holds a database connection
TASK = "releases.tasks.gate_evaluation_run"


def require_draft(release: Release) -> None:
    if release.state != ReleaseState.DRAFT:
        raise ValidationError(
            f"v{release.version} is {release.state}: the independent evaluation is for a draft's "
            "candidates, before the gate decides."
        )


# --- the evaluation panel -----------------------------------------------------------------


def panel_settings(*, release: Release) -> dict:
    """The draft's evaluation panel: {"endpoints": [...], "samples", "exclude_selection_models",
    "configured": bool}. Unconfigured, it is the benchmark's living evaluation panel (its
    seats' endpoints, the largest seat sample count), models used for selection included, as
    in the paper's evaluation suite (fresh samples are what removes the winner's curse)."""
    panel = GatePanel.objects.filter(release=release).first()
    if panel is not None:
        return {
            "endpoints": list(panel.endpoints.order_by("name")),
            "samples": panel.samples,
            "exclude_selection_models": panel.exclude_selection_models,
            "configured": True,
        }
    seats = list(PanelSeat.objects.filter(benchmark=release.benchmark).select_related("endpoint"))
    return {
        "endpoints": sorted((s.endpoint for s in seats), key=lambda e: e.name),
        "samples": max((s.samples for s in seats), default=4),
        "exclude_selection_models": False,
        "configured": False,
    }


@transaction.atomic
def panel_update(
    *, release: Release, endpoints, samples: int, exclude_selection_models: bool
) -> GatePanel:
    require_draft(release)
    endpoints = list(endpoints)
    if not endpoints:
        raise ValidationError({"endpoints": "Choose at least one model for the evaluation panel."})
    if not 1 <= samples <= 100:
        raise ValidationError({"samples": "Fresh samples per problem must be between 1 and 100."})
    panel, _ = GatePanel.objects.update_or_create(
        release=release,
        defaults={"samples": samples, "exclude_selection_models": exclude_selection_models},
    )
    panel.endpoints.set(endpoints)
    return panel


def carry_panel(*, draft: Release) -> None:
    """A follow-up version's draft keeps its predecessor's evaluation panel (hook in
    ``services.release_next``)."""
    previous = GatePanel.objects.filter(release_id=draft.previous_id).first()
    if previous is None:
        return
    panel = GatePanel.objects.create(
        release=draft,
        samples=previous.samples,
        exclude_selection_models=previous.exclude_selection_models,
    )
    panel.endpoints.set(previous.endpoints.all())


# --- who selected the candidates ------------------------------------------------------------


def selection_endpoints(*, release: Release, panel: dict[int, PanelFacts]) -> dict[int, str]:
    """{endpoint id: what it measured} for every endpoint whose answers made a candidate's
    selection-time figure: the campaign panels' members, the endpoints of the candidates' and
    seeds' recorded attempts, and the benchmark's living panel where its re-measurement
    replaced a figure. ``panel`` is the gate's panel facts per problem id."""
    used: dict[int, str] = {}
    for member in PanelMember.objects.filter(
        panel__campaigns__in=release.campaigns.all()
    ).select_related("endpoint", "panel"):
        used.setdefault(member.endpoint_id, f"on the selection panel {member.panel.name!r}")
    for endpoint_id in sorted({e for facts in panel.values() for e in facts.endpoints}):
        used.setdefault(endpoint_id, "answered the candidates during selection")
    if any(facts.remeasured_at for facts in panel.values()):
        for seat in PanelSeat.objects.filter(benchmark=release.benchmark):
            used.setdefault(seat.endpoint_id, "re-measured earlier versions' items (living panel)")
    return used


def _split_panel(endpoints, *, exclude: bool, used: dict[int, str]):
    """(endpoints kept, [{"endpoint", "model", "why"}] left out). A replayed endpoint is
    always left out: it answers with recorded attempts, so its samples are not fresh."""
    from evolution.models import ModelEndpoint

    used_models = {
        m.strip().lower(): name
        for m, name in ModelEndpoint.objects.filter(pk__in=list(used)).values_list("model", "name")
    }
    kept, left_out = [], []
    for endpoint in endpoints:
        why = ""
        if endpoint.is_replay:
            why = "replays recorded answers: its samples would not be fresh"
        elif exclude and endpoint.pk in used:
            why = f"used for selection ({used[endpoint.pk]})"
        elif exclude and endpoint.model.strip().lower() in used_models:
            why = (
                f"same model ({endpoint.model}) as the selection endpoint "
                f"{used_models[endpoint.model.strip().lower()]!r}"
            )
        if why:
            left_out.append({"endpoint": endpoint.name, "model": endpoint.model, "why": why})
        else:
            kept.append(endpoint)
    return kept, left_out


# --- creating ---------------------------------------------------------------------------------


def problem_hash(problem) -> str:
    """The candidate's content hash as a release would snapshot it (record and tests)."""
    record = content.problem_content_record(problem)
    tests = [
        {
            "tier": t.tier,
            "ordinal": t.ordinal,
            "hidden": t.hidden,
            "input": t.input,
            "output": t.output,
        }
        for t in problem.tests.all()
    ]
    return content.item_hash(record, tests)


def _evaluable(problem) -> bool:
    """Pass/fail problems with tests; open-ended (scored) ones have no pass@1 window."""
    return not scoring.is_scored(problem.comparison) and problem.tests.exists()


@transaction.atomic
def evaluation_create(
    *, release: Release, problems: list, panel: dict[int, PanelFacts], by=None
) -> GateEvaluation:
    """A queued evaluation of the draft's pass/fail candidates ``problems`` by its evaluation
    panel. ``panel`` holds their selection-time facts ({"passes", "attempts", ...} per problem
    id, as the gate reads them). The caller enqueues ``tasks.gate_evaluation_run``."""
    release = Release.objects.select_for_update().get(pk=release.pk)
    require_draft(release)
    if GateEvaluation.objects.filter(
        release=release, state__in=[GateEvaluationState.QUEUED, GateEvaluationState.RUNNING]
    ).exists():
        raise ValidationError("An independent evaluation of this draft is already under way.")
    config = panel_settings(release=release)
    if not config["endpoints"]:
        raise ValidationError(
            {
                "endpoints": "Choose the evaluation panel first (no models, and the benchmark has "
                "no living panel)."
            }
        )
    used = selection_endpoints(release=release, panel=panel)
    kept, left_out = _split_panel(
        config["endpoints"], exclude=config["exclude_selection_models"], used=used
    )
    if not kept:
        raise ValidationError(
            {
                "endpoints": "Every model of the evaluation panel is left out: "
                + "; ".join(f"{x['endpoint']}: {x['why']}" for x in left_out)
            }
        )
    evaluated = {}
    for problem in problems:
        if not _evaluable(problem):
            continue
        facts = panel.get(problem.pk)
        evaluated[str(problem.pk)] = {
            "public_id": problem.public_id,
            "title": problem.title,
            "origin": "original" if problem.kind == "seed" else "evolved",
            "hash": problem_hash(problem),
            "selection": {
                "passes": facts.passes if facts else None,
                "attempts": facts.attempts if facts else None,
            },
        }
    if not evaluated:
        raise ValidationError("The draft has no pass/fail candidate with tests to evaluate.")
    evaluation = GateEvaluation.objects.create(
        release=release,
        samples=config["samples"],
        exclude_selection_models=config["exclude_selection_models"],
        excluded=left_out,
        problems=evaluated,
        planned=len(evaluated) * len(kept) * config["samples"],
        created_by=by,
    )
    evaluation.endpoints.set(kept)
    return evaluation


def enqueue(evaluation: GateEvaluation) -> None:
    from celery import current_app

    def send():
        current_app.send_task(TASK, (evaluation.pk,))
        jobs.note_sent(GateEvaluation, evaluation.pk)

    # By task name, on commit (releases.tasks imports this module to run it). If the publish
    # fails, the row stays queued and the job supervisor sends it again (evolution.jobs).
    transaction.on_commit(send)


# --- executing --------------------------------------------------------------------------------


def _key(evaluation: GateEvaluation, public_id: str, index: int) -> str:
    return f"gate-evaluation={evaluation.pk};item={public_id};sample={index}"


def _ask(evaluation: GateEvaluation, endpoint, problem, record: dict, index: int, earlier) -> None:
    """One fresh sample, stored as soon as it arrives; a failed call is stored (or kept) as
    an infrastructure error with its status and message (``leaderboard.sample_fields``)."""
    answer = leaderboard.solver_answer(
        endpoint, record, key=_key(evaluation, problem.public_id, index)
    )
    fields = leaderboard.sample_fields(answer, earlier.details if earlier is not None else None)
    if earlier is not None:
        GateEvaluationSample.objects.filter(pk=earlier.pk, verdict=INFRA_ERROR).update(**fields)
        return
    with contextlib.suppress(IntegrityError), transaction.atomic():
        GateEvaluationSample.objects.create(
            evaluation=evaluation, endpoint=endpoint, problem=problem, sample_index=index, **fields
        )


def _generate(evaluation: GateEvaluation, endpoints: list, problems: dict) -> None:
    """Ask for every sample not answered yet (missing, or an infrastructure error)."""
    existing = {
        (s.endpoint_id, s.problem_id, s.sample_index): s
        for s in GateEvaluationSample.objects.filter(evaluation=evaluation).only(
            "id", "endpoint_id", "problem_id", "sample_index", "verdict", "details"
        )
    }
    records = {pid: content.problem_content_record(p) for pid, p in problems.items()}
    jobs = []
    for endpoint in endpoints:
        for pid, problem in problems.items():
            for index in range(evaluation.samples):
                earlier = existing.get((endpoint.pk, pid, index))
                if earlier is not None and earlier.verdict != INFRA_ERROR:
                    continue
                jobs.append(
                    lambda e=endpoint, p=problem, r=records[pid], i=index, x=earlier: _ask(
                        evaluation, e, p, r, i, x
                    )
                )
    if jobs:
        width = min(MAX_THREADS, sum(e.concurrency_limit for e in endpoints))
        leaderboard.parallel(jobs, width=max(1, width))


def _still_failing(evaluation: GateEvaluation) -> str:
    """The reason an evaluation cannot complete, naming each endpoint whose samples still
    fail for infrastructure reasons; "" when none does."""
    failing: dict[str, list] = defaultdict(list)
    for name, details in (
        GateEvaluationSample.objects.filter(evaluation=evaluation, verdict=INFRA_ERROR)
        .order_by("id")
        .values_list("endpoint__name", "details")
    ):
        failing[name].append(details)
    return leaderboard.still_failing(failing, what="evaluation endpoint")


def _judge(evaluation: GateEvaluation, problems: dict) -> None:
    from evolution.sandbox.batch import judge_many

    pending = list(
        GateEvaluationSample.objects.filter(evaluation=evaluation, verdict="").order_by("id")
    )
    if not pending:
        return
    records = {pid: content.problem_content_record(p) for pid, p in problems.items()}
    tests = {pid: list(p.tests.order_by("tier", "ordinal")) for pid, p in problems.items()}
    jobs = (
        leaderboard.judge_job(s.code, records[s.problem_id], tests[s.problem_id]) for s in pending
    )
    width = int(getattr(settings, "SANDBOX_MAX_PARALLEL", 2))
    for sample, result in zip(pending, judge_many(jobs, workers=width), strict=True):
        if isinstance(result, ValueError):
            raise result
        if result.verdict == "SE":
            raise leaderboard.SandboxUnavailable(
                f"sandbox failure while judging sample {sample.pk}"
            )
        GateEvaluationSample.objects.filter(pk=sample.pk, verdict="").update(
            verdict=result.verdict, passed_tests=result.passed, total_tests=result.total
        )


def evaluation_execute(*, evaluation_id: int) -> GateEvaluation:
    """Ask and judge whatever is missing, then summarise. Safe to call again at any point
    (a failed evaluation resumes); a completed one, or one a live execution holds, is
    returned as is (``evolution.jobs``)."""
    token = jobs.claim(GateEvaluation, evaluation_id)
    evaluation = GateEvaluation.objects.get(pk=evaluation_id)
    if token is None:  # completed, or held by a live execution
        return evaluation
    with jobs.beating(GateEvaluation, evaluation_id, token):
        _execute(evaluation, token)
    return GateEvaluation.objects.get(pk=evaluation_id)


def _execute(evaluation: GateEvaluation, token: str) -> None:
    from evolution.models import Problem

    evaluation_id = evaluation.pk
    endpoints = list(evaluation.endpoints.all())
    problems = {
        p.pk: p
        for p in Problem.objects.filter(pk__in=[int(k) for k in evaluation.problems])
        .select_related("lineage_root")
        .prefetch_related("tests")
    }
    try:
        for _ in range(INFRA_TRIES):
            _generate(evaluation, endpoints, problems)
            if not GateEvaluationSample.objects.filter(
                evaluation=evaluation, verdict=INFRA_ERROR
            ).exists():
                break
        # Judge what was answered even when an endpoint is down: resuming then only asks.
        _judge(evaluation, problems)
        failing = _still_failing(evaluation)
    except Exception as exc:
        log.exception("independent evaluation %s failed", evaluation_id)
        failing = f"{exc.__class__.__name__}: {exc}"
    if failing:
        jobs.finish(
            GateEvaluation,
            evaluation_id,
            token,
            state=GateEvaluationState.FAILED,
            error=failing[:2000],
        )
        return
    summary = evaluation_summary(evaluation=evaluation)
    jobs.finish(
        GateEvaluation,
        evaluation_id,
        token,
        state=GateEvaluationState.COMPLETED,
        summary=summary,
        finished_at=timezone.now(),
    )


# --- reading ----------------------------------------------------------------------------------


def progress(*, evaluation: GateEvaluation) -> dict:
    """How far the evaluation is: samples answered (a model answer, with or without code),
    judged, and waiting for a failed call to be asked again, out of ``planned``."""
    counts = defaultdict(int)
    for verdict in GateEvaluationSample.objects.filter(evaluation=evaluation).values_list(
        "verdict", flat=True
    ):
        counts[verdict] += 1
    answered = sum(n for v, n in counts.items() if v != INFRA_ERROR)
    judged = sum(n for v, n in counts.items() if v not in ("", INFRA_ERROR))
    planned = evaluation.planned
    return {
        "planned": planned,
        "answered": answered,
        "judged": judged,
        "infra_errors": counts.get(INFRA_ERROR, 0),
        "percent": round(100 * judged / planned) if planned else 0,
    }


def _rate(passes, attempts) -> float | None:
    return passes / attempts if attempts else None


def evaluation_summary(*, evaluation: GateEvaluation) -> dict:
    """Per problem: the selection-time figure, the pooled independent pass@1 (IE excluded)
    with its Wilson interval and per-model counts, and the gap selection minus independent;
    then the mean gap over problems with both figures (the winner's-curse size), with a
    seeded bootstrap interval over problems, overall and by origin."""
    rows: dict[int, dict] = {}
    names = dict(evaluation.endpoints.values_list("pk", "name"))
    for pid, endpoint_id, verdict in GateEvaluationSample.objects.filter(
        evaluation=evaluation
    ).values_list("problem_id", "endpoint_id", "verdict"):
        row = rows.setdefault(pid, {"passes": 0, "attempts": 0, "infra_errors": 0, "models": {}})
        model = row["models"].setdefault(names.get(endpoint_id, str(endpoint_id)), [0, 0])
        if verdict == INFRA_ERROR:
            row["infra_errors"] += 1
            continue
        if verdict == "":
            continue  # not judged yet
        row["attempts"] += 1
        model[1] += 1
        if verdict == "AC":
            row["passes"] += 1
            model[0] += 1
    per_problem = []
    for pid_text, facts in sorted(
        evaluation.problems.items(),
        key=lambda kv: (kv[1]["origin"] != "evolved", kv[1]["public_id"]),
    ):
        got = rows.get(int(pid_text), {"passes": 0, "attempts": 0, "infra_errors": 0, "models": {}})
        sel = facts.get("selection") or {}
        selection = _rate(sel.get("passes"), sel.get("attempts"))
        independent = _rate(got["passes"], got["attempts"])
        low, high = wilson_interval(got["passes"], got["attempts"])
        per_problem.append(
            {
                "problem_id": int(pid_text),
                "public_id": facts["public_id"],
                "title": facts["title"],
                "origin": facts["origin"],
                "selection": {
                    "passes": sel.get("passes"),
                    "attempts": sel.get("attempts"),
                    "pass_at_1": selection,
                },
                "independent": {
                    "passes": got["passes"],
                    "attempts": got["attempts"],
                    "pass_at_1": independent,
                    "low": low if got["attempts"] else None,
                    "high": high if got["attempts"] else None,
                    "infra_errors": got["infra_errors"],
                },
                "models": {
                    name: {"passes": c, "attempts": n}
                    for name, (c, n) in sorted(got["models"].items())
                },
                "gap": (selection - independent)
                if selection is not None and independent is not None
                else None,
            }
        )

    def gap_estimate(rows_: list[dict]) -> dict | None:
        values = [r["gap"] for r in rows_ if r["gap"] is not None]
        return bootstrap_mean(values, seed=0).to_dict() if values else None

    return {
        "models": sorted(names.values()),
        "samples": evaluation.samples,
        "excluded": evaluation.excluded,
        "problems": len(per_problem),
        "per_problem": per_problem,
        "gap": gap_estimate(per_problem),
        "gap_by_origin": {
            origin: gap_estimate([r for r in per_problem if r["origin"] == origin])
            for origin in ("evolved", "original")
        },
    }


def latest_completed(*, release: Release) -> GateEvaluation | None:
    return (
        GateEvaluation.objects.filter(release=release, state=GateEvaluationState.COMPLETED)
        .order_by("-finished_at", "-id")
        .first()
    )


def label(evaluation: GateEvaluation) -> str:
    models = evaluation.summary.get("models") or []
    return (
        f"evaluation {evaluation.pk}: {len(models)} model(s) × {evaluation.samples} fresh sample(s)"
    )


def gate_figures(*, release: Release, problems: list) -> dict[int, dict]:
    """The independent facts the gate reads, per candidate id: {"passes", "attempts",
    "source"} when the latest completed evaluation sampled it in its current content, else
    {"note": why not}. Empty when the draft was never evaluated independently."""
    evaluation = latest_completed(release=release)
    if evaluation is None:
        return {}
    rows = {r["problem_id"]: r for r in evaluation.summary.get("per_problem", [])}
    out: dict[int, dict] = {}
    for problem in problems:
        facts = evaluation.problems.get(str(problem.pk))
        row = rows.get(problem.pk)
        if facts is None or row is None:
            out[problem.pk] = {"note": f"not in independent evaluation {evaluation.pk}"}
        elif facts["hash"] != problem_hash(problem):
            out[problem.pk] = {
                "note": f"changed since independent evaluation {evaluation.pk}; evaluate again"
            }
        elif not row["independent"]["attempts"]:
            out[problem.pk] = {
                "note": f"no judged sample in independent evaluation {evaluation.pk}"
            }
        else:
            out[problem.pk] = {
                "passes": row["independent"]["passes"],
                "attempts": row["independent"]["attempts"],
                "source": label(evaluation),
            }
    return out


# --- the winner's-curse plot (inline SVG, no script) ----------------------------------------

PLOT_SIZE, PLOT_PAD = 260, 30


def gap_plot(*, summary: dict, window: tuple[float, float]) -> dict | None:
    """Coordinates of a scatter of selection-time (x) against independent (y) pass@1, one
    point per problem with both figures, the diagonal (no gap) and the gate's window on the
    independent axis. Points under the diagonal are problems that proved easier than their
    selection said."""
    points = [r for r in summary.get("per_problem", []) if r["gap"] is not None]
    if not points:
        return None
    inner = PLOT_SIZE - 2 * PLOT_PAD

    def x(value: float) -> float:
        return round(PLOT_PAD + value * inner, 1)

    def y(value: float) -> float:
        return round(PLOT_PAD + (1 - value) * inner, 1)

    low, high = window
    return {
        "size": PLOT_SIZE,
        "inner": inner,
        "left": PLOT_PAD,
        "right": PLOT_SIZE - PLOT_PAD,
        "top": PLOT_PAD,
        "bottom": PLOT_SIZE - PLOT_PAD,
        "window_top": y(high),
        "window_height": round(y(low) - y(high), 1),
        "window": window,
        "marks": [
            {
                "x": x(r["selection"]["pass_at_1"]),
                "y": y(r["independent"]["pass_at_1"]),
                "origin": r["origin"],
                "label": f"{r['public_id']}: selection {r['selection']['pass_at_1']:.2f} "
                f"({r['selection']['passes']}/{r['selection']['attempts']}), independent "
                f"{r['independent']['pass_at_1']:.2f} ({r['independent']['passes']}/"
                f"{r['independent']['attempts']}), gap {r['gap']:+.2f}",
            }
            for r in points
        ],
    }


def release_context(*, release: Release) -> dict:
    """What the curator's release page shows of the independent difficulty."""
    from .gate import GateRules, RulesError

    evaluations = list(
        GateEvaluation.objects.filter(release=release)
        .prefetch_related("endpoints")
        .order_by("-created_at", "-id")[:10]
    )
    latest = evaluations[0] if evaluations else None
    completed = latest_completed(release=release)
    try:
        rules = GateRules.from_dict(release.gate_rules)
    except RulesError:
        rules = GateRules()
    return {
        "panel": panel_settings(release=release),
        "evaluations": evaluations,
        "latest": latest,
        "progress": progress(evaluation=latest) if latest else None,
        "completed": completed,
        "plot": gap_plot(
            summary=completed.summary, window=(rules.min_pass_at_1, rules.max_pass_at_1)
        )
        if completed
        else None,
        "require_independent": rules.require_independent,
    }
