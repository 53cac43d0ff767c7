"""The document's ablations (Figure 4b: M x N; Table 1: K with and without Criterion-1) over
an EvoSyn campaign's stored pass matrices, with no model call (``evosyn.ablation``). Prints the
grid and stores it; the campaign page draws it (/evosyn/<id>/#ablation)."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from evolution.management.campaign_commands import add_campaign_choice, campaign_chosen, write_json
from evosyn.ablation import ablation_run
from evosyn.engine import ablation as A
from evosyn.models import EvoSynCampaign


def _grid(text: str) -> str:
    return ",".join(str(v) for v in text)


class Command(BaseCommand):
    help = (
        "Run the EvoSyn document's ablations over a campaign's stored pass matrices: the "
        "consistency score per M x N and K (Table 1, with and without Criterion-1) and the "
        "usable synthesized problems per M x N (Figure 4b). Sub-grids are sub-sampled from the "
        "stored M x N matrix (no model call); cells beyond it are reported, not computed."
    )

    def add_arguments(self, parser):
        add_campaign_choice(
            parser,
            label="EvoSyn",
            demo_help="the demo's EvoSyn campaign (built and run from its cassette when missing)",
        )
        parser.add_argument(
            "--m", default=_grid(A.DOCUMENT_MN), help="solutions per problem, e.g. 4,8,16"
        )
        parser.add_argument(
            "--n", default=_grid(A.DOCUMENT_MN), help="testings per problem, e.g. 4,8,16"
        )
        parser.add_argument(
            "--k", default=_grid(A.DOCUMENT_K), help="Criterion-2's K values, e.g. 1,2,4,8"
        )
        parser.add_argument(
            "--strategy",
            default="best",
            help="best (the campaign's, default), initial (the document's, Table 1's choice) "
            "or a version such as v3",
        )
        parser.add_argument("--json", default="", help="also write the ablation to this file")

    def handle(self, *args, **options):
        try:
            grid = {
                "m_values": A.parse_values(options["m"], "--m", low=2),
                "n_values": A.parse_values(options["n"], "--n", low=1),
                "k_values": A.parse_values(options["k"], "--k", low=1),
            }
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        esc = self._campaign(options)
        try:
            ablation = ablation_run(campaign_id=esc.pk, strategy=options["strategy"], **grid)
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from exc
        self._report(esc, ablation)
        if options["json"]:
            write_json(
                options["json"],
                {
                    "ablation": ablation.pk,
                    "campaign": esc.pk,
                    "strategy": ablation.strategy_label,
                    "replayed": ablation.replayed,
                    "stored_m": ablation.stored_m,
                    "stored_n": ablation.stored_n,
                    "cells": ablation.cells,
                },
            )

    def _campaign(self, options) -> EvoSynCampaign:
        from evosyn.demo.setup import evosyn_demo

        return campaign_chosen(
            options, model=EvoSynCampaign, label="EvoSyn", demo=evosyn_demo, stderr=self.stderr
        )

    def _report(self, esc: EvoSynCampaign, ablation) -> None:
        write = self.stdout.write
        replayed = (
            " (replayed answers: the stored solutions and testings came from a replay "
            "cassette; every program ran live)"
            if ablation.replayed
            else ""
        )
        write(f"EvoSyn ablation {ablation.pk} of campaign {esc.pk} '{esc.campaign.name}'{replayed}")
        write(
            f"strategy {ablation.strategy_label}; stored M = {ablation.stored_m}, "
            f"N = {ablation.stored_n}; {ablation.sandbox_executions} sandbox executions, "
            f"no model call; {ablation.elapsed_s:.1f} s"
        )
        write(
            f"{'M':>3} {'N':>3} {'K':>3} {'seeds':>5} {'C1+C2':>7} {'C2 only':>7} "
            f"{'#Exec':>5}  usable"
        )
        for c in ablation.cells:
            head = f"{c['m']:>3} {c['n']:>3} {c['k']:>3}"
            if not c["available"]:
                write(f"{head}  not computed: {c['reason']}")
                continue
            pruned = ", ".join(f"{cause} {n}" for cause, n in c["pruned"].items())
            write(
                f"{head} {c['seeds']:>5} {c['score']:>7.3f} {c['score_without_c1']:>7.3f} "
                f"{c['executions']:>5}  {c['usable']} of {c['synthetic']}"
                + (f" (pruned: {pruned})" if pruned else "")
            )
        write(f"Shown on /evosyn/{esc.pk}/#ablation")
