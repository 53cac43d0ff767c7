"""Launch (or create and launch) a campaign; follow it with a progress bar.

manage.py run_campaign 12 --follow                 # launch on the workers, watch
manage.py run_campaign 12 --inline                 # run in this process (no workers)
manage.py run_campaign --create --name N --seed-set S --evolver E --panel P [--algorithm-settings JSON] --follow
manage.py run_campaign 12 --pause | --resume | --cancel
"""

from __future__ import annotations

import json
import time

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from evolution.benchevolver import services as benchevolver_services
from evolution.models import Campaign, ModelEndpoint, Panel, ProblemSet
from evolution.models.campaigns import CampaignState
from evolution.progress import ProgressBar
from evolution.services import campaigns as campaign_services
from evolution.streams.runner import run_inline


class Command(BaseCommand):
    help = "Launch, follow, pause, resume or cancel a campaign."

    def add_arguments(self, parser):
        parser.add_argument("campaign_id", nargs="?", type=int)
        parser.add_argument("--create", action="store_true")
        parser.add_argument("--name")
        parser.add_argument("--seed-set")
        parser.add_argument("--evolver", help="endpoint name")
        parser.add_argument("--panel", help="panel name")
        # Not --settings: that is Django's own option (the settings module) on every command.
        parser.add_argument(
            "--algorithm-settings",
            default="{}",
            help="JSON object of algorithm settings, e.g. '{\"target_eval_k\": 4}'",
        )
        parser.add_argument("--seed-limit", type=int)
        parser.add_argument(
            "--follow", action="store_true", help="show progress until the campaign ends"
        )
        parser.add_argument("--inline", action="store_true", help="run the steps in this process")
        parser.add_argument("--workers", type=int, default=2, help="threads for --inline")
        group = parser.add_mutually_exclusive_group()
        group.add_argument("--pause", action="store_true")
        group.add_argument("--resume", action="store_true")
        group.add_argument("--cancel", action="store_true")

    def handle(self, *args, **o):
        campaign = self._create(o) if o["create"] else self._get(o["campaign_id"])
        try:
            if o["pause"]:
                campaign = campaign_services.campaign_pause(campaign_id=campaign.pk)
            elif o["resume"]:
                campaign = campaign_services.campaign_resume(campaign_id=campaign.pk)
            elif o["cancel"]:
                campaign = campaign_services.campaign_cancel(campaign_id=campaign.pk)
            elif campaign.state == CampaignState.DRAFT:
                campaign = campaign_services.campaign_launch(campaign_id=campaign.pk)
        except campaign_services.TransitionError as exc:
            raise CommandError(str(exc))
        self.stdout.write(f"campaign {campaign.pk} '{campaign.name}': {campaign.state}")
        if o["inline"] and campaign.state in (CampaignState.QUEUED, CampaignState.RUNNING):
            bar = ProgressBar(self.stderr, label=f"campaign {campaign.pk}")
            campaign = run_inline(
                campaign_id=campaign.pk,
                workers=o["workers"],
                max_steps=None,
                on_progress=bar.update_campaign,
            )
            bar.close()
        elif o["follow"]:
            campaign = self._follow(campaign)
        self.stdout.write(f"campaign {campaign.pk}: {campaign.state} ({campaign.state_reason})")

    def _get(self, campaign_id):
        if campaign_id is None:
            raise CommandError("give a campaign id, or --create")
        try:
            return Campaign.objects.get(pk=campaign_id)
        except Campaign.DoesNotExist:
            raise CommandError(f"campaign {campaign_id} does not exist")

    def _create(self, o) -> Campaign:
        missing = [k for k in ("name", "seed_set", "evolver", "panel") if not o[k]]
        if missing:
            raise CommandError(
                "--create needs " + ", ".join(f"--{m.replace('_', '-')}" for m in missing)
            )
        try:
            settings = json.loads(o["algorithm_settings"])
        except json.JSONDecodeError as exc:
            raise CommandError(f"--algorithm-settings is not valid JSON: {exc}")
        refs = {}
        for key, model, field in (
            ("seed_set", ProblemSet, "name"),
            ("evolver", ModelEndpoint, "name"),
            ("panel", Panel, "name"),
        ):
            refs[key] = model.objects.filter(**{field: o[key]}).first()
            if refs[key] is None:
                raise CommandError(
                    f"--{key.replace('_', '-')}: no {model.__name__} named {o[key]!r}"
                )
        try:
            return benchevolver_services.campaign_create(
                name=o["name"], settings=settings, seed_limit=o["seed_limit"], **refs
            )
        except ValidationError as exc:
            raise CommandError(
                "; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())
            )

    def _follow(self, campaign: Campaign) -> Campaign:
        bar = ProgressBar(self.stderr, label=f"campaign {campaign.pk}")
        try:
            while True:
                campaign.refresh_from_db()
                bar.update_campaign(campaign)
                if campaign.state not in (CampaignState.QUEUED, CampaignState.RUNNING):
                    return campaign
                time.sleep(1.0)
        finally:
            bar.close()
