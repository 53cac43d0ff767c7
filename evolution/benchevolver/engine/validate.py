"""Validation (Section 3.3, Appendix C).

The LiveCodeBench column (stdin and call-based tasks alike): brute-force triangulation. A
statement-only brute-force solver (run through the task's harness) and a statement-only output
oracle vote with the reference on the public examples; agreement passes, each disagreement
pattern names the artefact to repair. The vetted brute force then runs on hidden tests where
feasible (its time-outs mean infeasible, never wrong); a concrete disagreement is a
counterexample for repair. All repairs share one budget (max_candidate_repairs).

The SciCode column (SciCode, HumanEval): best-of-N statement faithfulness. N independent
solutions written from the statement run against the candidate's tests; the best pass rate must
reach the floor, else the statement is revised (bounded), against the same tests.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from evolution.llm.parsing import ParseError, extract_code, extract_json

from . import prompts
from .types import StageError

REFERENCE = "reference"
BRUTE_FORCE = "brute_force"
STATEMENT = "statement"

TARGET_HINTS = {
    REFERENCE: "the brute force and the oracle agree with each other but not with the reference",
    BRUTE_FORCE: "the reference and the oracle agree but the brute force does not",
    STATEMENT: "the statement does not determine the answer the reference computes",
}


@dataclass
class Vote:
    agree: bool
    target: str | None  # what to repair when not agreeing
    per_example: list[dict] = field(default_factory=list)
    # Examples where only the oracle differed: two executed programs outvote one prediction.
    oracle_overruled: int = 0


def vote(
    reference: list[str],
    brute: list[str | None],
    oracle: list[str | None],
    same: Callable,
    *,
    inputs: list[str] | None = None,
) -> Vote:
    """Three-way vote on the public examples. ``None`` means the witness gave no usable output.

    When the reference and the brute force agree and only the oracle (a model predicting the
    output, never executed) differs, the example agrees: two independent executed programs
    outvote one prediction. It is recorded (``oracle_overruled``), not sent to statement repair.
    """
    rows = []
    overruled = 0
    pattern = {REFERENCE: 0, BRUTE_FORCE: 0, STATEMENT: 0}
    for index, ref in enumerate(reference):
        b = brute[index] if index < len(brute) else None
        o = oracle[index] if index < len(oracle) else None

        # same(actual, expected[, input]): with ``inputs`` the output contract may need the
        # example's input (a checker program does).
        def eq(actual, expected, index=index):
            if inputs is None:
                return same(actual, expected)
            return same(actual, expected, inputs[index])

        rb = b is not None and eq(b, ref)
        ro = o is not None and eq(o, ref)
        bo = b is not None and o is not None and eq(b, o)
        if rb and ro:
            verdict = "agree"
        elif ro and not rb:
            verdict, pattern[BRUTE_FORCE] = "brute force disagrees", pattern[BRUTE_FORCE] + 1
        elif bo and not rb:
            verdict, pattern[REFERENCE] = "reference disagrees", pattern[REFERENCE] + 1
        elif rb and not ro:
            verdict = "oracle overruled (reference and brute force agree)"
            overruled += 1
        else:
            verdict, pattern[STATEMENT] = "all differ", pattern[STATEMENT] + 1
        rows.append(
            {
                "example": index + 1,
                "reference": ref,
                "brute_force": b,
                "oracle": o,
                "verdict": verdict,
            }
        )
    disagreements = {k: v for k, v in pattern.items() if v}
    if not disagreements:
        return Vote(agree=True, target=None, per_example=rows, oracle_overruled=overruled)
    # The most frequent pattern decides; ties prefer fixing the cheapest, most local artefact.
    order = [BRUTE_FORCE, REFERENCE, STATEMENT]
    target = max(order, key=lambda k: (disagreements.get(k, 0), -order.index(k)))
    return Vote(agree=False, target=target, per_example=rows, oracle_overruled=overruled)


@dataclass
class HiddenCheck:
    agree: bool
    checked: int
    infeasible: int
    counterexample: dict | None


def hidden_check(tests: list[dict], brute_outcomes: list, same: Callable) -> HiddenCheck:
    """Brute force vs reference outputs on hidden tests. TLE/MLE of the brute force = infeasible.
    ``same(actual, expected, input)`` decides under the task's output contract."""
    checked = infeasible = 0
    for test, outcome in zip(tests, brute_outcomes, strict=True):
        if outcome.status in ("TLE", "MLE", "OLE"):
            infeasible += 1
            continue
        checked += 1
        if outcome.status != "OK" or not same(outcome.stdout, test["output"], test["input"]):
            return HiddenCheck(
                agree=False,
                checked=checked,
                infeasible=infeasible,
                counterexample={
                    "tier": test["tier"],
                    "input": test["input"][:2000],
                    "reference_output": test["output"][:2000],
                    "brute_force_output": (
                        outcome.stdout if outcome.status == "OK" else outcome.status
                    )[:2000],
                },
            )
    return HiddenCheck(agree=True, checked=checked, infeasible=infeasible, counterexample=None)


def brute_force_messages(*, statement: str, harness: str, entry_point: str, starter_code: str = ""):
    template = prompts.load("brute_force")
    return template.messages(
        statement=statement,
        code_contract=prompts.code_contract(harness, entry_point, starter_code),
        starter_block=prompts.starter_block(starter_code, harness),
    ), template


def oracle_messages(
    *, statement: str, examples: list[str], harness: str = "stdio", entry_point: str = ""
):
    template = prompts.load("oracle")
    listing = "\n".join(f"{i}.\n```\n{e.rstrip()}\n```" for i, e in enumerate(examples, start=1))
    return template.messages(
        statement=statement,
        examples=listing,
        output_format=prompts.output_format(harness, entry_point),
    ), template


def parse_brute_force(text: str) -> str:
    try:
        return extract_code(text, language="python").rstrip() + "\n"
    except ParseError as exc:
        raise StageError(f"brute-force answer unparsable: {exc}")


def parse_oracle(text: str, count: int) -> list[str | None]:
    try:
        outputs = extract_json(text).get("outputs")
    except ParseError:
        return [None] * count
    if not isinstance(outputs, list):
        return [None] * count
    result: list[str | None] = [str(o) if o is not None else None for o in outputs[:count]]
    return result + [None] * (count - len(result))


def repair_messages(
    *,
    target: str,
    statement: str,
    reference: str,
    brute_force: str,
    evidence: str,
    harness: str = "stdio",
    entry_point: str = "",
    starter_code: str = "",
):
    template = prompts.load("repair")
    return (
        template.messages(
            code_contract=prompts.code_contract(harness, entry_point, starter_code, reference),
            target=target,
            target_hint=TARGET_HINTS[target],
            statement=statement,
            reference=reference.rstrip(),
            brute_force=(brute_force or "(none)").rstrip(),
            evidence=evidence,
        ),
        template,
    )


def parse_repair(text: str, target: str) -> str:
    """The repaired artefact: code for reference / brute force, Markdown for the statement."""
    try:
        if target == STATEMENT:
            statement = str(extract_json(text).get("statement", "")).strip()
            if not statement:
                raise StageError("repair answer lacks the fixed statement")
            return statement
        return extract_code(text, language="python").rstrip() + "\n"
    except ParseError as exc:
        raise StageError(f"repair answer unparsable: {exc}")


def faithfulness_passes(best_pass_rate: float, floor: float) -> bool:
    return best_pass_rate >= floor
