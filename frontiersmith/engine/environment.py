"""The test-case generator and verifier, built against each other until they agree.

A build answer carries labelled fenced blocks: ```generator (prints one test input for
``--seed N``), ```verifier (the scoring contract of ``evolution.sandbox.scoring``),
```baseline (the baseline solution s*, stdin to stdout) and ```weak (a deliberately worse
feasible solution, the reference point of the ordering check). ``check`` is pure: it takes
what the sandbox measured and returns the disagreements; an empty list means convergence.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from evolution.llm import ParseError
from evolution.llm.parsing import fenced_blocks

from .formulation import ParseProblem

TEST_BLOCKS = ("generator",)
VERIFIER_BLOCKS = ("verifier", "baseline", "weak")
# Outputs a verifier must reject gracefully (feasible: false), not crash on.
GARBAGE_OUTPUTS = ("", "not an answer\n", "-1 -1 -1\nnan inf\n", "\x00\x01\x02\n")


def parse_blocks(text: str, names: tuple[str, ...]) -> dict[str, str]:
    """{name: code} for each labelled block; ParseProblem naming the missing ones."""
    try:
        blocks = fenced_blocks(text or "")
    except ParseError as exc:
        raise ParseProblem(str(exc)) from None
    found = {b.language: b.text.strip("\n") + "\n" for b in blocks if b.language in names}
    missing = [n for n in names if n not in found]
    if missing:
        raise ParseProblem(f"missing ```{'/'.join(missing)} block(s) in the answer")
    return found


@dataclass
class Measured:
    """One objective per (solution, test): a float when feasible, None when infeasible or the
    run failed (with ``why``)."""

    objective: float | None
    why: str = ""


@dataclass
class Observations:
    direction: str
    tests: int
    baseline: list[Measured]
    weak: list[Measured]
    samples: list[list[Measured]]  # one list per sampled solution
    garbage_verdicts: list[str]  # "rejected" | "accepted" | "crashed: ..." per garbage output
    generator_problems: list[str] = field(default_factory=list)


def _better(a: float, b: float, direction: str) -> bool:
    return a > b if direction == "max" else a < b


def objective_spread(values: list[float]) -> float:
    """(max - min) / max |value| over one test's feasible objectives; 0 when fewer than two."""
    if len(values) < 2:
        return 0.0
    scale = max(abs(v) for v in values)
    return (max(values) - min(values)) / scale if scale > 0 else 0.0


def check(obs: Observations, *, min_spread: float) -> list[str]:
    """The verifier checks: the generator's inputs are usable, the baseline is feasible
    everywhere (feasibility lives in the verifier, so an infeasible baseline means one of the
    two is wrong), crashes and unparsable outputs are handled, relative-quality judgements are
    not inverted (the weak solution never beats the baseline) and scores do not collapse into
    a narrow band."""
    problems = list(obs.generator_problems)
    for t, m in enumerate(obs.baseline):
        if m.objective is None:
            problems.append(f"baseline infeasible on test {t + 1}: {m.why}")
        elif m.objective <= 0:
            problems.append(
                f"baseline objective {m.objective:g} on test {t + 1}: the score formula needs "
                "positive objectives"
            )
    for output, verdict in zip(GARBAGE_OUTPUTS, obs.garbage_verdicts, strict=True):
        if verdict != "rejected":
            problems.append(f"verifier on unparsable output {output!r}: {verdict}")
    inverted = [
        t + 1
        for t, (w, b) in enumerate(zip(obs.weak, obs.baseline, strict=True))
        if w.objective is not None
        and b.objective is not None
        and _better(w.objective, b.objective, obs.direction)
    ]
    if inverted:
        problems.append(
            "relative quality inverted: the weak solution beats the baseline on test(s) "
            + ", ".join(map(str, inverted))
        )
    if obs.tests and not problems:
        spreads = []
        for t in range(obs.tests):
            values = [
                m.objective
                for m in [obs.baseline[t], obs.weak[t], *(s[t] for s in obs.samples)]
                if m.objective is not None
            ]
            spreads.append(objective_spread(values))
        mean_spread = sum(spreads) / len(spreads)
        if mean_spread < min_spread:
            problems.append(
                f"scores collapse into a narrow band: mean relative objective spread "
                f"{mean_spread:.4f} < {min_spread}"
            )
    return problems
