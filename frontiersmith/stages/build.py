"""Stage ``build``: the scoring environment, built by two cooperating agents with tools
(``engine/agents.py``). One step is one round: the agents a defect was named against (both in
round 1) write or revise their programs (the test-case agent the generator; the verifier agent
the verifier, the baseline and the weak solution), then each agent reviews the other's
programs, running them in the sandbox through tool calls, and accepts them or names a defect
citing a tool result. When both accept, the fixed-rule checks (``engine/environment.py``) are
the final gate: passed, the score vectors run in the sandbox and the execution divergence is
measured (``engine/divergence.py``); failed, their findings go back to the blamed agent as the
next round's defects. No agreement after ``agent_rounds`` rounds (or ``max_build_attempts``
failed gates): the candidate is dropped, the reason naming the open defects. Every round is one
entry of the build ledger."""

from __future__ import annotations

import contextlib
from dataclasses import replace

from evolution import sandbox
from evolution.llm import fanout, mark_unparsable
from evolution.llm.errors import BudgetExhausted, LLMError
from evolution.sandbox import scoring
from evolution.streams.errors import SandboxFailure
from evolution.streams.kinds import unit_transition

from ..engine import agents, divergence, environment, formulation, prompts
from ..engine.environment import COMPONENTS, LABEL
from ..models import CandidateDecision, CandidateStage, FrontierCandidate
from .common import KIND_NAME, Action, Ctx, candidate_key, decide_candidate


def _revise(programs: dict, defects: dict, names: tuple[str, ...]) -> str:
    """The defects named against this agent's programs last round, with its current code."""
    mine = {n: defects[n] for n in names if defects.get(n)}
    if not mine:
        return ""
    lines = []
    for name, texts in mine.items():
        lines.append(f"Defects named against your {LABEL[name]}:")
        lines += [f"- {t}" for t in texts]
        if programs.get(name):
            lines.append(f"Your current {LABEL[name]}:\n```python\n{programs[name]}```")
    return "\n" + "\n".join(lines) + "\nFix them.\n"


def _write(ctx: Ctx, c: FrontierCandidate, agent: str, rnd: int, programs: dict, defects: dict):
    """One agent writes (round 1) or revises its programs: one call."""
    template = prompts.load(agents.WRITE_ROLE[agent])
    names = agents.OWNS[agent]
    values = {"statement": c.statement, "revise": _revise(programs, defects, names)}
    if agent == agents.TEST:
        values["solutions"] = (
            "\n\n".join(f"```python\n{code}```" for code in c.solutions[:3] if code)
            or "(none usable)"
        )
    else:
        values["direction"] = c.direction
        wanted = [n for n in names if n not in programs or defects.get(n)]
        values["blocks"] = (
            "Answer with one block for each of: "
            + ", ".join(f"```{n}" for n in wanted)
            + (" (your other programs are kept as they are)." if len(wanted) < len(names) else ".")
        )
    return ctx.chat(
        template.role,
        template.messages(**values),
        template,
        key=f"{candidate_key(c)};agent_round={rnd}",
        temperature=ctx.settings.solver_temperature,
    )


def _wanted(agent: str, programs: dict, defects: dict) -> tuple[str, ...]:
    return tuple(n for n in agents.OWNS[agent] if n not in programs or defects.get(n))


class _Tools:
    """The agents' tools: run the generator, a solution or the verifier in the sandbox. One
    reply's calls run together (one sandbox batch per program) and outcomes are cached for the
    round (a program on an input runs once, whoever asks)."""

    def __init__(self, ctx: Ctx, c: FrontierCandidate, programs: dict):
        self.limits = ctx.limits
        self.code = dict(programs)
        self.samples = [code for code in c.solutions if code]
        for i, code in enumerate(self.samples):
            self.code[f"sample{i}"] = code
        self.runs: dict[tuple[str, str], sandbox.RunOutcome] = {}
        self.verdicts: dict[tuple[str, str], scoring.Verdict] = {}

    def _batch(self, name: str, stdins: list[str]) -> None:
        todo = list(dict.fromkeys(i for i in stdins if (name, i) not in self.runs))
        if not todo:
            return
        outcomes = sandbox.run_batch(self.code[name], todo, harness="stdio", limits=self.limits)
        for stdin, outcome in zip(todo, outcomes, strict=True):
            if outcome.status == "SE":
                raise SandboxFailure(f"the sandbox failed while running the {name}")
            self.runs[name, stdin] = outcome

    def _ok(self, name: str, stdin: str) -> str | None:
        outcome = self.runs.get((name, stdin))
        return outcome.stdout if outcome is not None and outcome.status == "OK" else None

    def _input(self, call: agents.ToolCall) -> str | None:
        return call.input if call.input is not None else self._ok("generator", f"{call.seed}\n")

    def _output(self, call: agents.ToolCall, text: str) -> str | None:
        return call.output if call.output is not None else self._ok(call.program, text)

    def run_all(self, calls: list[agents.ToolCall], first: int) -> list[dict]:
        """Results of one reply's calls, ids T<first>, T<first + 1>, ..."""
        self._batch("generator", [f"{c.seed}\n" for c in calls if c.input is None])
        wanted: dict[str, list[str]] = {}
        for call in calls:
            text = self._input(call)
            if call.tool != "run_generator" and call.output is None and text is not None:
                wanted.setdefault(call.program, []).append(text)
        for name, stdins in wanted.items():
            self._batch(name, stdins)
        documents = []
        for call in calls:
            text = self._input(call)
            output = None if text is None else self._output(call, text)
            pair = (text, output)
            fresh = pair not in self.verdicts and pair not in documents
            if call.tool == "run_verifier" and output is not None and fresh:
                documents.append(pair)
        verdicts = scoring.verify(
            self.code["verifier"],
            [{"input": t, "output": o} for t, o in documents],
            limits=scoring.verifier_limits(self.limits),
        )
        if any(v.message.startswith("SE:") for v in verdicts):
            raise SandboxFailure("the sandbox failed while running the verifier")
        self.verdicts.update(zip(documents, verdicts, strict=True))
        return [self._result(call, f"T{first + i}") for i, call in enumerate(calls)]

    def _result(self, call: agents.ToolCall, tid: str) -> dict:
        result = {"id": tid, "tool": call.tool, "args": call.args()}
        text = call.input
        if text is None:
            generated = self.runs[("generator", f"{call.seed}\n")]
            if call.tool == "run_generator" or generated.status != "OK":
                prefix = "" if call.tool == "run_generator" else "no input: generator "
                return result | {
                    "status": prefix + generated.status,
                    "stdout": generated.stdout,
                    "stderr": generated.stderr.strip()[-300:],
                }
            text = generated.stdout
        result["input"] = text
        output = call.output
        if output is None:
            ran = self.runs[(call.program, text)]
            if call.tool == "run_solution" or ran.status != "OK":
                prefix = "" if call.tool == "run_solution" else f"no output: {call.program} "
                return result | {
                    "status": prefix + ran.status,
                    "stdout": ran.stdout,
                    "stderr": ran.stderr.strip()[-300:],
                }
            output = ran.stdout
        result["output"] = output
        verdict = self.verdicts[(text, output)]
        if not verdict.ok:
            return result | {"status": "CRASHED", "stderr": verdict.message}
        shown = {"feasible": verdict.feasible, "objective": verdict.objective}
        return result | {"status": "OK", "verdict": shown | {"message": verdict.message}}


def _review(ctx: Ctx, c: FrontierCandidate, agent: str, rnd: int, programs: dict, tools) -> dict:
    """One agent reviews the other's programs: replies with tool calls (run, answered with
    their results) until its verdict, at most ``agents.REVIEW_STEPS`` replies."""
    template = prompts.load(agents.REVIEW_ROLE[agent])
    samples = len(tools.samples)
    messages = template.messages(
        statement=c.statement,
        direction=c.direction,
        protocol=agents.protocol(samples),
        **{name: programs[name] for name in COMPONENTS},
    )
    results: list[dict] = []
    calls: list[int] = []
    problems: list[str] = []
    for step in range(1, agents.REVIEW_STEPS + 1):
        answer = ctx.chat(
            template.role,
            messages,
            template,
            key=f"{candidate_key(c)};agent_round={rnd};step={step}",
            temperature=ctx.settings.solver_temperature,
        )
        text, call_id = answer.content, answer.call_id
        calls.append(call_id)
        left = agents.REVIEW_STEPS - step
        try:
            act = agents.parse_action(text, agent=agent, samples=samples, results=len(results))
        except formulation.ParseProblem as exc:
            mark_unparsable(call_id, str(exc))
            problems.append(f"{agents.AGENT_LABEL[agent]} reply {step}: {exc}")
            reply = agents.retry_message(str(exc), steps_left=left)
        else:
            if act.verdict is not None:
                v = act.verdict
                review = {"verdict": "accept" if v.accept else "defect", "calls": calls}
                if not v.accept:
                    review.update(
                        program=v.program,
                        defect=v.defect,
                        evidence=list(v.evidence),
                        text=agents.defect_text(agent, v, results),
                    )
                return review | {"results": results, "problems": problems}
            new = tools.run_all(act.tools, len(results) + 1)
            results += new
            reply = agents.results_message(new, steps_left=left)
        messages = [
            *messages,
            {"role": "assistant", "content": text},
            {"role": "user", "content": reply},
        ]
    problems.append(f"{agents.AGENT_LABEL[agent]}: no verdict in {agents.REVIEW_STEPS} replies")
    return {"verdict": "none", "calls": calls, "results": results, "problems": problems}


def _parse_written(agent: str, text: str, wanted: tuple[str, ...]) -> dict[str, str]:
    """The programs in a writer's answer: every wanted one, plus any other of its own it
    chose to revise."""
    found = environment.parse_blocks(text, wanted)
    for name in agents.OWNS[agent]:
        if name not in found:
            with contextlib.suppress(formulation.ParseProblem):
                found |= environment.parse_blocks(text, (name,))
    return found


def _build(ctx: Ctx, action: Action) -> None:
    """One round of the two agents (see the module docstring). A retried step keeps the
    programs written in this round already; only its reviews are asked again."""
    c = FrontierCandidate.objects.get(pk=action.candidate_id)
    s = ctx.settings
    rnd = c.build_attempts + 1
    parts = {name: dict(part) for name, part in (c.build_parts or {}).items()}
    defects = (c.build_ledger[-1].get("blame") or {}) if c.build_ledger else {}
    programs = {name: getattr(c, name) for name in COMPONENTS if getattr(c, name)}
    writers = [
        agent
        for agent in agents.AGENTS
        if (wanted := _wanted(agent, programs, defects))
        and not all(parts.get(n, {}).get("attempt") == rnd for n in wanted)
    ]
    fresh: dict[str, str] = {}
    unparsable: dict[str, list[str]] = {}
    failure: Exception | None = None
    # The two writers are independent calls: asked side by side (the solver endpoint's limit).
    answers = fanout.fan_out(
        [lambda a=agent: _write(ctx, c, a, rnd, programs, defects) for agent in writers],
        ctx.solver_width(),
        return_exceptions=True,
    )
    for agent, answer in zip(writers, answers, strict=True):
        if isinstance(answer, BudgetExhausted):
            failure = answer  # stops the step once what did arrive is kept
            continue
        if isinstance(answer, LLMError):
            failure = failure or answer
            continue
        if isinstance(answer, BaseException):
            raise answer
        text, call_id = answer.content, answer.call_id
        wanted = _wanted(agent, programs, defects)
        try:
            written = _parse_written(agent, text, wanted)
        except formulation.ParseProblem as exc:
            mark_unparsable(call_id, str(exc))
            for name in wanted:
                parts[name] = _part(rnd, call_id, "unparsable", [str(exc)])
                unparsable[name] = [f"unparsable answer: {exc}"]
            continue
        for name, code in written.items():
            programs[name] = fresh[name] = code
            parts[name] = _part(rnd, call_id, "kept", [])
    # Keep what did arrive before anything else can fail (a call, the sandbox): a retry of
    # this step does not ask the writers that answered again.
    FrontierCandidate.objects.filter(pk=c.pk, build_attempts=c.build_attempts).update(
        build_parts=parts, **fresh
    )
    if failure is not None:
        raise failure

    missing = [name for name in COMPONENTS if name not in programs]
    reviews: dict[str, dict] = {}
    blame: dict[str, list[str]] = dict(unparsable)
    findings: list = []
    gate = None
    tests, matrix, m = [], [], None
    if not missing and not unparsable:
        tools = _Tools(ctx, c, programs)
        for agent in agents.AGENTS:
            reviews[agent] = _review(ctx, c, agent, rnd, programs, tools)
        for review in reviews.values():
            if review["verdict"] == "defect":
                blame.setdefault(review["program"], []).append(review["text"])
    agreed = bool(reviews) and all(r["verdict"] == "accept" for r in reviews.values())
    if agreed:
        # The final gate: the fixed-rule checks on the agreed programs.
        findings, tests, matrix, m = _run_environment(ctx, c, programs)
        gates = [e for e in c.build_ledger if e.get("gate")]
        for name, texts in environment.blame(findings, gates).items():
            blame.setdefault(name, []).extend(f"final gate: {t}" for t in texts)
        gate = "failed" if findings else "passed"
    converged = gate == "passed"
    for name in COMPONENTS:
        if name in parts and name in blame and name not in unparsable:
            parts[name].update(state="failed", problems=blame[name])
        elif name in parts and converged:
            parts[name].update(state="passed", problems=[])
    problems = [t for name in COMPONENTS for t in blame.get(name, [])]
    problems += [p for r in reviews.values() for p in r.get("problems", [])]
    if missing:
        problems.append("not written: " + ", ".join(LABEL[n] for n in missing))
    entry = {
        "attempt": rnd,
        # Written in this round (a retried step included the answers it had kept).
        "asked": [n for n in COMPONENTS if parts.get(n, {}).get("attempt") == rnd],
        "reviews": {agent: agents.ledger_review(r) for agent, r in reviews.items()},
        "agreed": agreed,
        "gate": gate,
        "problems": problems,
        "checks": sorted({f.check for f in findings}),
        "blame": {n: blame[n] for n in COMPONENTS if n in blame},
        "tests": m,
    }
    fields = {
        "build_attempts": rnd,
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
        return
    stored.update(**fields)
    failed_gates = sum(1 for e in fields["build_ledger"] if e.get("gate") == "failed")
    if rnd >= s.agent_rounds or failed_gates >= s.max_build_attempts:
        decide_candidate(
            c.pk, CandidateDecision.NOT_CONVERGED, _not_converged(rnd, failed_gates, entry)
        )


def _part(attempt: int, call_id: int | None, state: str, problems: list[str]) -> dict:
    return {"attempt": attempt, "call_id": call_id, "state": state, "problems": problems}


def _not_converged(rnd: int, failed_gates: int, last: dict) -> str:
    if last["gate"] == "failed":
        head = (
            f"the agreed scoring environment failed the fixed-rule checks {failed_gates} "
            f"time(s) in {rnd} round(s)"
        )
    else:
        head = f"the test-case agent and the verifier agent did not agree in {rnd} round(s)"
    reason = head + ": " + " | ".join(last["problems"] or ["no defect named"])
    blamed = set(last["blame"])
    kept = [LABEL[n] for n in COMPONENTS if n not in blamed]
    if kept and blamed:
        reason += f". Not blamed: {', '.join(kept)}"
    return reason[:3900]


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
