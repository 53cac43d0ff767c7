"""The two cooperating agents that build a candidate's scoring environment, as pure logic.

The paper's test-case agent and verifier agent cross-validate each other's outputs until they
agree. Here the test-case agent (roles ``test_agent`` to write, ``test_review`` to review)
writes the generator; the verifier agent (``verifier_agent`` / ``verifier_review``) writes the
verifier, the baseline and the weak solution. Every round (``frontiersmith/stages/build.py``),
the agents a defect was named against (both in round 1) write or revise their programs, then
each agent reviews the other's: it calls tools that RUN programs in the sandbox and answers
with a verdict that accepts the other's programs or names one defect, citing a tool result as
evidence. The loop ends when both accept (then the fixed-rule checks of ``environment.py`` are
the final gate) or after the round bound.

The project's LLM client sends no ``tools`` / reads no ``tool_calls`` (chat-completions text
only), so the tools are a structured JSON action protocol in the reply, one fenced ```json
object per reply, either

    {"tools": [{"tool": "run_generator", "seed": 1},
               {"tool": "run_solution", "program": "baseline", "seed": 1},
               {"tool": "run_verifier", "seed": 1, "program": "baseline"},
               {"tool": "run_verifier", "input": "3 5\\n...", "output": "not an answer"}]}

(BenchForge runs them and answers with their results, ids T1, T2, ...) or a verdict

    {"verdict": "accept"}
    {"verdict": "defect", "program": "verifier", "defect": "...", "evidence": ["T2"]}

A verdict counts only after at least one tool result, and a defect only when it names a program
of the other agent and cites results that exist; otherwise the agent is told why and asked
again, within ``REVIEW_STEPS`` replies per review.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from evolution.llm import ParseError
from evolution.llm.parsing import extract_json

from .formulation import ParseProblem

TEST, VERIFIER = "test", "verifier"
AGENTS = (TEST, VERIFIER)
# The programs each agent writes (and revises when a defect is named against them).
OWNS = {TEST: ("generator",), VERIFIER: ("verifier", "baseline", "weak")}
OWNER = {program: agent for agent, programs in OWNS.items() for program in programs}
WRITE_ROLE = {TEST: "test_agent", VERIFIER: "verifier_agent"}
REVIEW_ROLE = {TEST: "test_review", VERIFIER: "verifier_review"}
AGENT_LABEL = {TEST: "test-case agent", VERIFIER: "verifier agent"}
OTHER = {TEST: VERIFIER, VERIFIER: TEST}

TOOLS = ("run_generator", "run_solution", "run_verifier")
# BenchForge's bounds (the paper gives none): replies per review (tool requests, then the
# verdict), tool calls per reply, characters of a program's output shown back.
REVIEW_STEPS = 3
MAX_TOOLS = 4
SHOWN = 1500


@dataclass(frozen=True)
class ToolCall:
    tool: str
    seed: int | None = None  # the input is the generator's for this seed ...
    input: str | None = None  # ... or this literal text
    program: str | None = None  # run_solution: whose output; run_verifier: whose output
    output: str | None = None  # run_verifier: this literal output

    def args(self) -> dict:
        return {
            k: v
            for k, v in (
                ("seed", self.seed),
                ("input", self.input),
                ("program", self.program),
                ("output", self.output),
            )
            if v is not None
        }


@dataclass(frozen=True)
class Verdict:
    accept: bool
    program: str = ""
    defect: str = ""
    evidence: tuple[str, ...] = ()


@dataclass
class Action:
    """One reply of a reviewing agent: tool calls to run, or a verdict."""

    tools: list[ToolCall] = field(default_factory=list)
    verdict: Verdict | None = None


def solution_names(samples: int) -> tuple[str, ...]:
    return ("baseline", "weak", *(f"sample{i}" for i in range(samples)))


def _tool(raw, samples: int) -> ToolCall:
    if not isinstance(raw, dict):
        raise ParseProblem("each tool call must be a JSON object")
    name = raw.get("tool")
    if name not in TOOLS:
        raise ParseProblem(f"unknown tool {name!r} (tools: {', '.join(TOOLS)})")
    seed, text = raw.get("seed"), raw.get("input")
    if name == "run_generator" or text is None:
        if not isinstance(seed, int) or isinstance(seed, bool) or not 1 <= seed <= 10**6:
            raise ParseProblem(f"{name} needs an integer seed between 1 and 1000000")
        text = None
    elif not isinstance(text, str):
        raise ParseProblem(f"{name}: input must be text")
    else:
        seed = None
    program, output = raw.get("program"), raw.get("output")
    if name == "run_generator":
        return ToolCall(name, seed=seed)
    names = solution_names(samples)
    if name == "run_solution" or output is None:
        if program not in names:
            raise ParseProblem(f"{name}: program must be one of {', '.join(names)}")
        return ToolCall(name, seed=seed, input=text, program=program)
    if not isinstance(output, str):
        raise ParseProblem("run_verifier: output must be text")
    return ToolCall(name, seed=seed, input=text, output=output)


def parse_action(text: str, *, agent: str, samples: int, results: int) -> Action:
    """The reply's JSON action (``results``: tool results this review has so far, T1..Tn).
    ParseProblem says what is wrong; the agent is told and asked again."""
    try:
        data = extract_json(text or "")
    except ParseError as exc:
        raise ParseProblem(f"no JSON action in the answer: {exc}") from None
    if "verdict" in data:
        return Action(verdict=_verdict(data, agent=agent, results=results))
    tools = data.get("tools")
    if not isinstance(tools, list) or not tools:
        raise ParseProblem('the JSON action needs "tools" (a non-empty list) or "verdict"')
    if len(tools) > MAX_TOOLS:
        raise ParseProblem(f"at most {MAX_TOOLS} tool calls per reply")
    return Action(tools=[_tool(raw, samples) for raw in tools])


def _verdict(data: dict, *, agent: str, results: int) -> Verdict:
    if not results:
        raise ParseProblem("run at least one tool on the other agent's programs before a verdict")
    verdict = data.get("verdict")
    if verdict == "accept":
        return Verdict(accept=True)
    if verdict != "defect":
        raise ParseProblem('"verdict" must be "accept" or "defect"')
    theirs = OWNS[OTHER[agent]]
    program = data.get("program")
    if program not in theirs:
        raise ParseProblem(f"a defect names one of the other agent's programs: {', '.join(theirs)}")
    defect = str(data.get("defect") or "").strip()
    if not defect:
        raise ParseProblem('a defect needs a "defect" text')
    evidence = data.get("evidence")
    evidence = [evidence] if isinstance(evidence, str) else evidence
    valid = {f"T{i}" for i in range(1, results + 1)}
    cited = isinstance(evidence, list) and all(isinstance(e, str) for e in evidence)
    if not cited or not evidence or not set(evidence) <= valid:
        raise ParseProblem(
            'a defect cites its "evidence": tool result ids of this review '
            f"({', '.join(sorted(valid, key=lambda t: int(t[1:])))})"
        )
    return Verdict(False, program, defect[:1000], tuple(dict.fromkeys(evidence)))


def call_text(tool: str, args: dict) -> str:
    """A tool call as written in results and on pages: run_verifier(seed=1, output='x')."""
    shown = ", ".join(f"{k}={(v[:80] if isinstance(v, str) else v)!r}" for k, v in args.items())
    return f"{tool}({shown})"


def render_result(result: dict) -> str:
    """One tool result as the agent reads it."""
    head = f"{result['id']} {call_text(result['tool'], result['args'])} -> {result['status']}"
    lines = [head]
    for name in ("input", "output", "stdout", "stderr", "verdict"):
        value = result.get(name)
        if value:
            text = value if isinstance(value, str) else json.dumps(value)
            lines.append(f"{name}:\n```\n{text[:SHOWN].rstrip()}\n```")
    return "\n".join(lines)


def results_message(results: list[dict], *, steps_left: int) -> str:
    body = "\n\n".join(render_result(r) for r in results)
    more = (
        "You may request more tools or give your verdict."
        if steps_left > 1
        else "This is your last reply: give your verdict."
    )
    return f"Tool results:\n\n{body}\n\n{more} Answer with one ```json action."


def retry_message(problem: str, *, steps_left: int) -> str:
    last = " This is your last reply." if steps_left <= 1 else ""
    return f"Your action was not usable: {problem}. Answer with one ```json action.{last}"


def defect_text(agent: str, verdict: Verdict, results: list[dict]) -> str:
    """A named defect as the other agent (and the ledger) reads it: who, what, and the cited
    tool results in short."""
    cited = {r["id"]: r for r in results}
    shown = "; ".join(_short(cited[e]) for e in verdict.evidence if e in cited)
    return f"{AGENT_LABEL[agent]}: {verdict.defect} (evidence {shown})"[:1500]


def _what(result: dict) -> str:
    """A tool result's content on one line: the verdict, else the output, else the end of the
    error (where a traceback names the exception)."""
    verdict = result.get("verdict")
    if verdict:
        return ", ".join(f"{k}={v!r}" for k, v in verdict.items())[:160]
    if result.get("stdout"):
        return " ".join(result["stdout"].split())[:160]
    return " ".join((result.get("stderr") or "").split())[-160:]


def _short(result: dict) -> str:
    call = call_text(result["tool"], result["args"])
    return f"{result['id']} {call} -> {result['status']}: {_what(result)}"


def ledger_review(review: dict) -> dict:
    """What the ledger keeps of one review: tools with short results, the verdict, the calls."""
    return {
        "tools": [
            {
                "id": r["id"],
                "tool": r["tool"],
                "call": call_text(r["tool"], r["args"]),
                "args": {k: (v[:200] if isinstance(v, str) else v) for k, v in r["args"].items()},
                "status": r["status"],
                "result": _what(r),
            }
            for r in review["results"]
        ],
        "verdict": review["verdict"],
        "defect": review.get("defect", ""),
        "program": review.get("program", ""),
        "evidence": review.get("evidence", []),
        "problems": review.get("problems", []),
        "calls": review["calls"],
    }


def protocol(samples: int) -> str:
    """The tool protocol, as both review prompts state it."""
    names = ", ".join(solution_names(samples))
    return f"""Tools (BenchForge runs them in the sandbox and answers with their results, ids T1, T2, ...):
- {{"tool": "run_generator", "seed": N}}: the generator's input for seed N.
- {{"tool": "run_solution", "program": P, "seed": N}}: program P ({names}) on the
  generator's input for seed N (or "input": literal text instead of "seed").
- {{"tool": "run_verifier", "seed": N, "program": P}}: the verifier on P's output for that
  input; "output": literal text instead of "program" checks any output you choose.

Reply with ONE ```json block holding either {{"tools": [...]}} (at most {MAX_TOOLS} calls) or your
verdict once you have results: {{"verdict": "accept"}} when the other agent's programs are
right, or {{"verdict": "defect", "program": "<one of its programs>", "defect": "<what is wrong>",
"evidence": ["T1"]}} citing the tool results that show it. You have {REVIEW_STEPS} replies."""
