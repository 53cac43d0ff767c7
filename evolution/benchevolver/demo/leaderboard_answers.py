"""The demo panel's authored answers to the demo release's problems that no BenchEvolver
campaign measured: the X-Coder, EvoSyn and FrontierSmith demos' problems (their own demos
measure them with panels of their own). The release's leaderboard asks the demo panel
(``solver-a``, ``solver-b``) for K = 4 samples of every item; a replayed endpoint finds these
under ``releases.leaderboard``'s replay key for an item that is not a BenchEvolver evolution:
``item=<method>/<slug of the title>;model=<model>;attempt=<i>;role=solver``.

Authored, as the pack's other answers are: plausible programs, some right and some wrong, so
the demo leaderboard has results to compare (shown as replayed responses).
"""

from __future__ import annotations

from django.utils.text import slugify

STABLE_FAST = """\
def stable_stretches(changes, k):
    total = sum(changes[:k])
    count = 1 if total >= 0 else 0
    for i in range(k, len(changes)):
        total += changes[i] - changes[i - k]
        if total >= 0:
            count += 1
    return count
"""

# Counts the stretches whose total is strictly positive: a stretch of total 0 is missed.
STABLE_STRICT = """\
def stable_stretches(changes, k):
    total = sum(changes[:k])
    count = 1 if total > 0 else 0
    for i in range(k, len(changes)):
        total += changes[i] - changes[i - k]
        if total > 0:
            count += 1
    return count
"""

LANTERN_SORTED = """\
import sys
n, k, *a = map(int, sys.stdin.read().split())
a = sorted(a[:n], reverse=True)
print(sum(a[:k]))
"""

# Takes the k smallest offers.
LANTERN_WRONG = """\
import sys
n, k, *a = map(int, sys.stdin.read().split())
print(sum(sorted(a[:n])[:k]))
"""

# Best value per unit of weight first: feasible, usually better than taking items in order.
KNAPSACK_RATIO = """\
import sys
data = sys.stdin.read().split()
n, cap = int(data[0]), int(data[1])
items = [(int(data[2 + 2 * i]), int(data[3 + 2 * i]), i) for i in range(n)]
items.sort(key=lambda t: (-t[1] / max(t[0], 1), t[2]))
left, chosen = cap, []
for w, v, i in items:
    if w <= left:
        chosen.append(i)
        left -= w
print(*sorted(chosen))
"""

# Takes items in input order while they fit: what the baseline does, so it scores 0.
KNAPSACK_IN_ORDER = """\
import sys
data = sys.stdin.read().split()
n, cap = int(data[0]), int(data[1])
left, chosen = cap, []
for i in range(n):
    w = int(data[2 + 2 * i])
    if w <= left:
        chosen.append(i)
        left -= w
print(*chosen)
"""

EVENS = """\
def sum_evens(values):
    return sum(v for v in values if v % 2 == 0)
"""

# Sums the odd numbers instead.
EVENS_WRONG = """\
def sum_evens(values):
    return sum(v for v in values if v % 2 == 1)
"""

# (method, title) -> {model: the four samples' programs}
ANSWERS: dict[tuple[str, str], dict[str, list[str]]] = {
    ("xcoder", "Reservoir Gauge Readings"): {
        "solver-a": [STABLE_FAST] * 4,
        "solver-b": [STABLE_STRICT, STABLE_FAST, STABLE_STRICT, STABLE_FAST],
    },
    ("xcoder", "Lantern Festival Budget"): {
        "solver-a": [LANTERN_SORTED] * 4,
        "solver-b": [LANTERN_SORTED, LANTERN_WRONG, LANTERN_SORTED, LANTERN_SORTED],
    },
    ("frontiersmith", "Knapsack value (change_goal)"): {
        "solver-a": [KNAPSACK_RATIO] * 4,
        "solver-b": [KNAPSACK_IN_ORDER, KNAPSACK_RATIO, KNAPSACK_IN_ORDER, KNAPSACK_IN_ORDER],
    },
    ("evosyn", "Sum of evens"): {
        "solver-a": [EVENS] * 4,
        "solver-b": [EVENS, EVENS_WRONG, EVENS, EVENS],
    },
}


def item_key(method: str, title: str) -> str:
    """The replay key's problem part for an item no BenchEvolver campaign measured."""
    return f"item={method}/{slugify(title)}"


def responses() -> dict[tuple[str, str], str]:
    """(role, replay key) -> answer content, fenced as a model answers."""
    out = {}
    for (method, title), by_model in ANSWERS.items():
        for model, programs in by_model.items():
            for index, program in enumerate(programs):
                key = f"{item_key(method, title)};model={model};attempt={index};role=solver"
                out[("solver", key)] = f"Here is my solution.\n\n```python\n{program}```\n"
    return out
