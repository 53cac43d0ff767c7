"""The in-process runner for a campaign of any kind (``make demo``, ``run_campaign --inline``):
the shared ``evolution.streams.runner.run_inline`` under the name callers already use."""

from __future__ import annotations

from collections.abc import Callable

from evolution.models import Campaign


def campaign_run_inline(
    *,
    campaign_id: int,
    workers: int = 2,
    max_steps: int | None = None,
    on_progress: Callable[[Campaign], None] | None = None,
) -> Campaign:
    from evolution.streams.runner import run_inline

    return run_inline(
        campaign_id=campaign_id, workers=workers, max_steps=max_steps, on_progress=on_progress
    )
