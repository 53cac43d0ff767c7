"""Stage ``build``: generator and verifier built against each other (pure logic in
``engine/environment.py``), the score vectors run in the sandbox, the execution divergence
measured (``engine/divergence.py``)."""

from __future__ import annotations

from evolution import sandbox
from evolution.llm import fanout, mark_unparsable
from evolution.sandbox import scoring
from evolution.streams.errors import SandboxFailure

from ..engine import divergence, environment, formulation, prompts
from ..models import CandidateDecision, CandidateStage, FrontierCandidate
from .common import Action, Ctx, _decide, _key


def _feedback(c: FrontierCandidate) -> str:
    if not c.build_ledger:
        return ""
    last = c.build_ledger[-1]
    lines = "\n".join(f"- {p}" for p in last.get("problems", []))
    return f"\nThe previous attempt disagreed with its counterpart:\n{lines}\nFix this.\n"


def _measure(outcome, verdict) -> environment.Measured:
    if outcome.status != "OK":
        return environment.Measured(None, f"{outcome.status}: {outcome.stderr.strip()[-200:]}")
    if not verdict.ok:
        return environment.Measured(None, f"verifier failed: {verdict.message}")
    if not verdict.feasible:
        return environment.Measured(None, f"infeasible: {verdict.message}")
    return environment.Measured(verdict.objective)


def _build(ctx: Ctx, action: Action) -> None:
    """One round of the test-case generator and verifier built against each other: both are
    (re)written with the other's disagreements, everything runs sandboxed, ``environment.check``
    decides. Converged: the score vectors and execution divergence are stored. Out of
    attempts: dropped."""
    c = FrontierCandidate.objects.get(pk=action.candidate_id)
    s = ctx.settings
    attempt = c.build_attempts + 1
    samples = (
        "\n\n".join(f"```python\n{code}```" for code in c.solutions[:3] if code) or "(none usable)"
    )
    entry: dict = {"attempt": attempt, "problems": []}
    tw, vw = prompts.load("test_writer"), prompts.load("verifier_writer")
    feedback = _feedback(c)
    # The two writers are independent calls: asked side by side.
    (tw_text, tw_call), (vw_text, vw_call) = fanout.fan_out(
        [
            lambda: ctx.chat(
                ctx.fc.solver_endpoint,
                tw.messages(statement=c.statement, solutions=samples, feedback=feedback),
                template=tw,
                key=f"{_key(c)};attempt={attempt}",
                temperature=ctx.settings.solver_temperature,
            ),
            lambda: ctx.chat(
                ctx.fc.solver_endpoint,
                vw.messages(statement=c.statement, direction=c.direction, feedback=feedback),
                template=vw,
                key=f"{_key(c)};attempt={attempt}",
                temperature=ctx.settings.solver_temperature,
            ),
        ],
        ctx.solver_width(),
    )
    programs: dict[str, str] = {}
    for text, call_id, names in (
        (tw_text, tw_call, environment.TEST_BLOCKS),
        (vw_text, vw_call, environment.VERIFIER_BLOCKS),
    ):
        try:
            programs.update(environment.parse_blocks(text, names))
        except formulation.ParseProblem as exc:
            mark_unparsable(call_id, str(exc))
            entry["problems"].append(str(exc))
    converged = False
    tests: list[dict] = []
    matrix: list[list[float]] = []
    if not entry["problems"]:
        converged, tests, matrix = _run_environment(ctx, c, programs, entry)
    fields = {
        "build_attempts": attempt,
        "build_ledger": [*c.build_ledger, entry],
        **{k: programs.get(k, "") for k in ("generator", "verifier", "baseline", "weak")},
    }
    if converged:
        fields.update(
            tests=tests,
            score_matrix=matrix,
            execution_divergence=divergence.execution_divergence(matrix),
            score_spread=_spread(matrix),
            stage=CandidateStage.EXECUTED,
        )
    FrontierCandidate.objects.filter(pk=c.pk, build_attempts=c.build_attempts).update(**fields)
    if not converged and attempt >= s.max_build_attempts:
        _decide(
            c.pk,
            CandidateDecision.NOT_CONVERGED,
            f"test generator and verifier did not agree after {attempt} attempt(s): "
            + "; ".join(entry["problems"])[:1500],
        )


def _spread(matrix: list[list[float]]) -> float | None:
    means = [sum(row) / len(row) for row in matrix if row]
    return (max(means) - min(means)) if len(means) >= 2 else None


def _run_environment(ctx: Ctx, c: FrontierCandidate, programs: dict, entry: dict):
    s, limits = ctx.settings, ctx.limits
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
        entry["problems"] = problems or ["the generator produced no input"]
        return False, [], []
    sample_codes = [code for code in c.solutions if code]
    runs = {
        name: sandbox.run_batch(code, inputs, harness="stdio", limits=limits)
        for name, code in [
            ("baseline", programs["baseline"]),
            ("weak", programs["weak"]),
            *((f"sample{i}", code) for i, code in enumerate(sample_codes)),
        ]
    }
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
    null = scoring.Verdict(ok=False, message="not run")

    def measured(name):
        return [_measure(o, by_slot.get((name, t), null)) for t, o in enumerate(runs[name])]

    garbage = []
    for v in verdicts[len(documents) :]:
        if v.ok and not v.feasible:
            garbage.append("rejected")
        elif v.ok:
            garbage.append("accepted as feasible")
        else:
            garbage.append(f"crashed: {v.message}")
    obs = environment.Observations(
        direction=c.direction,
        tests=len(inputs),
        baseline=measured("baseline"),
        weak=measured("weak"),
        samples=[measured(f"sample{i}") for i in range(len(sample_codes))],
        garbage_verdicts=garbage,
        generator_problems=problems,
    )
    entry["problems"] = environment.check(obs, min_spread=s.min_objective_spread)
    entry["tests"] = len(inputs)
    if entry["problems"]:
        return False, [], []
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
    return True, tests, matrix
