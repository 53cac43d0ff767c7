"""Dual verification (section 2 (iv), appendix E, Algorithm 1): majority vote labels each test,
tests are weighted, the labelled set is split into a weighted golden suite and a hold-out, the
golden solution is the best weighted scorer and must also be best (unweighted) on the hold-out.

Pure: it takes the outputs every candidate produced on every input (``None`` when the run did
not finish with status OK) and an ``equal`` key function; executing code is the caller's job.

Choices the document leaves open, made explicit here:

- A candidate that crashed or timed out casts no vote on that input.
- A tie for the most votes, or an input no candidate answered, leaves the input unlabelled;
  it is dropped (an argmax over a tie is arbitrary, and an arbitrary label is a wrong test).
- Ties in the weighted score go to the lowest candidate index; the hold-out check passes when
  that candidate's hold-out accuracy equals the best one (several candidates that behave
  identically are all "the best").
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

SEMANTIC_WEIGHTS = {"nominal": 1, "complex": 2, "boundary": 3, "stress": 4}


def semantic_weight(category: str) -> int:
    """E.2: nominal 1, complex 2, boundary 3, stress 4 (the D.1 names map onto them)."""
    c = (category or "").strip().lower()
    aliases = {"small": "nominal", "medium": "complex", "edge": "boundary", "large": "stress"}
    return SEMANTIC_WEIGHTS.get(aliases.get(c, c), 1)


def size_weights(sizes: list[int]) -> list[int]:
    """E.2: sort by input size, four equal buckets weighted 1..4 (smallest 25% get 1)."""
    n = len(sizes)
    order = sorted(range(n), key=lambda i: (sizes[i], i))
    weights = [1] * n
    for rank, index in enumerate(order):
        weights[index] = 1 + (4 * rank) // n if n else 1
    return weights


@dataclass
class Verification:
    labels: list[str | None]  # voted output per input (None: unlabelled, dropped)
    votes: list[dict]  # per input: {"top": count, "runner_up": count, "answered": count}
    weights: list[int]
    split: list[str]  # per input: "golden" | "val" | "dropped"
    agree: list[list[bool | None]]  # [input][candidate]: matches the label (None: dropped)
    weighted_scores: list[float]
    val_accuracy: list[float | None]
    chosen: int | None  # j*: best weighted score
    best_val: list[int]  # j-dagger set: candidates with the best hold-out accuracy
    golden: int | None  # the confirmed golden candidate, or None
    reason_code: str = ""
    reason: str = ""
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def golden_pass_rate(self) -> float | None:
        """The golden solution's share of voted tests it agrees with (Table 15's quantity)."""
        if self.golden is None:
            return None
        column = [row[self.golden] for row in self.agree if row[self.golden] is not None]
        return sum(column) / len(column) if column else None


def majority(outputs: list[str | None], key: Callable[[str], str]) -> tuple[str | None, dict]:
    """Eq. (1): the most common output among candidates that answered; None on a tie."""
    keyed = [(key(o), o) for o in outputs if o is not None]
    counts = Counter(k for k, _ in keyed)
    stats = {"answered": len(keyed), "top": 0, "runner_up": 0}
    if not counts:
        return None, stats
    ranked = counts.most_common()
    stats["top"] = ranked[0][1]
    stats["runner_up"] = ranked[1][1] if len(ranked) > 1 else 0
    if stats["runner_up"] == stats["top"]:
        return None, stats
    winner = ranked[0][0]
    return next(o for k, o in keyed if k == winner), stats


def partition(n: int, *, holdout_fraction: float, seed: int | str) -> list[str]:
    """Randomly assign n labelled inputs to "golden" or "val" (at least one of each when n >=
    2; a single input goes to "golden" and the hold-out is empty)."""
    rng = random.Random(str(seed))
    order = list(range(n))
    rng.shuffle(order)
    n_val = round(n * holdout_fraction)
    if n >= 2:
        n_val = min(max(n_val, 1), n - 1)
    else:
        n_val = 0
    val = set(order[:n_val])
    return ["val" if i in val else "golden" for i in range(n)]


def verify(
    outputs: list[list[str | None]],
    *,
    weights: list[int],
    key: Callable[[str], str],
    holdout_fraction: float = 0.5,
    seed: int | str = 42,
) -> Verification:
    """Algorithm 1 over ``outputs[input][candidate]``. The result always carries the whole
    matrix; ``golden`` is None when the task must be discarded (``reason`` says why)."""
    n = len(outputs)
    m = len(outputs[0]) if outputs else 0
    labels: list[str | None] = []
    votes: list[dict] = []
    for row in outputs:
        label, stats = majority(row, key)
        labels.append(label)
        votes.append(stats)
    labelled = [i for i in range(n) if labels[i] is not None]
    sub = partition(len(labelled), holdout_fraction=holdout_fraction, seed=seed)
    split = ["dropped"] * n
    for position, i in enumerate(labelled):
        split[i] = sub[position]
    agree: list[list[bool | None]] = []
    for i, row in enumerate(outputs):
        if labels[i] is None:
            agree.append([None] * m)
        else:
            target = key(labels[i])
            agree.append([o is not None and key(o) == target for o in row])
    result = Verification(
        labels=labels,
        votes=votes,
        weights=list(weights),
        split=split,
        agree=agree,
        weighted_scores=[0.0] * m,
        val_accuracy=[None] * m,
        chosen=None,
        best_val=[],
        golden=None,
    )
    dropped = n - len(labelled)
    if dropped:
        result.notes.append(f"{dropped} of {n} inputs had no majority and were dropped")
    if m < 2:
        result.reason_code, result.reason = "too_few_candidates", f"{m} candidate(s): no vote"
        return result
    golden_rows = [i for i in range(n) if split[i] == "golden"]
    val_rows = [i for i in range(n) if split[i] == "val"]
    if not golden_rows:
        result.reason_code = "no_labelled_tests"
        result.reason = f"no input of {n} has a majority output"
        return result
    # Eq. (2): weighted score on T_golden.
    result.weighted_scores = [
        float(sum(weights[i] for i in golden_rows if agree[i][j])) for j in range(m)
    ]
    best = max(result.weighted_scores)
    result.chosen = result.weighted_scores.index(best)
    if not val_rows:
        result.reason_code = "no_holdout"
        result.reason = "only one labelled input: nothing left to hold out"
        return result
    result.val_accuracy = [sum(agree[i][j] for i in val_rows) / len(val_rows) for j in range(m)]
    top = max(result.val_accuracy)
    result.best_val = [j for j in range(m) if result.val_accuracy[j] == top]
    if result.chosen in result.best_val:
        result.golden = result.chosen
    else:
        result.reason_code = "holdout_disagrees"
        result.reason = (
            f"candidate {result.chosen} has the best weighted score ({best:g}) but hold-out "
            f"accuracy {result.val_accuracy[result.chosen]:.2f}; the best on the hold-out is "
            f"{top:.2f} (candidate(s) {', '.join(map(str, result.best_val))})"
        )
    return result
