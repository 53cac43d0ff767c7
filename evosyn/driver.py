"""The campaign-kind driver that plugs EvoSyn campaigns into the shared tick
(evolution.services.kinds): pause, resume, cancel, budgets and the worker-restart chain work as
for the other kinds."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EvoSynDriver:
    def dispatch(self, campaign) -> bool:
        from .services import evosyn_dispatch

        return evosyn_dispatch(campaign=campaign)

    def run_inline(self, *, campaign_id: int, workers: int = 1, max_steps=None, on_progress=None):
        # One sequential stream per campaign (the search reads every earlier strategy).
        from .services import evosyn_run_inline

        return evosyn_run_inline(
            campaign_id=campaign_id, max_steps=max_steps, on_progress=on_progress
        )
