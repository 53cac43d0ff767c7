"""Exponential moving averages (design document 004, section 4.1).

    EMA_new = alpha x current_score + (1 - alpha) x EMA_previous;  the first EMA is the score.

The run state (section 6.1) of a series is a fold of these updates over its runs, from the
state it was given (empty, or a state.json imported into it); a human override changes one
score, so the state is recomputed from the scores with ``fold_runs``. ``RunState.to_json`` and
``RunState.from_json`` read and write the document's state.json.
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

    def to_json(self) -> dict:
        """The document's state.json (section 6.1's fields, in its order)."""
        return {
            "ema": self.ema,
            "run_count": self.run_count,
            "current_difficulty": self.current_difficulty,
            "ema_by_reasoning_type": dict(self.ema_by_reasoning_type),
            "ema_by_difficulty": dict(self.ema_by_difficulty),
        }

    @classmethod
    def from_json(cls, data: dict | None) -> RunState:
        """A state.json's content (missing keys: the initial state). ValueError names a bad
        field."""
        data = dict(data or {})
        ema = data.get("ema")
        if ema is not None and not isinstance(ema, int | float):
            raise ValueError(f"ema must be a number or null, got {ema!r}")
        run_count = data.get("run_count", 0)
        if not isinstance(run_count, int) or run_count < 0:
            raise ValueError(f"run_count must be a whole number >= 0, got {run_count!r}")
        current = data.get("current_difficulty", 1)
        if not isinstance(current, int) or not 1 <= current <= 10:
            raise ValueError(f"current_difficulty must be 1-10, got {current!r}")
        maps = {}
        for name in ("ema_by_reasoning_type", "ema_by_difficulty"):
            value = data.get(name) or {}
            if not isinstance(value, dict) or not all(
                isinstance(v, int | float) for v in value.values()
            ):
                raise ValueError(f"{name} must map names to numbers")
            maps[name] = {str(k): float(v) for k, v in value.items()}
        return cls(
            ema=None if ema is None else float(ema),
            run_count=run_count,
            current_difficulty=current,
            **maps,
        )

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
    # The alpha of the campaign that made the run (a series' campaigns may differ); None: the
    # fold's own.
    alpha: float | None = None


@dataclass(frozen=True)
class Snapshot:
    ema: float | None
    ema_by_reasoning_type: dict[str, float]
    ema_by_difficulty: dict[str, float]
    level_emas: list[float | None]  # the difficulty EMA right after each of the run's levels


def fold_runs(
    runs: Iterable[RunScores], alpha: float, *, start: RunState | None = None
) -> tuple[RunState, list[Snapshot]]:
    """Replay every run's scores through the EMA updates, in run order, from ``start`` (the
    initial state when None). Returns the final state (``current_difficulty`` is left for the
    caller) and the state after each run."""
    state = RunState.from_json(start.to_json()) if start is not None else RunState()
    snapshots = []
    for run in runs:
        run_alpha = alpha if run.alpha is None else run.alpha
        level_emas = []
        for difficulty, score in run.level_scores:
            state.update_difficulty(difficulty, score, run_alpha)
            level_emas.append(state.ema_by_difficulty.get(str(difficulty)))
        if run.finished:
            state.finish_run(run.run_score, run.type_scores, run_alpha)
        snapshots.append(
            Snapshot(
                ema=state.ema,
                ema_by_reasoning_type=dict(state.ema_by_reasoning_type),
                ema_by_difficulty=dict(state.ema_by_difficulty),
                level_emas=level_emas,
            )
        )
    return state, snapshots
