"""The campaign-kind driver that plugs X-Coder campaigns into the shared tick
(evolution.services.kinds): pause, resume, cancel, budgets and the worker-restart chain work as
for every other kind."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class XcoderDriver:
    def dispatch(self, campaign) -> bool:
        from .services import xcoder_dispatch

        return xcoder_dispatch(campaign=campaign)

    def run_inline(self, *, campaign_id: int, workers: int = 1, max_steps=None, on_progress=None):
        # One stream per campaign (the tree grows before tasks are sampled from it).
        from .services import xcoder_run_inline

        return xcoder_run_inline(
            campaign_id=campaign_id, max_steps=max_steps, on_progress=on_progress
        )
