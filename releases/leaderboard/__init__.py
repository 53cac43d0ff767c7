"""Leaderboard evaluation: a model (an endpoint, or uploaded solutions) on a frozen release.

``run_execute`` is idempotent per (run, item, sample): phase 1 asks the model for every
missing sample and stores its code with an empty verdict; phase 2 judges every unjudged
sample on ALL the item's tests (hidden included) in the sandbox. A killed worker loses at
most the samples in flight; a rerun does only what is missing. A model call that fails for
transport or provider reasons (after the client's retries) is an infrastructure error
(verdict "IE"): asked again up to ``INFRA_TRIES`` rounds, never counted in a pass rate, and
counted in the summary's ``infra_errors``; a run whose endpoint still fails fails with a
reason naming it, and running it again resumes. ``run_summary`` turns the
samples into pass@1 / pass@k with seeded bootstrap intervals, breakdowns and contamination,
all over the pass/fail items; open-ended (scored) items are summarised apart, by their
verifier's score (Avg@k, Best@k, each item's mean score), never as passes.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import date

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connections, transaction
from django.utils import timezone
from django.utils.text import slugify

from evolution import jobs
from evolution.judging import attempts
from evolution.judging.difficulty import solver_code, solver_messages
from evolution.llm import CallContext, LLMClient, LLMError
from evolution.sandbox import scoring

from .. import public_record
from ..models import (
    LeaderboardRun,
    LeaderboardRunFigures,
    LeaderboardSample,
    Release,
    ReleaseItem,
    ReleaseState,
    ReleaseTest,
    RunSource,
    RunState,
)
from . import board
from .stats import bootstrap_mean, pass_at_k

log = logging.getLogger(__name__)
MAX_UPLOAD_SAMPLES = 100
SCORED = "SC"  # verdict of a sample of an open-ended item: its score is in details["score"]


class SandboxUnavailable(RuntimeError):
    """The sandbox itself failed (verdict SE): not the model's fault, so the run fails."""


# --- creating runs -------------------------------------------------------------------------------


def _require_frozen(release: Release) -> None:
    if release.state == ReleaseState.DRAFT:
        raise ValidationError("Freeze the release before evaluating models on it.")


def run_create(
    *,
    release: Release,
    endpoint,
    samples: int = 4,
    label: str = "",
    bootstrap_seed: int = 0,
    by=None,
) -> LeaderboardRun:
    """A queued evaluation of ``endpoint``; the caller enqueues ``tasks.leaderboard_run``."""
    _require_frozen(release)
    if not 1 <= samples <= 100:
        raise ValidationError({"samples": "Samples per problem must be between 1 and 100."})
    return LeaderboardRun.objects.create(
        release=release,
        endpoint=endpoint,
        source=RunSource.ENDPOINT,
        label=(label or endpoint.name).strip()[:200],
        model_release_date=endpoint.release_date,
        samples_per_problem=samples,
        bootstrap_seed=bootstrap_seed,
        created_by=by,
    )


def _parse_upload(release: Release, content: str) -> dict[int, list[str]]:
    """{item id: [code, ...]} from JSONL lines ``{"question_id", "code_list"}`` (LiveCodeBench's
    own output form) or ``{"question_id", "output_list"}`` (raw answers, code extracted).
    ``question_id`` is the item's public id (the LiveCodeBench export uses the same)."""
    items = dict(release.items.values_list("public_id", "pk"))
    out: dict[int, list[str]] = {}
    # split("\n"), not splitlines(): U+2028 and friends are valid inside JSON strings (code
    # comments, statements) and are not line ends in JSONL.
    limit = settings.MAX_SOLUTION_BYTES
    for number, line in enumerate(content.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValidationError(f"line {number}: not JSON ({exc.msg})")
        if not isinstance(row, dict):
            raise ValidationError(f"line {number}: must be an object")
        qid = row.get("question_id")
        if qid not in items:
            raise ValidationError(f"line {number}: question_id {qid!r} is not in this release")
        if items[qid] in out:
            raise ValidationError(f"line {number}: question_id {qid!r} appears twice")
        if "code_list" in row:
            codes = row["code_list"]
            raw = False
        elif "output_list" in row:
            codes = row["output_list"]
            raw = True
        else:
            raise ValidationError(f"line {number}: needs code_list or output_list")
        if not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
            raise ValidationError(f"line {number}: code_list/output_list must be a list of strings")
        if not 1 <= len(codes) <= MAX_UPLOAD_SAMPLES:
            raise ValidationError(f"line {number}: give 1 to {MAX_UPLOAD_SAMPLES} solutions")
        field = "output_list" if raw else "code_list"
        for index, code in enumerate(codes):
            if len(code) > limit or len(code.encode("utf-8")) > limit:
                raise ValidationError(
                    f"line {number}: {field}[{index}] is larger than {limit} bytes "
                    "(MAX_SOLUTION_BYTES)"
                )
        out[items[qid]] = [solver_code(c)[0] if raw else c for c in codes]
    if not out:
        raise ValidationError("The file holds no solutions.")
    return out


@transaction.atomic
def run_create_from_upload(
    *,
    release: Release,
    label: str,
    content: str,
    model_release_date: date | None = None,
    bootstrap_seed: int = 0,
    by=None,
) -> LeaderboardRun:
    """A run whose samples are externally produced solutions; judging still happens here.
    A problem missing from the file scores 0 (its samples count as absent)."""
    _require_frozen(release)
    if not label.strip():
        raise ValidationError({"label": "Name the model these solutions come from."})
    codes = _parse_upload(release, content)
    n = max(len(c) for c in codes.values())
    run = LeaderboardRun.objects.create(
        release=release,
        source=RunSource.UPLOAD,
        label=label.strip()[:200],
        model_release_date=model_release_date,
        samples_per_problem=n,
        bootstrap_seed=bootstrap_seed,
        created_by=by,
    )
    with public_record.writing():  # samples are the scoring service's (migration 0013)
        LeaderboardSample.objects.bulk_create(
            LeaderboardSample(
                run=run, item_id=item_id, sample_index=i, code=code, verdict="" if code else "NC"
            )
            for item_id, item_codes in codes.items()
            for i, code in enumerate(item_codes)
        )
    return run


# --- executing runs ---------------------------------------------------------------------------


def _replay_key(item: ReleaseItem, model: str, index: int) -> str:
    """For a replayed endpoint, the key under which the evolution engine recorded this
    model's attempt at the same problem, so a demo leaderboard replays those answers. A
    problem no BenchEvolver campaign measured (another kind's) has a key of its own, by its
    method and title: keyed by its lineage's seed, it would replay the answers to that seed."""
    prov = item.provenance or {}
    record = item.record
    if record.get("kind") == "synthesized":
        return (
            f"item={record['method']}/{slugify(record.get('title') or item.public_id)};"
            f"model={model};attempt={index};role=solver"
        )
    seed = item.problem.lineage_root or item.problem
    seed_key = seed.origin_id or seed.public_id
    round_no = (prov.get("candidate") or {}).get("round", 0) if record.get("kind") != "seed" else 0
    return f"seed={seed_key};round={round_no};model={model};attempt={index};role=solver"


@dataclass(frozen=True)
class Answer:
    """A model's answer to the solver prompt of one problem. ``failure`` is set when the call
    itself failed (transport or provider, after the client's retries): then there is no code
    and the caller decides what the failure counts as."""

    code: str
    details: dict
    failure: LLMError | None = None


def solver_answer(endpoint, record: dict, *, key: str) -> Answer:
    """Ask ``endpoint`` the solver prompt for ``record`` (a ``benchforge-problem/1`` record:
    the same prompt the campaign's panel gets, starter code included) and extract its code."""
    messages, template = solver_messages(
        statement=record["statement"],
        harness=record["harness"],
        entry_point=record["entry_point"],
        starter_code=record.get("starter_code") or "",
    )
    details: dict = {}
    try:
        answer = LLMClient(endpoint, CallContext()).chat_template(
            messages, template, role="solver", replay_key=key
        )
    except LLMError as exc:
        return Answer(code="", details={"llm_error": str(exc)[:500]}, failure=exc)
    code, problem = solver_code(answer.content)
    details["call_id"] = answer.call_id
    if problem:
        details["parse_error"] = problem
    return Answer(code=code, details=details)


# --- failed model calls: infrastructure errors, asked again, never counted --------------------

INFRA_ERROR = "IE"  # the verdict of a sample whose model call failed (transport or provider)
INFRA_TRIES = 3  # rounds of asking a failed sample again within one execution


def infra_entry(exc: LLMError) -> dict:
    """One failed call in a sample's history: its HTTP status (None: no HTTP answer), message,
    ledger row and time."""
    return {
        "status": getattr(exc, "status", None),
        "message": str(exc)[:500],
        "call_id": exc.call_id,
        "at": timezone.now().isoformat(timespec="seconds"),
    }


def sample_fields(answer: Answer, earlier_details: dict | None = None) -> dict:
    """The sample row's {"code", "verdict", "details"} for ``answer``. A failed call is an
    infrastructure error (verdict "IE": asked again, never counted in a pass rate), its status
    and message appended to the sample's history (``details["infra_errors"]``, kept once an
    answer arrives); an answer without code is a failed sample ("NC"); code waits for the
    judge (""). Shared by the leaderboard and the gate's independent evaluation."""
    history = list((earlier_details or {}).get("infra_errors", []))
    if answer.failure is not None:
        history.append(infra_entry(answer.failure))
        return {"code": "", "verdict": INFRA_ERROR, "details": {"infra_errors": history[-10:]}}
    details = dict(answer.details)
    if history:
        details["infra_errors"] = history
    return {"code": answer.code, "verdict": "" if answer.code else "NC", "details": details}


def still_failing(failing: dict[str, list[dict]], *, what: str) -> str:
    """The reason work cannot complete: ``failing`` maps an endpoint's name to the details of
    its samples still failing for infrastructure reasons; "" when none does."""
    parts = []
    for name, details in sorted(failing.items()):
        last = ((details[-1] if details else {}).get("infra_errors") or [{}])[-1]
        parts.append(
            f"{what} {name!r} keeps failing ({len(details)} sample(s) still unanswered after "
            f"{INFRA_TRIES} rounds; last: {attempts.infra_error_text(last)})"
        )
    return "; ".join(parts)


def _generate(run: LeaderboardRun, item: ReleaseItem, index: int, earlier=None) -> None:
    """Ask for one sample (missing, or ``earlier``: an infrastructure error) and store it."""
    endpoint = run.endpoint
    if endpoint.is_replay:
        key = _replay_key(item, endpoint.model, index)
    else:
        key = f"release={run.release_id};item={item.public_id};sample={index}"
    answer = solver_answer(endpoint, item.record, key=key)
    fields = sample_fields(answer, earlier.details if earlier is not None else None)
    if earlier is not None:
        with public_record.writing():
            LeaderboardSample.objects.filter(pk=earlier.pk, verdict=INFRA_ERROR).update(**fields)
        return
    with contextlib.suppress(IntegrityError), public_record.writing():
        LeaderboardSample.objects.create(run=run, item=item, sample_index=index, **fields)


def _ask_missing(run: LeaderboardRun, items: dict) -> None:
    """Every sample not answered yet (missing, or an infrastructure error), in up to
    ``INFRA_TRIES`` rounds."""
    ask_missing_rounds(
        LeaderboardSample.objects.filter(run=run),
        unit_field="item",
        state_field="verdict",
        units=items.values(),
        per_unit=run.samples_per_problem,
        ask=lambda item, i, earlier: _generate(run, item, i, earlier),
        width=run.endpoint.concurrency_limit,
    )


def ask_missing_rounds(samples, *, unit_field, state_field, units, per_unit, ask, width) -> None:
    """Ask every sample of ``units`` (``per_unit`` each) that ``samples`` lacks or holds as an
    infrastructure error (``state_field`` is ``INFRA_ERROR``), side by side on ``width``
    threads, in up to ``INFRA_TRIES`` rounds; ``ask(unit, index, earlier_sample_or_None)``.
    The code leaderboard's samples and the question leaderboard's answers both go this way."""
    units = list(units)
    for _ in range(INFRA_TRIES):
        existing = {
            (getattr(s, f"{unit_field}_id"), s.sample_index): s
            for s in samples.all().only(
                "id", f"{unit_field}_id", "sample_index", state_field, "details"
            )
        }
        jobs_ = []
        for unit in units:
            for i in range(per_unit):
                earlier = existing.get((unit.pk, i))
                if earlier is not None and getattr(earlier, state_field) != INFRA_ERROR:
                    continue
                jobs_.append(lambda u=unit, i=i, x=earlier: ask(u, i, x))
        if not jobs_:
            return
        parallel(jobs_, width=width)


def judge_job(code: str, record: dict, tests: list):
    """The judge's job for code answering a pass/fail problem ``record``: every test in
    ``tests`` (objects with ``input`` and ``output``), the record's harness, limits and
    output contract, stopping at the first failure."""
    from evolution import sandbox
    from evolution.sandbox.batch import JudgeJob

    return JudgeJob(
        code=code,
        tests=[sandbox.TestSpec(input=t.input, output=t.output) for t in tests],
        harness=record["harness"],
        limits=sandbox.Limits(
            time_s=float(record["time_limit_s"]),
            memory_mb=int(record["memory_mb"]),
            max_output_bytes=settings.SANDBOX_MAX_OUTPUT_BYTES,
        ),
        entry_point=record["entry_point"],
        comparison=record.get("comparison") or {},
        stop_on_first_failure=True,
    )


def _judge_job(sample: LeaderboardSample, tests_by_item: dict[int, list], items: dict):
    """The judge's job for a sample of a pass/fail item (its tests, harness, limits)."""
    return judge_job(sample.code, items[sample.item_id].record, tests_by_item[sample.item_id])


def sandbox_reason(result) -> str:
    """What the sandbox said of its own failure in a judge result (verdict SE)."""
    reasons = [t.diff for t in result.tests if t.verdict == "SE" and t.diff]
    return (reasons[0] if reasons else "no reason given")[:500]


def _store_verdict(sample: LeaderboardSample, result) -> None:
    if isinstance(result, ValueError):
        raise result
    if result.verdict == "SE":
        raise SandboxUnavailable(
            f"sandbox failure while judging sample {sample.pk}: {sandbox_reason(result)}"
        )
    with public_record.writing():
        LeaderboardSample.objects.filter(pk=sample.pk, verdict="").update(
            verdict=result.verdict, passed_tests=result.passed, total_tests=result.total
        )


def _judge(sample: LeaderboardSample, tests_by_item: dict[int, list], items: dict) -> None:
    from evolution import sandbox

    item = items[sample.item_id]
    record = item.record
    if scoring.is_scored(record.get("comparison")):
        specs = [sandbox.TestSpec(input=t.input, output=t.output) for t in tests_by_item[item.pk]]
        _score(sample, record, specs)
        return
    job = _judge_job(sample, tests_by_item, items)
    result = sandbox.judge(
        job.code,
        job.tests,
        harness=job.harness,
        limits=job.limits,
        entry_point=job.entry_point,
        comparison=job.comparison,
        stop_on_first_failure=True,
    )
    _store_verdict(sample, result)


def _judge_all(pending: list, tests_by_item: dict[int, list], items: dict, width: int) -> None:
    """Every pending sample: open-ended items through their verifier, side by side; pass/fail
    samples as ONE workload for the judge (spread over the sandboxes, results in order, each
    stored as it arrives)."""
    from evolution.sandbox.batch import judge_many

    def is_scored(sample) -> bool:
        return scoring.is_scored(items[sample.item_id].record.get("comparison"))

    scored = [s for s in pending if is_scored(s)]
    plain = [s for s in pending if not is_scored(s)]
    if scored:
        parallel([lambda s=s: _judge(s, tests_by_item, items) for s in scored], width=width)
    jobs = (_judge_job(s, tests_by_item, items) for s in plain)
    again = []
    for sample, result in zip(plain, judge_many(jobs, workers=width), strict=True):
        if not isinstance(result, ValueError) and result.verdict == "SE":
            again.append(sample)  # the sandbox's failure, not the model's: judged once more
            continue
        _store_verdict(sample, result)
    for sample in again:
        log.warning("sample %s: sandbox failure, judged again alone", sample.pk)
        _judge(sample, tests_by_item, items)


def _score(sample: LeaderboardSample, record: dict, specs: list) -> None:
    """An open-ended item: the verifier scores every test (0 to 1, see
    evolution.sandbox.scoring); the sample keeps the per-test scores and their mean. Verdict
    "SC" (scored); ``passed_tests`` counts the tests with a positive score."""
    from evolution import sandbox

    comparison = record["comparison"]
    result = scoring.score(
        sample.code,
        specs,
        verifier=comparison["verifier"],
        direction=comparison["direction"],
        harness=record["harness"],
        entry_point=record["entry_point"],
        limits=sandbox.Limits(
            time_s=float(record["time_limit_s"]),
            memory_mb=int(record["memory_mb"]),
            max_output_bytes=settings.SANDBOX_MAX_OUTPUT_BYTES,
        ),
    )
    if result.sandbox_failed:
        raise SandboxUnavailable(f"sandbox failure while scoring sample {sample.pk}")
    details = {
        **(sample.details or {}),
        "score": result.mean,
        "scores": [t.score for t in result.scores],
        "statuses": [t.status for t in result.scores],
    }
    with public_record.writing():
        LeaderboardSample.objects.filter(pk=sample.pk, verdict="").update(
            verdict=SCORED,
            passed_tests=sum(1 for t in result.scores if t.score > 0),
            total_tests=len(result.scores),
            details=details,
        )


def parallel(jobs, width: int) -> None:
    """Run ``jobs`` on ``width`` threads, re-raising the first failure; each thread's database
    connections are closed when its job ends."""

    def wrap(job):
        try:
            return job()
        finally:
            # Pool threads die with the pool: their connections must not outlive them.
            connections.close_all()

    with ThreadPoolExecutor(max_workers=max(1, width)) as pool:
        for future in [pool.submit(wrap, job) for job in jobs]:
            future.result()  # re-raise the first failure


def run_execute(*, run_id: int) -> LeaderboardRun:
    """Generate and judge whatever is missing, then summarise. Safe to call again at any
    point; a completed run, or one a live execution holds, is returned as is
    (``evolution.jobs``)."""
    return execute_run(
        LeaderboardRun,
        run_id,
        label="leaderboard run",
        load=lambda run: {
            i.pk: i for i in run.release.items.select_related("problem__lineage_root")
        },
        work=_answer_and_judge,
        samples=lambda run: LeaderboardSample.objects.filter(run=run, verdict=INFRA_ERROR),
        what="endpoint",
        summarise=lambda run: run_summary(run=run),
    )


def _answer_and_judge(run: LeaderboardRun, items: dict) -> None:
    if run.source == RunSource.ENDPOINT:
        _ask_missing(run, items)
    pending = list(LeaderboardSample.objects.filter(run=run, verdict=""))
    tests_by_item: dict[int, list] = defaultdict(list)
    for t in ReleaseTest.objects.filter(item_id__in={s.item_id for s in pending}).order_by(
        "item_id", "tier", "ordinal"
    ):
        tests_by_item[t.item_id].append(t)
    width = int(getattr(settings, "SANDBOX_MAX_PARALLEL", 2))
    # Judge what was answered even when the endpoint is down: resuming then only asks.
    _judge_all(pending, tests_by_item, items, width)


def execute_run(model, run_id: int, *, label, load, work, samples, what, summarise):
    """One execution of a run of ``model`` (a code leaderboard run or a question run): claim
    it (``evolution.jobs``; a completed run, or one a live execution holds, is returned as is),
    then, while its heartbeat beats, ``work(run, load(run))`` asks and grades what is missing
    (``load`` reads what the run is over: its failure is not the run's). The run
    fails when ``samples(run)`` (its samples still failing for infrastructure reasons) is not
    empty, naming the ``what`` endpoint, or when ``work`` raised; it completes otherwise, with
    ``summarise(run)``."""
    token = jobs.claim(model, run_id)
    if token is None:
        return model.objects.get(pk=run_id)
    run = model.objects.select_related("release", "endpoint").get(pk=run_id)
    with jobs.beating(model, run_id, token):
        loaded = load(run)
        try:
            work(run, loaded)
            failing = list(samples(run).order_by("id").values_list("details", flat=True))
            if failing:
                reason = still_failing({run.endpoint.name: failing}, what=what)
                jobs.finish(model, run_id, token, state=RunState.FAILED, error=reason[:2000])
                return model.objects.get(pk=run_id)
        except Exception as exc:
            log.exception("%s %s failed", label, run_id)
            jobs.finish(
                model,
                run_id,
                token,
                state=RunState.FAILED,
                error=f"{exc.__class__.__name__}: {exc}"[:2000],
            )
            return model.objects.get(pk=run_id)
        record_completion(model, run_id, token, summary=summarise(run))
    return model.objects.get(pk=run_id)


def record_completion(model, run_id: int, token: str, *, summary: dict) -> bool:
    """The scoring service completes a run it holds (``token``) with the ``summary`` it
    computed from the run's samples: the one write of a run's result (for a leaderboard run,
    with the figures the public board reads, ``LeaderboardRunFigures``). The database refuses
    it from anywhere else, and for a run that is not running (migration 0013): a completed
    run never changes, a failed one is run again, never edited."""
    with public_record.writing():
        figures = None
        if model is LeaderboardRun:
            # What the public board reads, apart from the summary's rows per problem
            # (board.figures_of), written before the run completes: never after (0015).
            top, problems = board.figures_of(summary)
            figures, _ = LeaderboardRunFigures.objects.update_or_create(
                run_id=run_id, defaults={"summary": top, "problems": problems}
            )
        done = jobs.finish(
            model,
            run_id,
            token,
            state=RunState.COMPLETED,
            summary=summary,
            finished_at=timezone.now(),
        )
        if figures is not None and not done:
            figures.delete()
        return done


# --- summarising -----------------------------------------------------------------------------------


def k_values(n: int) -> list[int]:
    """1, then powers of two up to n, then n itself."""
    ks, k = [1], 2
    while k <= n:
        ks.append(k)
        k *= 2
    if n not in ks:
        ks.append(n)
    return ks


def contaminated(created_on, model_release_date: date | None) -> bool | None:
    """True when the model came out after the task existed (it may have trained on it);
    None when the model's date is unknown. A task without a date counts as contaminated:
    no date window can vouch for it."""
    if model_release_date is None:
        return None
    if created_on is None:
        return True
    return model_release_date > created_on.date()


def answer_score(verdict: str, details: dict | None) -> float:
    """A judged sample's verifier score on an open-ended item: its mean over the tests when
    it was scored, else 0 (an answer without code, a failed compile)."""
    return (details or {}).get("score", 0.0) if verdict == SCORED else 0.0


def scored_public_ids(release: Release) -> set[str]:
    """Public ids of the release's open-ended (scored) items: measured by their verifier's
    score, never passed or failed, so never in a pass@1."""
    return {
        public_id
        for public_id, comparison in release.items.values_list("public_id", "record__comparison")
        if scoring.is_scored(comparison)
    }


def run_summary(*, run: LeaderboardRun) -> dict:
    """Scores of a run from its judged samples (see the module docstring).

    pass@1, pass@k, the breakdowns and the after-release pass@1 are over the pass/fail items
    only: an open-ended (scored) item has no pass, so counting its samples as failures would
    pull a model that answers it perfectly below 100%. Its row in ``per_item`` says
    ``"scored": true`` with its answers (``n``), their mean verifier score (``score``: 0 to 1;
    an answer without code scores 0) and no pass count (``c`` and every ``pass`` are None);
    its Avg@k and Best@k are under ``score``."""
    counts: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    score_sums: dict[int, float] = defaultdict(float)
    failed_calls = 0
    for item_id, verdict, details in LeaderboardSample.objects.filter(run=run).values_list(
        "item_id", "verdict", "details"
    ):
        failed_calls += len((details or {}).get("infra_errors") or [])
        if verdict in ("", INFRA_ERROR):  # unjudged, or no answer yet: not a sample
            continue
        counts[item_id][0] += 1
        counts[item_id][1] += verdict == "AC"
        score_sums[item_id] += answer_score(verdict, details)
    items = list(run.release.items.order_by("position"))
    n_target = run.samples_per_problem
    ks = k_values(n_target)
    per_item = []
    for item in items:
        n, c = counts.get(item.pk, [0, 0])
        row = {
            "public_id": item.public_id,
            "origin": item.origin,
            "difficulty": item.difficulty or "unlabelled",
            "tags": item.tags,
            "n": n,
            "c": c,
            "contaminated": contaminated(item.created_on, run.model_release_date),
        }
        if scoring.is_scored(item.record.get("comparison")):
            row.update(
                {
                    "scored": True,
                    "c": None,
                    "score": score_sums[item.pk] / n if n else None,
                    "pass": {str(k): None for k in ks},
                }
            )
        else:
            row["pass"] = {
                str(k): (pass_at_k(n, c, k) if n >= k else (0.0 if n == 0 else None)) for k in ks
            }
        per_item.append(row)
    seed = run.bootstrap_seed
    # The pass/fail items: every pass@ figure is over these.
    graded = [r for r in per_item if not r.get("scored")]

    def estimate(rows, k="1"):
        values = [r["pass"][k] for r in rows if r["pass"][k] is not None]
        return bootstrap_mean(values, seed=seed).to_dict() if values else None

    breakdown: dict[str, dict] = {"origin": {}, "difficulty": {}, "tag": {}}
    for key in ("origin", "difficulty"):
        groups = defaultdict(list)
        for r in graded:
            groups[r[key]].append(r)
        breakdown[key] = {name: estimate(rows) for name, rows in sorted(groups.items())}
    tag_groups = defaultdict(list)
    for r in graded:
        for tag in r["tags"] or ["untagged"]:
            tag_groups[tag].append(r)
    breakdown["tag"] = {name: estimate(rows) for name, rows in sorted(tag_groups.items())}
    open_scores = _open_scores(run, items, ks, seed)
    flagged = [r for r in per_item if r["contaminated"]]
    clean = [r for r in graded if r["contaminated"] is False]
    return {
        "samples_per_problem": n_target,
        "k": ks,
        "problems": len(items),
        # pass@ figures are over the pass/fail problems; the scored ones are under "score".
        "pass_fail_problems": len(graded),
        "scored_problems": len(items) - len(graded),
        "missing": sum(1 for r in per_item if r["n"] == 0),
        # Model calls that failed (transport or provider) and were asked again: never a sample.
        "infra_errors": failed_calls,
        "pass": {str(k): estimate(graded, str(k)) for k in ks},
        "breakdown": breakdown,
        "contamination": {
            "model_release_date": run.model_release_date.isoformat()
            if run.model_release_date
            else None,
            "flagged": len(flagged),
            "flagged_items": [r["public_id"] for r in flagged],
            # The date-window filter: only items created after the model's release.
            "clean_pass1": estimate(clean),
        },
        "per_item": per_item,
        **({"score": open_scores} if open_scores else {}),
    }


def _open_scores(run: LeaderboardRun, items: list, ks: list[int], seed: int) -> dict | None:
    """Avg@k and Best@k over the open-ended items (FrontierSmith): per item, the mean and the
    best score of its first k samples (a missing or unjudged sample scores 0), then the mean
    over items with a seeded bootstrap interval. None when the release has no scored item."""
    open_items = [i for i in items if scoring.is_scored(i.record.get("comparison"))]
    if not open_items:
        return None
    by_item: dict[int, dict[int, float]] = defaultdict(dict)
    for item_id, index, verdict, details in LeaderboardSample.objects.filter(
        run=run, item__in=open_items
    ).values_list("item_id", "sample_index", "verdict", "details"):
        by_item[item_id][index] = answer_score(verdict, details)
    avg: dict[str, list[float]] = defaultdict(list)
    best: dict[str, list[float]] = defaultdict(list)
    per_item = []
    for item in open_items:
        scores = by_item.get(item.pk, {})
        row = {"public_id": item.public_id, "avg": {}, "best": {}}
        for k in ks:
            first = [scores.get(i, 0.0) for i in range(k)]
            row["avg"][str(k)] = sum(first) / k
            row["best"][str(k)] = max(first)
            avg[str(k)].append(row["avg"][str(k)])
            best[str(k)].append(row["best"][str(k)])
        per_item.append(row)
    return {
        "problems": len(open_items),
        "avg": {k: bootstrap_mean(v, seed=seed).to_dict() for k, v in avg.items()},
        "best": {k: bootstrap_mean(v, seed=seed).to_dict() for k, v in best.items()},
        "per_item": per_item,
    }
