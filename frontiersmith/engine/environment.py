"""The scoring environment of a candidate: four programs and the fixed-rule checks that are
the final gate of their construction.

The programs are written by two cooperating agents (``agents.py``, run by
``stages/build.py``): the test-case agent writes ```generator (prints one test input for seed
N), the verifier agent writes ```verifier (the scoring contract of
``evolution.sandbox.scoring``), ```baseline (the baseline solution s*, stdin to stdout) and
```weak (a deliberately worse feasible solution, the reference point of the ordering check).
The agents run each other's programs with tools and argue until both accept; then these checks
run on what they agreed.

``check`` is pure: it takes what the sandbox measured and returns findings, each naming the
program(s) it suspects. Each program is first validated on its own (the generator's inputs
are distinct and non-empty; the baseline and the weak solution run without crashing on every
input; the verifier rejects garbage without crashing), then the verifier is checked against
the baseline and the weak solution (the baseline is feasible with a positive objective, the
weak solution is feasible somewhere and never beats the baseline, objectives do not collapse
into a narrow band). ``blame`` turns findings into the programs whose agent must revise them
in the next round. An empty list of findings with all four programs present means the gate is
passed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from evolution.llm import ParseError
from evolution.llm.parsing import fenced_blocks

from .formulation import ParseProblem

# The four programs, in the order they are shown.
COMPONENTS = ("generator", "verifier", "baseline", "weak")
LABEL = {
    "generator": "test-case generator",
    "verifier": "verifier",
    "baseline": "baseline solution",
    "weak": "weak solution",
}
# Outputs a verifier must reject gracefully (feasible: false), not crash on.
GARBAGE_OUTPUTS = ("", "not an answer\n", "-1 -1 -1\nnan inf\n", "\x00\x01\x02\n")

# Which program each check suspects, in order: a check that fires again at the next gate
# (after its first suspect was rewritten) blames the next one. "The weak solution beats the
# baseline" first blames the weak solution; if a rewritten weak solution still beats it, the
# verifier's ordering is rewritten too.
SUSPECTS = {
    "generator": ("generator",),
    "baseline_run": ("baseline",),
    "weak_run": ("weak",),
    "verifier_crash": ("verifier",),
    "garbage": ("verifier",),
    "baseline_rejected": ("baseline",),  # the verifier accepts other outputs on that test
    "all_rejected": ("verifier",),  # the verifier accepts no output at all on that test
    "baseline_nonpositive": ("baseline", "verifier"),
    "weak_infeasible": ("weak",),
    "inverted": ("weak", "verifier"),
    "narrow": ("generator", "verifier"),
}


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
    """One objective per (program, test): a float when feasible, None otherwise, with ``why``
    and ``failure``: "run" (the program crashed, timed out or printed nothing), "verifier"
    (the verifier failed on the output), "infeasible" (the verifier rejected it) or
    "unverified" (no verifier this attempt)."""

    objective: float | None
    why: str = ""
    failure: str = ""


@dataclass
class Observations:
    direction: str
    tests: int
    baseline: list[Measured] | None  # None: no baseline this attempt
    weak: list[Measured] | None
    samples: list[list[Measured]]  # one list per sampled solution
    # "rejected" | "accepted as feasible" | "crashed: ..." per garbage output; empty: no verifier
    garbage_verdicts: list[str]
    generator_problems: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Finding:
    check: str  # a key of SUSPECTS
    text: str


def _better(a: float, b: float, direction: str) -> bool:
    return a > b if direction == "max" else a < b


def objective_spread(values: list[float]) -> float:
    """(max - min) / max |value| over one test's feasible objectives; 0 when fewer than two."""
    if len(values) < 2:
        return 0.0
    scale = max(abs(v) for v in values)
    return (max(values) - min(values)) / scale if scale > 0 else 0.0


def _runs(name: str, measured: list[Measured]) -> list[Finding]:
    failed = [(t + 1, m.why) for t, m in enumerate(measured) if m.failure == "run"]
    return [Finding(f"{name}_run", f"{LABEL[name]} failed on test {t}: {why}") for t, why in failed]


def check(obs: Observations, *, min_spread: float) -> list[Finding]:
    """Every disagreement, each program validated on its own first, then the verifier against
    the baseline and the weak solution (see the module docstring)."""
    found = [Finding("generator", p) for p in obs.generator_problems]
    for name, measured in (("baseline", obs.baseline), ("weak", obs.weak)):
        if measured is not None:
            found += _runs(name, measured)
    for output, verdict in zip(GARBAGE_OUTPUTS, obs.garbage_verdicts, strict=False):
        if verdict != "rejected":
            found.append(Finding("garbage", f"verifier on unparsable output {output!r}: {verdict}"))
    everyone = [m for m in (obs.baseline, obs.weak) if m is not None] + list(obs.samples)
    for t in range(obs.tests):
        crashed = [m.why for m in (row[t] for row in everyone) if m.failure == "verifier"]
        if crashed:
            found.append(
                Finding("verifier_crash", f"verifier failed on test {t + 1}: {crashed[0]}")
            )
    if not obs.garbage_verdicts or obs.baseline is None:
        return found  # the verifier cannot be checked against the baseline this attempt
    for t, m in enumerate(obs.baseline):
        if m.failure == "infeasible":
            others = [row[t] for row in everyone if row is not obs.baseline]
            if any(o.objective is not None for o in others):
                found.append(
                    Finding(
                        "baseline_rejected",
                        f"baseline infeasible on test {t + 1} (the verifier accepts other "
                        f"solutions there): {m.why}",
                    )
                )
            else:
                found.append(
                    Finding(
                        "all_rejected",
                        f"the verifier rejects every solution on test {t + 1}, the baseline "
                        f"too: {m.why}",
                    )
                )
        elif m.objective is not None and m.objective <= 0:
            found.append(
                Finding(
                    "baseline_nonpositive",
                    f"baseline objective {m.objective:g} on test {t + 1}: the score formula "
                    "needs positive objectives",
                )
            )
    if obs.weak is None:
        return found
    if obs.tests and all(m.failure == "infeasible" for m in obs.weak):
        found.append(
            Finding(
                "weak_infeasible",
                "the weak solution is infeasible on every test: the ordering check needs a "
                "feasible weak solution",
            )
        )
    inverted = [
        t + 1
        for t, (w, b) in enumerate(zip(obs.weak, obs.baseline, strict=True))
        if w.objective is not None
        and b.objective is not None
        and _better(w.objective, b.objective, obs.direction)
    ]
    if inverted:
        found.append(
            Finding(
                "inverted",
                "relative quality inverted: the weak solution beats the baseline on test(s) "
                + ", ".join(map(str, inverted)),
            )
        )
    if obs.tests and not found:
        spreads = []
        for t in range(obs.tests):
            values = [m.objective for m in (row[t] for row in everyone) if m.objective is not None]
            spreads.append(objective_spread(values))
        mean_spread = sum(spreads) / len(spreads)
        if mean_spread < min_spread:
            found.append(
                Finding(
                    "narrow",
                    f"scores collapse into a narrow band: mean relative objective spread "
                    f"{mean_spread:.4f} < {min_spread}",
                )
            )
    return found


def blame(findings: list[Finding], history: list[dict] = ()) -> dict[str, list[str]]:
    """{program: [findings it must fix]} for the next round. ``history`` is the build ledger's
    gate entries so far (each entry's ``checks``): a check that fired in the k previous gates in a row
    blames its (k+1)-th suspect (the last one once the list runs out)."""
    out: dict[str, list[str]] = {}
    for finding in findings:
        suspects = SUSPECTS[finding.check]
        repeats = 0
        for entry in reversed(list(history)):
            if finding.check not in entry.get("checks", ()):
                break
            repeats += 1
        out.setdefault(suspects[min(repeats, len(suspects) - 1)], []).append(finding.text)
    return {name: out[name] for name in COMPONENTS if name in out}
