"""The no-filter ablation of a FrontierSmith campaign (seed document 002: the same mutations,
the coarse and divergence filters skipped), run beside the filtered run and stored; the campaign
page shows both arms (/frontiersmith/<id>/#ablation). ``frontiersmith.ablation`` says what is
reused and what is asked."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from evolution.management.campaign_commands import (
    add_campaign_choice,
    campaign_chosen,
    endpoint_named,
    write_json,
)
from frontiersmith.ablation import MEASURES, no_filter_ablation
from frontiersmith.models import FrontierCampaign


def _value(value) -> str:
    if value is None:
        return "—"
    return f"{value:.4f}" if isinstance(value, float) else str(value)


class Command(BaseCommand):
    help = (
        "Run FrontierSmith's no-filter ablation over a campaign's closed rounds: the same "
        "mutated candidates without the coarse filter and the divergence selections (every "
        "candidate whose scoring environment converges is kept), beside the filtered run. "
        "What the filtered run computed is reused; the candidates the filters removed are "
        "sampled, judged and built, their calls charged to the ablation arm's campaign."
    )

    def add_arguments(self, parser):
        add_campaign_choice(
            parser,
            label="FrontierSmith",
            demo_help="the demo's FrontierSmith campaign (built and run from its cassette when "
            "missing); the arm's new calls are answered by the authored ablation cassette",
        )
        parser.add_argument("--mutator-endpoint", default="", help="endpoint name for the arm")
        parser.add_argument("--solver-endpoint", default="", help="endpoint name for the arm")
        parser.add_argument("--json", default="", help="also write the ablation to this file")

    def handle(self, *args, **options):
        fc, endpoints = self._campaign(options)
        for role in ("mutator", "solver"):
            name = options[f"{role}_endpoint"]
            if name:
                endpoints[role] = endpoint_named(name)
        try:
            ablation = no_filter_ablation(
                campaign_id=fc.pk,
                mutator_endpoint=endpoints.get("mutator"),
                solver_endpoint=endpoints.get("solver"),
            )
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from exc
        self._report(fc, ablation)
        if options["json"]:
            write_json(
                options["json"],
                {
                    "ablation": ablation.pk,
                    "campaign": fc.pk,
                    "arm": ablation.arm_id,
                    "replayed": ablation.replayed,
                    "calls": ablation.calls,
                    "summary": ablation.summary,
                    "candidates": ablation.candidates,
                },
            )

    def _campaign(self, options) -> tuple[FrontierCampaign, dict]:
        from frontiersmith.demo.ablation_pack import ablation_endpoints
        from frontiersmith.demo.setup import frontiersmith_demo

        fc = campaign_chosen(
            options,
            model=FrontierCampaign,
            label="FrontierSmith",
            demo=frontiersmith_demo,
            stderr=self.stderr,
        )
        return fc, ablation_endpoints() if options["demo"] else {}

    def _report(self, fc: FrontierCampaign, ablation) -> None:
        write = self.stdout.write
        replayed = (
            " (replayed answers: model answers came from a replay cassette; every program ran live)"
            if ablation.replayed
            else ""
        )
        write(
            f"FrontierSmith no-filter ablation {ablation.pk} of campaign {fc.pk} "
            f"'{fc.campaign.name}'{replayed}"
        )
        write(
            f"arm campaign {ablation.arm_id}: {ablation.calls} model calls, "
            f"{ablation.reused} candidates reused from the filtered run; "
            f"{ablation.elapsed_s:.1f} s" + (f"; {ablation.stopped}" if ablation.stopped else "")
        )
        filtered, no_filter = ablation.summary["filtered"], ablation.summary["no_filter"]
        write(f"{'measure':<46} {'filtered':>9} {'no filter':>9}")
        for key, label in MEASURES:
            write(f"{label:<46} {_value(filtered[key]):>9} {_value(no_filter[key]):>9}")
        for row in ablation.candidates:
            write(
                f"round {row['round']} #{row['index']} {row['operator']}: filtered "
                f"{row['filtered']}, no filter {row['no_filter']}"
            )
        write(f"Shown on /frontiersmith/{fc.pk}/#ablation")
