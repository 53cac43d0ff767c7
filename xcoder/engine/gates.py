"""Statement gates (appendix C.1 and the stage-2 prompt's requirements). Each gate refuses with
its own reason code so a rejected task says exactly which requirement it missed.

The length floor is a 200-*word* floor: it counts words and punctuation marks
(``\\w+|[^\\w\\s]``), not tokens. C.1 asks for 200 tokens of a model's tokenizer; no tokenizer
with its vocabulary ships in a Python package this project can install without a download at
run time (``tiktoken`` fetches its BPE files on first use), so the gate counts what it can count
and says so: its detail reads "N words and punctuation marks". For English prose a BPE
tokenizer gives about as many tokens as this count or more (a long word or a number splits into
several tokens), so a statement that passes the 200-word floor would also pass a 200-token one.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from .features import norm

_TOKEN = re.compile(r"\w+|[^\w\s]")
_EXAMPLE_HEAD = re.compile(r"(?im)^[ \t]*(?:#+[ \t]*)?\**(?:example|sample)[ \t]*\d*\**[ \t]*:?")
_INPUT_HEAD = re.compile(r"(?im)^[ \t]*(?:#+[ \t]*)?\**input\b")
_OUTPUT_HEAD = re.compile(r"(?im)^[ \t]*(?:#+[ \t]*)?\**output\b")
_EXPLANATION = re.compile(r"(?i)\b(explanation|note)\b")
_CONSTRAINT_HEAD = re.compile(r"(?im)^[ \t]*(?:#+[ \t]*)?\**constraints?\b")
# A numeric bound: "1 <= n <= 10^5", "1 ≤ n ≤ 2·10^5", "n < 1000", "at most 10^9".
_BOUND = re.compile(
    r"(\d[\d\s,^·*e]*\s*(<=|≤|<|\\le|\\leq)\s*\w)|(\w\s*(<=|≤|<|\\le|\\leq)\s*\d)"
    r"|(\b(at most|at least|up to|no more than)\s+\$?\d)",
    re.IGNORECASE,
)

# Names a statement must not show (the stage-2 prompt: "no references to algorithms, data
# structures, solution strategies"). The task's own selected features are added per task.
ALGORITHM_NAMES = (
    "dynamic programming",
    "dijkstra",
    "bellman-ford",
    "floyd-warshall",
    "binary search",
    "segment tree",
    "fenwick tree",
    "binary indexed tree",
    "union-find",
    "disjoint set union",
    "depth-first search",
    "breadth-first search",
    "topological sort",
    "greedy algorithm",
    "sliding window",
    "two pointers",
    "prefix sum",
    "knapsack",
    "memoization",
    "backtracking",
    "divide and conquer",
    "kmp",
    "rolling hash",
    "minimum spanning tree",
    "kruskal",
    "prim's algorithm",
    "max flow",
    "edmonds-karp",
    "sparse table",
    "bitmask dp",
)
MOTIVATIONAL_PHRASES = (
    "remember",
    "good luck",
    "hint:",
    "hint ",
    "tip:",
    "think carefully",
    "think about",
    "you should use",
    "you can use",
    "try to use",
    "the key insight",
    "the trick is",
    "have fun",
    "happy coding",
)


@dataclass(frozen=True)
class GateResult:
    gate: str
    passed: bool
    detail: str

    def to_dict(self) -> dict:
        return asdict(self)


def count_words(text: str) -> int:
    """Words and punctuation marks (not tokenizer tokens: see the module's docstring)."""
    return len(_TOKEN.findall(text or ""))


def gate_length(statement: str, *, min_words: int) -> GateResult:
    """The 200-word floor (C.1's 200-token floor, counted as words and punctuation marks)."""
    n = count_words(statement)
    return GateResult(
        "min_length",
        n >= min_words,
        f"{n} words and punctuation marks (minimum {min_words}; not tokenizer tokens)",
    )


def example_sections(statement: str) -> list[str]:
    """The text of each example, from one "Example"/"Sample" heading to the next."""
    heads = list(_EXAMPLE_HEAD.finditer(statement or ""))
    sections = []
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(statement)
        sections.append(statement[head.start() : end])
    return sections


def gate_samples(statement: str, *, min_samples: int) -> GateResult:
    complete = 0
    for section in example_sections(statement):
        if (
            re.search(r"(?i)\binput\b", section)
            and re.search(r"(?i)\boutput\b", section)
            and _EXPLANATION.search(section)
        ):
            complete += 1
    return GateResult(
        "samples",
        complete >= min_samples,
        f"{complete} example(s) with input, output and explanation (minimum {min_samples})",
    )


def gate_hints(statement: str, *, features: list[str]) -> GateResult:
    """No algorithm names (the task's own features included) and no motivational phrases."""
    text = " " + norm(statement).replace("’", "'") + " "
    found: list[str] = []
    names = {norm(n) for n in (*ALGORITHM_NAMES, *features) if len(norm(n)) >= 3}
    for name in sorted(names):
        if re.search(r"(?<![\w-])" + re.escape(name) + r"(?![\w-])", text):
            found.append(name)
    for phrase in MOTIVATIONAL_PHRASES:
        if phrase in text:
            found.append(phrase.strip())
    return GateResult(
        "hint_leakage",
        not found,
        "leaks: " + ", ".join(sorted(set(found))) if found else "no algorithm names or hints",
    )


def gate_io_spec(statement: str, *, style: str) -> GateResult:
    """Precise I/O and constraints: an Input and an Output section (LeetCode style: a function
    signature stands for them) and at least one numeric bound."""
    missing = []
    body = _strip_examples(statement)
    if style != "leetcode":
        if not _INPUT_HEAD.search(body):
            missing.append("an Input section")
        if not _OUTPUT_HEAD.search(body):
            missing.append("an Output section")
    if not (_CONSTRAINT_HEAD.search(statement) or _BOUND.search(statement)):
        missing.append("constraints with numeric bounds")
    elif not _BOUND.search(statement):
        missing.append("a numeric bound in the constraints")
    return GateResult(
        "io_constraints",
        not missing,
        "missing " + ", ".join(missing) if missing else "input, output and constraints stated",
    )


def _strip_examples(statement: str) -> str:
    sections = example_sections(statement)
    return statement[: statement.find(sections[0])] if sections else statement


def run_gates(
    statement: str, *, style: str, features: list[str], min_words: int, min_samples: int
) -> list[GateResult]:
    """All gates, in order; the first failure is the task's rejection reason."""
    return [
        gate_length(statement, min_words=min_words),
        gate_samples(statement, min_samples=min_samples),
        gate_hints(statement, features=features),
        gate_io_spec(statement, style=style),
    ]


_THINK_OPEN = re.compile(r"<think>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think>", re.IGNORECASE)
_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.IGNORECASE | re.DOTALL)


def think_answer(content: str) -> tuple[str, str]:
    """C.1 (i): the answer part of a reasoning model's output, or ("", reason) when the output
    lacks complete think and answer tags. The reasoning must be one complete
    ``<think>…</think>`` block at the start (whitespace before it is allowed); the answer is
    what follows it, or the inside of an ``<answer>…</answer>`` block there when the model used
    one. An unclosed or repeated think block, an opened but unclosed answer block, or an empty
    answer is refused with its reason."""
    text = content or ""
    opens, closes = _THINK_OPEN.findall(text), _THINK_CLOSE.findall(text)
    if not opens:
        return "", "no <think> reasoning block"
    if not closes:
        return "", "the <think> block is never closed (truncated reasoning)"
    if len(opens) > 1 or len(closes) > 1:
        return "", f"{len(opens)} <think> and {len(closes)} </think> tags: exactly one block"
    start, end = _THINK_OPEN.search(text), _THINK_CLOSE.search(text)
    if text[: start.start()].strip():
        return "", "text before the <think> block"
    if end.start() < start.end():
        return "", "</think> comes before <think>"
    answer = text[end.end() :]
    if re.search(r"<answer>", answer, re.IGNORECASE):
        inner = _ANSWER.search(answer)
        if inner is None:
            return "", "the <answer> block is never closed"
        answer = inner.group(1)
    if not answer.strip():
        return "", "nothing after the reasoning block"
    return answer, ""


def reasoning_of(content: str) -> str:
    """The inside of the one complete ``<think>…</think>`` block of an answer that passes
    ``think_answer`` (the golden candidate's long chain of thought, kept for the SFT pair
    [q, A_golden]); "" for an answer without one."""
    _, reason = think_answer(content)
    if reason:
        return ""
    text = content or ""
    return text[_THINK_OPEN.search(text).end() : _THINK_CLOSE.search(text).start()].strip()
