"""The difficulty label a release shows for an item (public pages, leaderboard breakdown,
exports), and what it rests on.

An evolved problem is labelled from its own measurement: the panel pass@1 the gate used
(passes over attempts of the evaluation panel), never the label of the seed it came from,
which says nothing about the harder problem. An original problem keeps its dataset's label
(LiveCodeBench's easy / medium / hard come from the contest platform) and is labelled from
its measurement only when the dataset gave none.

The cut points are the project's own, not LiveCodeBench's (whose labels are the platforms'):
pass@1 of at least ``EASY_FROM`` is easy, below ``HARD_BELOW`` hard, medium in between.
"""

from __future__ import annotations

EASY_FROM = 0.7
HARD_BELOW = 0.3
LABELS = ("easy", "medium", "hard")


def measured_label(pass_at_1: float) -> str:
    if pass_at_1 >= EASY_FROM:
        return "easy"
    if pass_at_1 < HARD_BELOW:
        return "hard"
    return "medium"


def item_difficulty(
    *,
    origin: str,
    dataset_label: str,
    dataset: str,
    passes: int | None,
    attempts: int | None,
    open_ended: bool = False,
) -> tuple[str, dict]:
    """(label, basis): the label to show and what it rests on, for the item's provenance."""
    measured = bool(attempts) and not open_ended
    if origin == "original" and dataset_label:
        return dataset_label, {"source": "dataset", "dataset": dataset}
    if measured:
        rate = (passes or 0) / attempts
        return measured_label(rate), {
            "source": "measured",
            "pass_at_1": round(rate, 4),
            "passes": passes or 0,
            "attempts": attempts,
            "easy_from": EASY_FROM,
            "hard_below": HARD_BELOW,
        }
    return "", {"source": "unmeasured"}


def describe(basis: dict | None) -> str:
    """The basis as one phrase for a page ("" when the release predates bases)."""
    basis = basis or {}
    source = basis.get("source")
    if source == "measured":
        return (
            f"measured: {basis['passes']} of {basis['attempts']} panel attempts pass "
            f"(pass@1 {basis['pass_at_1']:.2f})"
        )
    if source == "dataset":
        return f"label of {basis.get('dataset') or 'the source dataset'}"
    if source == "unmeasured":
        return "not measured"
    return ""
