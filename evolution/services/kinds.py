"""Campaign kinds plug into the shared orchestration through a driver.

The lifecycle (launch / pause / resume / cancel, budgets, the periodic tick, the live page)
is common; what a kind does is its driver's:

- ``dispatch(campaign) -> bool``: enqueue the work that has none in flight (each unit claimed
  with a lease or ticket, idempotent); return True when the campaign has no work left.
- ``run_inline(campaign_id, workers, max_steps, on_progress) -> Campaign``: the same work in
  this process (the embedded demo and `run_campaign --inline`).

Apps register their kinds in ``AppConfig.ready()`` with ``register(kind, driver)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


class CampaignDriver(Protocol):
    def dispatch(self, campaign) -> bool: ...

    def run_inline(
        self, *, campaign_id: int, workers: int, max_steps: int | None, on_progress
    ) -> object: ...


_DRIVERS: dict[str, CampaignDriver] = {}


def register(kind: str, driver: CampaignDriver) -> None:
    _DRIVERS[kind] = driver


def driver_for(kind: str) -> CampaignDriver:
    try:
        return _DRIVERS[kind]
    except KeyError:
        raise LookupError(f"no driver is registered for campaign kind {kind!r}") from None


@dataclass(frozen=True)
class BenchEvolverDriver:
    """Lineages of seeds, advanced by the step machine in services.steps."""

    def dispatch(self, campaign) -> bool:
        from .campaigns import lineages_dispatch

        return lineages_dispatch(campaign)

    def run_inline(self, *, campaign_id: int, workers: int = 2, max_steps=None, on_progress=None):
        from .runner import campaign_run_inline

        return campaign_run_inline(
            campaign_id=campaign_id, workers=workers, max_steps=max_steps, on_progress=on_progress
        )
