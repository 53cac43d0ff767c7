"""The campaign progress bar of the management commands."""

from __future__ import annotations

from evolution.console import ProgressBar as _Bar


class ProgressBar(_Bar):
    def update_campaign(self, campaign) -> None:
        from evolution.benchevolver import selectors

        campaign.refresh_from_db()
        p = selectors.campaign_progress(campaign)
        self.update(
            p["lineages"]["finished"],
            p["lineages"]["total"],
            f"candidates {p['candidates']['proposed']} accepted {p['candidates']['accepted']} calls {p['calls']}",
        )
