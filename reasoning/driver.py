"""The campaign-kind driver that plugs reasoning campaigns into the shared tick
(evolution.services.kinds): pause, resume, cancel, budgets and the worker-restart chain work
as for coding campaigns."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ReasoningDriver:
    def dispatch(self, campaign) -> bool:
        from .services import reasoning_dispatch

        return reasoning_dispatch(campaign=campaign)

    def run_inline(self, *, campaign_id: int, workers: int = 1, max_steps=None, on_progress=None):
        # One stream per campaign (each question sees the ones before it): ``workers`` is moot.
        from .services import reasoning_run_inline

        return reasoning_run_inline(
            campaign_id=campaign_id, max_steps=max_steps, on_progress=on_progress
        )
