"""Writes of panel measurements: create, advance one phase, finish, fail, retry; batches.

A measurement moves in phases worked out from its rows alone (``next_phase``): ``solve`` while
attempts are missing or failed for infrastructure reasons (model-bound, queue ``default``),
then ``judge`` (sandbox-bound, queue ``sandbox``), which finishes it once every attempt has a
verdict. The campaign stage (``stage.py``) and the Celery tasks (``tasks.py``) both drive it
through ``measurement_advance``; a rerun after a crash does only what is missing.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from evolution.judging.difficulty import INFRA_ERROR, phi
from evolution.models import Campaign, Panel, Problem, ProblemSet
from evolution.models.problems import ProblemKind
from evolution.screening import services as screening
from evolution.streams import errors

from . import panel as panel_calls
from .models import Measurement, MeasurementBatch, MeasurementState

SOLVE_TASK = "evolution.measurement.solve"
JUDGE_TASK = "evolution.measurement.judge"
MAX_K = 64  # EvolutionSettings' bound on target_eval_k


def plan_for(panel: Panel, k: int) -> list[list[int]]:
    """[[endpoint id, K], ...]: each member's own ``attempts``, else ``k`` (BenchEvolver's
    ``panel_plan`` without a candidate's extra attempts)."""
    return [[m.endpoint_id, m.k(k)] for m in panel.members.order_by("id")]


def refusal(problem: Problem) -> str:
    """Why ``problem`` cannot be measured by a panel ("" when it can)."""
    if panel_calls.is_open_ended(problem):
        return (
            "open-ended problem: its solutions are scored by its verifier, not passed or "
            "failed, so it has no pass@1 (the gate reads its score spread)"
        )
    if not problem.tests.exists():
        return "the problem has no tests to judge attempts on"
    return ""


def _check_panel(panel: Panel | None, k: int) -> None:
    if panel is None:
        raise ValidationError({"panel": "Choose a panel to measure with."})
    if not panel.members.exists():
        raise ValidationError({"panel": f"Panel {panel.name!r} has no models."})
    if not 1 <= k <= MAX_K:
        raise ValidationError({"target_eval_k": f"K must be between 1 and {MAX_K}."})


def measurement_create(
    *,
    problem: Problem,
    panel: Panel,
    k: int | None = None,
    campaign: Campaign | None = None,
    batch: MeasurementBatch | None = None,
    created_by=None,
) -> Measurement:
    """A pending measurement of ``problem`` by ``panel`` (K = ``k`` or Table 5's
    ``target_eval_k``). For a campaign or a batch the existing record is returned (one per
    problem). A problem that cannot be measured gets a failed record naming why. A new record's
    problem (unless it is a seed, a public problem itself) is screened for contamination
    (``evolution.screening``), whether or not it can be measured."""
    k = k or panel_calls.defaults().target_eval_k
    _check_panel(panel, k)
    scope = {"campaign": campaign} if campaign else {"batch": batch} if batch else None
    if scope is not None:
        existing = Measurement.objects.filter(problem=problem, **scope).first()
        if existing is not None:
            return existing
    why = refusal(problem)
    fields = dict(
        problem=problem,
        panel=panel,
        campaign=campaign,
        batch=batch,
        plan=plan_for(panel, k),
        level_thresholds=list(panel_calls.defaults().level_thresholds),
        created_by=created_by,
    )
    if why:
        fields.update(state=MeasurementState.FAILED, reason=why, measured_at=timezone.now())
    try:
        with transaction.atomic():
            measurement = Measurement.objects.create(**fields)
    except IntegrityError:  # a concurrent rerun created it first
        return Measurement.objects.get(problem=problem, **(scope or {}))
    if problem.kind != ProblemKind.SEED:
        # Where X-Coder, EvoSyn and FrontierSmith problems (and any evolved problem a curator
        # measures) are screened against the public corpora; the gate reads the stored screen.
        screening.screen_problem(problem, context="measurement")
    return measurement


def next_phase(measurement: Measurement) -> str | None:
    """ "solve", "judge" or None (completed or failed), from the rows alone."""
    if measurement.state != MeasurementState.PENDING:
        return None
    runs = measurement.runs
    if runs.exclude(verdict=INFRA_ERROR).count() < measurement.planned:
        return "solve"
    return "judge"


def measurement_finish(measurement: Measurement) -> Measurement:
    """Pool the verdicts (infrastructure errors apart) into passes / attempts, the level phi
    maps the pass rate to, the per-model table and the error pattern."""
    result = panel_calls.pooled(measurement)
    if not result.attempts:
        return measurement_fail(measurement, reason="no attempt could be judged")
    measurement.passes, measurement.attempts = result.passes, result.attempts
    measurement.infra_errors = result.infra_errors
    measurement.level = phi(result.pass_rate, measurement.level_thresholds)
    measurement.per_model = result.per_model
    measurement.error_pattern = result.error_pattern
    measurement.state = MeasurementState.COMPLETED
    measurement.reason = ""
    measurement.measured_at = timezone.now()
    measurement.save()
    return measurement


def measurement_fail(measurement: Measurement, *, reason: str) -> Measurement:
    Measurement.objects.filter(pk=measurement.pk, state=MeasurementState.PENDING).update(
        state=MeasurementState.FAILED, reason=reason[:500], measured_at=timezone.now()
    )
    measurement.refresh_from_db()
    return measurement


def measurement_advance(
    *, measurement_id: int
) -> tuple[str | None, panel_calls.SolveOutcome | None]:
    """Do the measurement's next phase: ask the missing attempts (``solve``) or judge the
    unjudged ones and finish (``judge``). Returns (the phase done, the solve outcome)."""
    measurement = Measurement.objects.select_related("problem").get(pk=measurement_id)
    phase = next_phase(measurement)
    if phase == "solve":
        return phase, panel_calls.solve(measurement)
    if phase == "judge":
        panel_calls.judge(measurement)
        if not measurement.runs.filter(verdict="").exists():
            measurement_finish(measurement)
    return phase, None


# --- a curator's batch ---------------------------------------------------------------------


@transaction.atomic
def batch_create(
    *,
    panel: Panel,
    problem_set: ProblemSet | None = None,
    problems=None,
    k: int | None = None,
    created_by=None,
    label: str = "",
) -> MeasurementBatch:
    """Measure every problem of ``problem_set`` (or ``problems``) with ``panel``: one pending
    measurement each (problems that cannot be measured get a failed one saying why), and a
    Celery task per measurement enqueued when the transaction commits."""
    k = k or panel_calls.defaults().target_eval_k
    _check_panel(panel, k)
    chosen = list(problems) if problems is not None else []
    if problem_set is not None:
        chosen += list(problem_set.problems.order_by("id"))
    if not chosen:
        raise ValidationError({"problem_set": "There is no problem to measure."})
    batch = MeasurementBatch.objects.create(
        problem_set=problem_set,
        panel=panel,
        target_eval_k=k,
        created_by=created_by,
        label=(label or f"{problem_set.name if problem_set else 'problems'} by {panel.name}")[:200],
    )
    seen = set()
    for problem in chosen:
        if problem.pk in seen:
            continue
        seen.add(problem.pk)
        m = measurement_create(
            problem=problem, panel=panel, k=k, batch=batch, created_by=created_by
        )
        if m.state == MeasurementState.PENDING:
            enqueue(m.pk)
    return batch


def measurement_retry(*, measurement: Measurement) -> Measurement:
    """Ask a failed measurement again (its stored answers are kept; failed calls are retried)."""
    if measurement.state != MeasurementState.FAILED:
        raise ValidationError("Only a failed measurement can be retried.")
    why = refusal(measurement.problem)
    if why:
        raise ValidationError(why)
    Measurement.objects.filter(pk=measurement.pk).update(
        state=MeasurementState.PENDING, reason="", measured_at=None
    )
    if measurement.campaign_id is None:
        enqueue(measurement.pk)
    measurement.refresh_from_db()
    return measurement


def enqueue(measurement_id: int, *, phase: str = "solve", countdown: float = 0) -> None:
    """After commit, send the measurement's next phase to its queue (by task name)."""
    from celery import current_app

    name, queue = (SOLVE_TASK, "default") if phase == "solve" else (JUDGE_TASK, "sandbox")
    # The job supervisor re-sends a message lost with the broker (``MEASUREMENT_JOB``).
    Measurement.objects.filter(pk=measurement_id).update(sent_at=timezone.now())
    transaction.on_commit(
        lambda: current_app.signature(name, args=(measurement_id,), queue=queue).apply_async(
            countdown=countdown or None
        )
    )


def batch_progress(batch: MeasurementBatch) -> dict:
    counts = {s: 0 for s in MeasurementState.values}
    for state in batch.measurements.values_list("state", flat=True):
        counts[state] += 1
    counts["total"] = sum(counts[s] for s in MeasurementState.values)
    counts["finished"] = counts["total"] - counts[MeasurementState.PENDING]
    return counts


# Pause before asking failed calls again: this many seconds times the failures so far (the
# client already retried each call with its own backoff).
RETRY_BACKOFF_S = 2.0


def measurement_step(*, measurement_id: int, queue: str) -> str:
    """One Celery step of a batch measurement served from ``queue``: do the next phase if it
    belongs to this queue, then send the one after to its queue. An endpoint whose call for
    one attempt keeps failing fails the measurement with a reason naming it (the curator may
    retry it from the page); other failed calls are asked again after a pause."""
    measurement = Measurement.objects.get(pk=measurement_id)
    phase = next_phase(measurement)
    if phase is None:
        return measurement.state
    if (phase == "solve") != (queue == "default"):
        enqueue(measurement_id, phase=phase)
        return f"rerouted to {phase}"
    try:
        _, outcome = measurement_advance(measurement_id=measurement_id)
    except Exception as exc:  # recorded on the measurement; the curator may retry it
        measurement_fail(measurement, reason=f"{phase} failed: {errors.describe(exc)}")
        return MeasurementState.FAILED
    measurement.refresh_from_db()
    if outcome is not None and outcome.failing_endpoints:
        names = ", ".join(repr(n) for n in outcome.failing_endpoints)
        measurement_fail(
            measurement,
            reason=f"panel endpoint {names} keeps failing ({outcome.last_failure})",
        )
        return MeasurementState.FAILED
    after = next_phase(measurement)
    if after == "solve":
        failures = max(
            (a.details.get("infra_failures", 0) for a in measurement.runs.filter(verdict="IE")),
            default=0,
        )
        enqueue(measurement_id, phase="solve", countdown=RETRY_BACKOFF_S * max(1, failures))
    elif after == "judge":
        enqueue(measurement_id, phase="judge")
    return after or measurement.state
