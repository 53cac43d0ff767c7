"""Scoring an open-ended submission with a verifier program, sandboxed.

Closed-ended problems are judged pass / fail (``judge``); an open-ended problem instead has a
*verifier* that checks feasibility and measures an objective, and a baseline solution s*
whose output on each test is stored as that test's expected output. The score of a
submission s on a test t is (FrontierSmith, section "verifier reward")::

    V(s, t) = max(0, sigma * (O(s, t) - O(s*, t)) / max(O(s, t), O(s*, t)))

with sigma = +1 to maximise and -1 to minimise. It is 0 when s crashes, times out, prints
something the verifier cannot parse or that is infeasible, and when the denominator is not
positive (the formula is only meaningful for positive objectives; a verifier must say so).

Verifier contract (the problem's ``comparison["verifier"]``): a Python program that reads ONE
JSON document ``{"input": <test input>, "output": <program output>}`` on stdin and prints ONE
JSON object ``{"feasible": true|false, "objective": <number>, "message": <text>}``. Feasibility
is the verifier's job (budgets, constraints, syntax of the answer). Both the submission and
the verifier run through ``run_batch``, so both are sandboxed.

    from evolution.sandbox.scoring import score, relative_score
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field

from .service import run_batch
from .types import Limits, TestSpec

DIRECTIONS = {"max": 1, "min": -1}

# Per-test statuses: OK (scored), the run statuses of the submission (TLE, MLE, RE, OLE, CE),
# INF (the verifier found the output infeasible or unparsable), VERR (the verifier itself
# failed on this output: it counts against the submission, which scores 0, and is reported so
# a curator can see a broken verifier), NOBASE (the baseline output could not be measured: a
# defect of the problem, never of the submission) and SE (the sandbox failed).
OK, INFEASIBLE, VERIFIER_ERROR, NO_BASELINE, SE = "OK", "INF", "VERR", "NOBASE", "SE"


def relative_score(objective: float, baseline: float, direction: str) -> float:
    """V for one test from the two objective values (see the module docstring)."""
    sigma = _sigma(direction)
    denominator = max(objective, baseline)
    if not (math.isfinite(objective) and math.isfinite(baseline)) or denominator <= 0:
        return 0.0
    return max(0.0, sigma * (objective - baseline) / denominator)


def _sigma(direction: str) -> int:
    try:
        return DIRECTIONS[direction]
    except KeyError:
        raise ValueError(f"direction must be 'max' or 'min', got {direction!r}") from None


@dataclass
class Verdict:
    """What the verifier said about one output."""

    ok: bool  # the verifier ran and answered in the contract's form
    feasible: bool = False
    objective: float | None = None
    message: str = ""


@dataclass
class TestScore:
    __test__ = False

    score: float
    status: str
    objective: float | None = None
    baseline: float | None = None
    time_ms: float = 0.0
    detail: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class ScoreResult:
    """``scores`` has one entry per test, in order; ``mean`` is their average (0 to 1)."""

    scores: list[TestScore] = field(default_factory=list)
    compile_error: str = ""

    @property
    def values(self) -> list[float]:
        return [s.score for s in self.scores]

    @property
    def mean(self) -> float:
        return sum(self.values) / len(self.values) if self.scores else 0.0

    @property
    def sandbox_failed(self) -> bool:
        return any(s.status == SE for s in self.scores)

    def to_dict(self) -> dict:
        return {
            "mean": self.mean,
            "scores": [s.to_dict() for s in self.scores],
            "compile_error": self.compile_error,
        }


def parse_verdict(stdout: str) -> Verdict:
    """The verifier's answer, or ``ok=False`` when it is not the contract's JSON object."""
    lines = [line for line in stdout.strip().splitlines() if line.strip()]
    if not lines:
        return Verdict(ok=False, message="the verifier printed nothing")
    try:
        data = json.loads(lines[-1])
    except ValueError:
        return Verdict(ok=False, message=f"not JSON: {lines[-1][:200]}")
    if not isinstance(data, dict) or not isinstance(data.get("feasible"), bool):
        return Verdict(ok=False, message="the verifier's JSON has no boolean 'feasible'")
    message = str(data.get("message", ""))[:300]
    if not data["feasible"]:
        return Verdict(ok=True, feasible=False, message=message)
    objective = data.get("objective")
    if isinstance(objective, bool) or not isinstance(objective, int | float):
        return Verdict(ok=False, message="a feasible verdict needs a numeric 'objective'")
    if not math.isfinite(objective):
        return Verdict(ok=False, message="the objective is not finite")
    return Verdict(ok=True, feasible=True, objective=float(objective), message=message)


def verify(verifier: str, documents: list[dict], *, limits: Limits, backend=None) -> list[Verdict]:
    """Run the verifier (sandboxed) on each ``{"input", "output"}`` document."""
    if not documents:
        return []
    outcomes = run_batch(
        verifier,
        [json.dumps(d) for d in documents],
        harness="stdio",
        limits=limits,
        backend=backend,
    )
    verdicts = []
    for outcome in outcomes:
        if outcome.status == "SE":
            verdicts.append(Verdict(ok=False, message=f"SE: {outcome.stderr[-300:]}"))
        elif outcome.status != "OK":
            verdicts.append(
                Verdict(ok=False, message=f"verifier {outcome.status}: {outcome.stderr[-300:]}")
            )
        else:
            verdicts.append(parse_verdict(outcome.stdout))
    return verdicts


def verifier_limits(limits: Limits) -> Limits:
    # The verifier parses whole outputs of large tests: never tighter than the submission.
    return Limits(
        time_s=max(limits.time_s, 10.0),
        memory_mb=max(limits.memory_mb, 256),
        max_output_bytes=limits.max_output_bytes,
    )


def score_outputs(
    outputs: list,
    tests: list[TestSpec],
    *,
    verifier: str,
    direction: str,
    limits: Limits,
    backend=None,
) -> list[TestScore]:
    """Score already-produced outcomes (``RunOutcome`` per test, same order as ``tests``)
    against the baseline outputs stored in ``tests[i].output``. One verifier batch covers the
    baselines and the submission's outputs."""
    _sigma(direction)
    ran = [i for i, o in enumerate(outputs) if o.status == "OK"]
    documents = [{"input": t.input, "output": t.output} for t in tests]
    documents += [{"input": tests[i].input, "output": outputs[i].stdout} for i in ran]
    verdicts = verify(verifier, documents, limits=verifier_limits(limits), backend=backend)
    baselines, mine = verdicts[: len(tests)], dict(zip(ran, verdicts[len(tests) :], strict=True))
    scores = []
    for i, outcome in enumerate(outputs):
        base = baselines[i]
        if outcome.status != "OK":
            status = SE if outcome.status == "SE" else outcome.status
            detail = outcome.stderr.strip()[-300:]
            scores.append(TestScore(0.0, status, time_ms=outcome.time_ms, detail=detail))
            continue
        verdict = mine[i]
        if verdict.message.startswith("SE:"):
            scores.append(TestScore(0.0, SE, detail=verdict.message))
        elif not base.ok or not base.feasible:
            detail = f"baseline output not measurable: {base.message}"
            scores.append(TestScore(0.0, NO_BASELINE, time_ms=outcome.time_ms, detail=detail))
        elif not verdict.ok:
            scores.append(
                TestScore(
                    0.0,
                    VERIFIER_ERROR,
                    baseline=base.objective,
                    time_ms=outcome.time_ms,
                    detail=verdict.message,
                )
            )
        elif not verdict.feasible:
            scores.append(
                TestScore(
                    0.0,
                    INFEASIBLE,
                    baseline=base.objective,
                    time_ms=outcome.time_ms,
                    detail=verdict.message,
                )
            )
        else:
            scores.append(
                TestScore(
                    relative_score(verdict.objective, base.objective, direction),
                    OK,
                    objective=verdict.objective,
                    baseline=base.objective,
                    time_ms=outcome.time_ms,
                )
            )
    return scores


def score(
    code: str,
    tests: list[TestSpec],
    *,
    verifier: str,
    direction: str,
    limits: Limits,
    harness: str = "stdio",
    entry_point: str = "",
    backend=None,
) -> ScoreResult:
    """Run ``code`` on every test (sandboxed), then score each output with the verifier.
    Raises ValueError for a bad direction or no tests; a sandbox failure shows as status SE."""
    _sigma(direction)
    tests = list(tests)
    if not tests:
        raise ValueError("scoring needs at least one test")
    outcomes = run_batch(
        code,
        [t.input for t in tests],
        harness=harness,
        limits=limits,
        entry_point=entry_point,
        backend=backend,
    )
    compile_error = outcomes[0].stderr if outcomes and outcomes[0].status == "CE" else ""
    scores = score_outputs(
        outcomes, tests, verifier=verifier, direction=direction, limits=limits, backend=backend
    )
    return ScoreResult(scores=scores, compile_error=compile_error)


def is_scored(comparison: dict | None) -> bool:
    """True for an open-ended problem's comparison dict ``{"mode": "score", ...}``."""
    return bool(comparison) and comparison.get("mode") == "score"


def validate_scoring(comparison: dict) -> dict:
    """``{"mode": "score", "verifier": code, "direction": "max"|"min"}``; ValueError names
    the bad field."""
    unknown = set(comparison) - {"mode", "verifier", "direction", "rule"}
    if unknown:
        raise ValueError(f"unknown scoring option(s): {', '.join(sorted(unknown))}")
    if comparison.get("mode") != "score":
        raise ValueError("a scoring comparison has mode 'score'")
    if not isinstance(comparison.get("verifier"), str) or not comparison["verifier"].strip():
        raise ValueError("a scoring comparison needs the verifier's Python source")
    _sigma(comparison.get("direction"))
    return dict(comparison)
