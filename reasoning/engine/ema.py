"""Exponential moving averages (design document 004, section 4.1).

    EMA_new = alpha x current_score + (1 - alpha) x EMA_previous;  the first EMA is the score.

The campaign's run state (section 6.1) is a fold of these updates over its runs; a human
override changes one score, so the state is recomputed from the scores with ``fold_runs``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field


def ema_update(previous: float | None, score: float | None, alpha: float) -> float | None:
    """One EMA step. ``previous`` None means "no history yet": the EMA is the score itself.
    A missing score (nothing was scored) leaves the EMA unchanged."""
    if not 0 < alpha <= 1:
        raise ValueError(f"alpha must be in (0, 1], got {alpha}")
    if score is None:
        return previous
    if previous is None:
        return float(score)
    return alpha * float(score) + (1 - alpha) * float(previous)


def mean(values: Iterable[float]) -> float | None:
    values = list(values)
    return sum(values) / len(values) if values else None


@dataclass
class RunState:
    """Section 6.1. Keys of the per-type and per-difficulty maps are strings (JSON objects)."""

    ema: float | None = None
    run_count: int = 0
    current_difficulty: int = 1
    ema_by_reasoning_type: dict[str, float] = field(default_factory=dict)
    ema_by_difficulty: dict[str, float] = field(default_factory=dict)

    def update_difficulty(self, difficulty: int, score: float | None, alpha: float) -> None:
        """After a difficulty level of a run finished (the per-level save point)."""
        key = str(difficulty)
        value = ema_update(self.ema_by_difficulty.get(key), score, alpha)
        if value is not None:
            self.ema_by_difficulty[key] = value

    def finish_run(
        self, run_score: float | None, type_scores: dict[str, float | None], alpha: float
    ) -> None:
        """After a run: the overall EMA, the per-type EMAs and the run count."""
        self.ema = ema_update(self.ema, run_score, alpha)
        for name, score in type_scores.items():
            value = ema_update(self.ema_by_reasoning_type.get(name), score, alpha)
            if value is not None:
                self.ema_by_reasoning_type[name] = value
        self.run_count += 1


@dataclass(frozen=True)
class RunScores:
    """What one run contributes to the state: its level scores in the order the levels were
    closed, and, when the run finished, its overall and per-type scores."""

    level_scores: list[tuple[int, float | None]]
    finished: bool
    run_score: float | None = None
    type_scores: dict[str, float | None] = field(default_factory=dict)


@dataclass(frozen=True)
class Snapshot:
    ema: float | None
    ema_by_reasoning_type: dict[str, float]
    ema_by_difficulty: dict[str, float]
    level_emas: list[float | None]  # the difficulty EMA right after each of the run's levels


def fold_runs(runs: Iterable[RunScores], alpha: float) -> tuple[RunState, list[Snapshot]]:
    """Replay every run's scores through the EMA updates, in run order. Returns the final state
    (``current_difficulty`` is left for the caller) and the state after each run."""
    state = RunState()
    snapshots = []
    for run in runs:
        level_emas = []
        for difficulty, score in run.level_scores:
            state.update_difficulty(difficulty, score, alpha)
            level_emas.append(state.ema_by_difficulty.get(str(difficulty)))
        if run.finished:
            state.finish_run(run.run_score, run.type_scores, alpha)
        snapshots.append(
            Snapshot(
                ema=state.ema,
                ema_by_reasoning_type=dict(state.ema_by_reasoning_type),
                ema_by_difficulty=dict(state.ema_by_difficulty),
                level_emas=level_emas,
            )
        )
    return state, snapshots
