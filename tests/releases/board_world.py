"""A published release whose problems were released on different dates, with two models'
judged samples (stored and summarised by ``leaderboard.run_summary``, as a completed run
is), for the leaderboard's controls.

Problems: E-OK (evolved, 3/8 panel: medium, released 2024-01-10), E-OVERRIDE (evolved, 4/8:
medium, 2024-06-01), S2 (original, LiveCodeBench "hard", 2023-05-01).
model-a (released 2024-03-01): E-OK 4/4, E-OVERRIDE 0/4, S2 2/4.
model-b (no release date): E-OK 0/4, E-OVERRIDE 4/4, S2 4/4.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime

from evolution.models import Problem
from releases import leaderboard, services
from releases.models import LeaderboardRun, LeaderboardSample, Release, RunSource
from tests.support.gate_rules import SELECTION_TIME_OK
from tests.support.scoring import as_scoring_service, complete, completed_run

from .builders import crafted_world

RELEASED = {"E-OK": "2024-01-10", "E-OVERRIDE": "2024-06-01", "S2": "2023-05-01"}
PASSES = {
    "model-a": {"E-OK": 4, "E-OVERRIDE": 0, "S2": 2},
    "model-b": {"E-OK": 0, "E-OVERRIDE": 4, "S2": 4},
}
MODEL_DATES = {"model-a": date(2024, 3, 1), "model-b": None}


@dataclass
class BoardWorld:
    release: Release
    ids: dict[str, str]  # key -> public id

    @property
    def url(self) -> str:
        return f"/releases/{self.release.benchmark.slug}/v{self.release.version}/leaderboard/"


def _midday(day: str) -> datetime:
    return datetime.fromisoformat(day).replace(hour=12, tzinfo=UTC)


def _dated_problems() -> None:
    """Set each problem's date before the release is frozen (items are immutable after)."""
    for key, day in RELEASED.items():
        title = f"Seed {key}" if key.startswith("S") else f"Evolved {key}"
        problem = Problem.objects.get(title=title)
        field = "contest_date" if problem.kind == "seed" else "created_at"
        Problem.objects.filter(pk=problem.pk).update(**{field: _midday(day)})


def board_world() -> BoardWorld:
    world = crafted_world()
    _dated_problems()
    bench = services.benchmark_create(default_rules=SELECTION_TIME_OK, name="LiveCodeBench-Plus")
    release = services.release_create(benchmark=bench, campaigns=[world.campaign])
    services.gate_run_create(release=release)
    release = services.release_publish(release=services.release_freeze(release=release))
    ids = {key: world.problem(key).public_id for key in RELEASED}
    items = {i.public_id: i for i in release.items.all()}
    for model, passes in PASSES.items():
        run = LeaderboardRun.objects.create(
            release=release,
            source=RunSource.UPLOAD,
            label=model,
            model_release_date=MODEL_DATES[model],
            samples_per_problem=4,
        )
        with as_scoring_service():
            LeaderboardSample.objects.bulk_create(
                LeaderboardSample(
                    run=run,
                    item=items[ids[key]],
                    sample_index=i,
                    code="print()",
                    verdict="AC" if i < n else "WA",
                )
                for key, n in passes.items()
                for i in range(4)
            )
        complete(run, leaderboard.run_summary(run=run))
    return BoardWorld(release=release, ids=ids)


# Long names, as model identifiers often are; the last one's run scores open-ended problems too,
# so the board shows Avg@k and Best@k: every column the leaderboard has.
WIDE_MODELS = [
    "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B-Instruct",
    "meta-llama/Llama-3.3-70B-Instruct-Turbo",
    "Qwen/Qwen2.5-Coder-32B-Instruct",
]


def wide_board_world() -> BoardWorld:
    """``board_world`` and three more models with long names whose runs carry model-a's
    scores (stored as a completed run's summary), one of them with Avg@k and Best@k too."""
    world = board_world()
    source = LeaderboardRun.objects.get(release=world.release, label="model-a")
    for i, label in enumerate(WIDE_MODELS):
        summary = dict(source.summary)
        if i == len(WIDE_MODELS) - 1:
            estimate = {"value": 0.42, "low": 0.21, "high": 0.63, "n": 3}
            summary["score"] = {"avg": {"1": estimate, "4": estimate}, "best": {"4": estimate}}
        completed_run(
            release=world.release,
            source=RunSource.UPLOAD,
            label=label,
            model_release_date=date(2024, 2, 1 + i),
            samples_per_problem=4,
            summary=summary,
        )
    return world
