"""Stage ``build``: the scoring environment. The test-case generator, the verifier, the
baseline and the weak solution are written by four separate model calls (so an error of one is
not copied into another), each program is validated on its own and the verifier against the
baseline and the weak solution (pure logic in ``engine/environment.py``); only the programs a
check blames are asked again at the next attempt, the others are kept. Once they converge the
score vectors run in the sandbox and the execution divergence is measured
(``engine/divergence.py``)."""

from __future__ import annotations

from dataclasses import replace

from evolution import sandbox
from evolution.llm import fanout, mark_unparsable
from evolution.llm.errors import BudgetExhausted, LLMError
from evolution.sandbox import scoring
from evolution.streams.errors import SandboxFailure
from evolution.streams.kinds import unit_transition

from ..engine import divergence, environment, formulation, prompts
from ..engine.environment import COMPONENTS, LABEL, WRITER_ROLE
from ..models import CandidateDecision, CandidateStage, FrontierCandidate
from .common import KIND_NAME, Action, Ctx, _decide, _key

KEPT = ("kept", "passed")


def _feedback(part: dict) -> str:
    if part.get("state") not in ("failed", "unparsable"):
        return ""
    lines = "\n".join(f"- {p}" for p in part.get("problems", []))
    return f"\nYour previous answer failed these checks:\n{lines}\nFix this.\n"


def _ask(ctx: Ctx, c: FrontierCandidate, name: str, attempt: int, part: dict) -> tuple[str, int]:
    """One program from its own writer: its own prompt, its own call, its own feedback."""
    template = prompts.load(WRITER_ROLE[name])
    values = {"statement": c.statement, "feedback": _feedback(part)}
    if name == "generator":
        values["solutions"] = (
            "\n\n".join(f"```python\n{code}```" for code in c.solutions[:3] if code)
            or "(none usable)"
        )
    else:
        values["direction"] = c.direction
    return ctx.chat(
        ctx.fc.solver_endpoint,
        template.messages(**values),
        template=template,
        key=f"{_key(c)};attempt={attempt}",
        temperature=ctx.settings.solver_temperature,
    )


def _measure(outcome, verdict) -> environment.Measured:
    M = environment.Measured
    if outcome.status != "OK":
        return M(None, f"{outcome.status}: {outcome.stderr.strip()[-200:]}", "run")
    if verdict is None:
        return M(None, "no verifier", "unverified")
    if not verdict.ok:
        return M(None, f"verifier failed: {verdict.message}", "verifier")
    if not verdict.feasible:
        return M(None, f"infeasible: {verdict.message}", "infeasible")
    return M(verdict.objective)


def _build(ctx: Ctx, action: Action) -> None:
    """One attempt at the scoring environment: the programs not yet kept are asked for (each
    by its own call), everything runs sandboxed, ``environment.check`` finds the disagreements
    and ``environment.blame`` the programs to rewrite. Converged: the score vectors and
    execution divergence are stored. Out of attempts: dropped, the reason naming which
    program failed and which passed its checks."""
    c = FrontierCandidate.objects.get(pk=action.candidate_id)
    s = ctx.settings
    attempt = c.build_attempts + 1
    parts = {name: dict(part) for name, part in (c.build_parts or {}).items()}
    programs = {
        name: getattr(c, name)
        for name in COMPONENTS
        if parts.get(name, {}).get("state") in KEPT and getattr(c, name)
    }
    # Asked already in this attempt (a retried step): not asked twice.
    pending = [
        name
        for name in COMPONENTS
        if name not in programs and parts.get(name, {}).get("attempt") != attempt
    ]
    fresh: dict[str, str] = {}
    failure: Exception | None = None
    # The writers are independent calls: asked side by side (fan-out setting, the solver
    # endpoint's limit), their answers handled in the components' order.
    answers = fanout.fan_out(
        [lambda n=name: _ask(ctx, c, n, attempt, parts.get(n, {})) for name in pending],
        ctx.solver_width(),
        return_exceptions=True,
    )
    for name, answer in zip(pending, answers, strict=True):
        if isinstance(answer, BudgetExhausted):
            failure = answer  # stops the step once what did arrive is kept
            continue
        if isinstance(answer, LLMError):
            failure = failure or answer
            continue
        if isinstance(answer, BaseException):
            raise answer
        text, call_id = answer
        try:
            code = environment.parse_blocks(text, (name,))[name]
        except formulation.ParseProblem as exc:
            mark_unparsable(call_id, str(exc))
            parts[name] = _part(attempt, call_id, "unparsable", [str(exc)])
            continue
        programs[name] = fresh[name] = code
        parts[name] = _part(attempt, call_id, "kept", [])
    # Keep what did arrive before anything else can fail (a call, the sandbox): a retry of
    # this step asks only the calls that failed.
    FrontierCandidate.objects.filter(pk=c.pk, build_attempts=c.build_attempts).update(
        build_parts=parts, **fresh
    )
    if failure is not None:
        raise failure

    findings, tests, matrix, m = _run_environment(ctx, c, programs)
    blamed = environment.blame(findings, c.build_ledger)
    for name, problems in blamed.items():
        parts.setdefault(name, _part(attempt, None, "kept", []))
        parts[name].update(state="failed", problems=problems)
    unparsable = {
        name: part["problems"]
        for name, part in parts.items()
        if part.get("state") == "unparsable" and part.get("attempt") == attempt
    }
    missing = [name for name in COMPONENTS if name not in programs]
    converged = not findings and not missing
    if converged:
        for name in COMPONENTS:
            parts[name].update(state="passed", problems=[])
    entry = {
        "attempt": attempt,
        # Written in this attempt (a retried step included the answers it had kept).
        "asked": [n for n in COMPONENTS if parts.get(n, {}).get("attempt") == attempt],
        "problems": [f"{LABEL[n]}: {p}" for n, ps in unparsable.items() for p in ps]
        + [f.text for f in findings],
        "checks": sorted({f.check for f in findings}),
        "blame": {**blamed, **unparsable},
        "tests": m,
    }
    fields = {
        "build_attempts": attempt,
        "build_ledger": [*c.build_ledger, entry],
        "build_parts": parts,
        **fresh,
    }
    if converged:
        fields.update(
            tests=tests,
            score_matrix=matrix,
            execution_divergence=divergence.execution_divergence(matrix),
            score_spread=_spread(matrix),
        )
    stored = FrontierCandidate.objects.filter(pk=c.pk, build_attempts=c.build_attempts)
    if converged:
        unit_transition(
            KIND_NAME,
            stored,
            source=CandidateStage.BUILDING,
            target=CandidateStage.EXECUTED,
            **fields,
        )
    else:
        stored.update(**fields)
    if not converged and attempt >= s.max_build_attempts:
        _decide(c.pk, CandidateDecision.NOT_CONVERGED, _not_converged(attempt, parts))


def _part(attempt: int, call_id: int | None, state: str, problems: list[str]) -> dict:
    return {"attempt": attempt, "call_id": call_id, "state": state, "problems": problems}


def _not_converged(attempt: int, parts: dict) -> str:
    failing = [
        f"{LABEL[n]} ({parts[n]['state'] if n in parts else 'never written'}): "
        + "; ".join(parts.get(n, {}).get("problems", []))
        for n in COMPONENTS
        if parts.get(n, {}).get("state") not in KEPT
    ]
    kept = [LABEL[n] for n in COMPONENTS if parts.get(n, {}).get("state") in KEPT]
    reason = f"scoring environment not converged after {attempt} attempt(s): " + " | ".join(failing)
    if kept:
        reason += f". Kept (no check blamed them): {', '.join(kept)}"
    return reason[:3900]


def _spread(matrix: list[list[float]]) -> float | None:
    means = [sum(row) / len(row) for row in matrix if row]
    return (max(means) - min(means)) if len(means) >= 2 else None


def _run_environment(ctx: Ctx, c: FrontierCandidate, programs: dict):
    """Run what this attempt has (a missing program leaves its checks out): the generator's
    inputs, then baseline, weak and sampled solutions on them, then the verifier on their
    outputs and on garbage. Returns (findings, tests, score matrix, m)."""
    s, limits = ctx.settings, ctx.limits
    if "generator" not in programs:
        return [], [], [], None
    generated = sandbox.run_batch(
        programs["generator"],
        [f"{seed}\n" for seed in range(1, s.tests_per_candidate + 1)],
        harness="stdio",
        limits=limits,
    )
    problems = []
    inputs: list[str] = []
    for seed, outcome in enumerate(generated, 1):
        if outcome.status != "OK" or not outcome.stdout.strip():
            problems.append(
                f"generator seed {seed}: {outcome.status} {outcome.stderr.strip()[-200:]}".strip()
            )
        elif outcome.stdout in inputs:
            problems.append(f"generator seed {seed}: duplicate input")
        else:
            inputs.append(outcome.stdout)
    if not inputs:
        findings = [environment.Finding("generator", p) for p in problems] or [
            environment.Finding("generator", "the generator produced no input")
        ]
        return findings, [], [], 0
    sample_codes = [code for code in c.solutions if code]
    named = [(n, programs[n]) for n in ("baseline", "weak") if n in programs]
    named += [(f"sample{i}", code) for i, code in enumerate(sample_codes)]
    runs = {
        name: sandbox.run_batch(code, inputs, harness="stdio", limits=limits)
        for name, code in named
    }
    for name in ("baseline", "weak"):
        for t, outcome in enumerate(runs.get(name, ())):
            if outcome.status == "OK" and not outcome.stdout.strip():
                # An empty answer is a failure of the program, not the verifier's business.
                runs[name][t] = replace(outcome, status="EMPTY", stderr="printed nothing")
    by_slot: dict = {}
    garbage: list[str] = []
    if "verifier" in programs:
        documents, slots = [], []
        for name, outcomes in runs.items():
            for t, outcome in enumerate(outcomes):
                if outcome.status == "OK":
                    slots.append((name, t))
                    documents.append({"input": inputs[t], "output": outcome.stdout})
        garbage_docs = [{"input": inputs[0], "output": g} for g in environment.GARBAGE_OUTPUTS]
        verdicts = scoring.verify(
            programs["verifier"], documents + garbage_docs, limits=scoring.verifier_limits(limits)
        )
        if any(v.message.startswith("SE:") for v in verdicts):
            raise SandboxFailure("the sandbox failed while running the verifier")
        by_slot = dict(zip(slots, verdicts[: len(documents)], strict=True))
        for v in verdicts[len(documents) :]:
            if v.ok and not v.feasible:
                garbage.append("rejected")
            elif v.ok:
                garbage.append("accepted as feasible")
            else:
                garbage.append(f"crashed: {v.message}")

    def measured(name):
        if name not in runs:
            return None
        return [_measure(o, by_slot.get((name, t))) for t, o in enumerate(runs[name])]

    obs = environment.Observations(
        direction=c.direction,
        tests=len(inputs),
        baseline=measured("baseline"),
        weak=measured("weak"),
        samples=[measured(f"sample{i}") for i in range(len(sample_codes))],
        garbage_verdicts=garbage,
        generator_problems=problems,
    )
    findings = environment.check(obs, min_spread=s.min_objective_spread)
    if findings or "baseline" not in programs or "verifier" not in programs:
        return findings, [], [], len(inputs)
    matrix = [
        [
            scoring.relative_score(m.objective, b.objective, c.direction)
            if m.objective is not None
            else 0.0
            for m, b in zip(sample, obs.baseline, strict=True)
        ]
        for sample in obs.samples
    ]
    tests = [
        {"input": inputs[t], "baseline_output": runs["baseline"][t].stdout}
        for t in range(len(inputs))
    ]
    return findings, tests, matrix, len(inputs)
