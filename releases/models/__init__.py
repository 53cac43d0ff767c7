"""Releases' tables, one module per subject: benchmarks, releases, their snapshots, the gate,
errata and the leaderboard (``release``); the
independent evaluations (``independent``); the living benchmark (``living``); scored question sets
(``questions``). Every model is importable from here, as Django expects."""

from __future__ import annotations

from .independent import (
    GateEvaluation,
    GateEvaluationSample,
    GateEvaluationState,
    GatePanel,
)
from .living import (
    DifficultyPoint,
    PanelSeat,
    ReEvolution,
    Remeasurement,
    RemeasurementTrigger,
    SaturationFlag,
    SaturationFlagQuerySet,
)
from .questions import (
    QuestionRun,
    QuestionSample,
)
from .release import (
    Benchmark,
    CurationDecision,
    Erratum,
    ErratumKind,
    FrozenReleaseError,
    GateRun,
    LeaderboardRun,
    LeaderboardRunFigures,
    LeaderboardSample,
    Origin,
    Release,
    ReleaseItem,
    ReleaseQuestion,
    ReleaseState,
    ReleaseTest,
    RunSource,
    RunState,
)

__all__ = [
    "FrozenReleaseError",
    "ReleaseState",
    "Benchmark",
    "Release",
    "Origin",
    "ReleaseItem",
    "ReleaseTest",
    "ReleaseQuestion",
    "GateRun",
    "CurationDecision",
    "ErratumKind",
    "Erratum",
    "RunState",
    "RunSource",
    "LeaderboardRun",
    "LeaderboardRunFigures",
    "LeaderboardSample",
    "GatePanel",
    "GateEvaluationState",
    "GateEvaluation",
    "GateEvaluationSample",
    "PanelSeat",
    "RemeasurementTrigger",
    "Remeasurement",
    "DifficultyPoint",
    "SaturationFlagQuerySet",
    "SaturationFlag",
    "ReEvolution",
    "QuestionRun",
    "QuestionSample",
]
