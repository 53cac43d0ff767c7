"""Difficulty (Section 3.3): the panel attempt is platform logic (``evolution.judging.difficulty``,
shared with the measurement of every kind's kept problems); its stages import these names from
here."""

from __future__ import annotations

from evolution.judging.difficulty import (
    INFRA_ERROR,
    PanelResult,
    answered_attempt,
    pool,
    solver_code,
    solver_messages,
)

__all__ = [
    "INFRA_ERROR",
    "PanelResult",
    "answered_attempt",
    "pool",
    "solver_code",
    "solver_messages",
]
