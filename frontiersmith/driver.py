"""The campaign-kind driver that plugs FrontierSmith campaigns into the shared tick
(evolution.services.kinds): pause, resume, cancel, budgets and the worker-restart chain work
as for the other kinds."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FrontierSmithDriver:
    def dispatch(self, campaign) -> bool:
        from .services import frontier_dispatch

        return frontier_dispatch(campaign=campaign)

    def run_inline(self, *, campaign_id: int, workers: int = 1, max_steps=None, on_progress=None):
        # One stream per campaign (round barriers order the work): ``workers`` is moot.
        from .services import frontier_run_inline

        return frontier_run_inline(
            campaign_id=campaign_id, max_steps=max_steps, on_progress=on_progress
        )
