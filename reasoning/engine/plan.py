"""The order of work within a run (section 7) and the section-12 planning extensions.

Round-robin: difficulty is the outer loop, then reasoning type, then the question index
within the type x difficulty cell.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Cell:
    difficulty: int
    reasoning_type: str
    question_index: int


def round_robin(difficulties: list[int], plan_types: list[dict]) -> Iterator[Cell]:
    """Every question of a run in order. ``plan_types``: [{"name", "questions"}] in type order."""
    for difficulty in difficulties:
        yield from level_cells(difficulty, plan_types)


def level_cells(difficulty: int, plan_types: list[dict]) -> Iterator[Cell]:
    for entry in plan_types:
        for index in range(entry["questions"]):
            yield Cell(difficulty, entry["name"], index)


def run_plan(
    *,
    type_names: list[str],
    num_questions: int,
    ema_by_type: dict[str, float],
    weak_area_focus: bool,
    weak_area_types: int,
    weak_area_extra: int,
) -> list[dict]:
    """Questions per cell for each type in this run. With weak-area focus, the
    ``weak_area_types`` types with the lowest EMA so far (types without an EMA yet are not
    ranked) get ``weak_area_extra`` more questions per cell; ties keep type order."""
    weak: set[str] = set()
    if weak_area_focus:
        ranked = sorted(
            (name for name in type_names if name in ema_by_type),
            key=lambda name: (ema_by_type[name], type_names.index(name)),
        )
        weak = set(ranked[:weak_area_types])
    return [
        {
            "name": name,
            "questions": num_questions + (weak_area_extra if name in weak else 0),
            "weak": name in weak,
        }
        for name in type_names
    ]


@dataclass(frozen=True)
class NextLevel:
    difficulty: int | None  # None: the run is over
    reason: str


def next_difficulty(
    *,
    current: int,
    end: int,
    adaptive: bool,
    level_emas: list[float | None],
    mastery: float,
    floor: float,
    patience: int,
) -> NextLevel:
    """Where a run goes after closing level ``current``.

    Without adaptive difficulty: the next level, until ``end``. With it, driven by the
    per-difficulty EMA (the trend of the model's results at each level across runs):
    ``level_emas`` are the EMAs of the levels closed so far in this run, the current one last.
    A level whose EMA reached ``mastery`` is mastered: the next level is skipped. After
    ``patience`` consecutive levels at or below ``floor`` the run stops early: harder questions
    would only repeat failures the benchmark already recorded.
    """
    if current >= end:
        return NextLevel(None, f"difficulty {end} was the last level")
    if not adaptive:
        return NextLevel(current + 1, "next level")
    streak = 0
    for value in reversed(level_emas):
        if value is not None and value <= floor:
            streak += 1
        else:
            break
    if streak >= patience:
        return NextLevel(
            None,
            f"adaptive: {streak} consecutive level(s) with EMA <= {floor}; run stopped early",
        )
    latest = level_emas[-1] if level_emas else None
    if latest is not None and latest >= mastery:
        target = min(current + 2, end)
        return NextLevel(target, f"adaptive: level {current} EMA {latest:.3f} >= {mastery}")
    return NextLevel(current + 1, "next level")
