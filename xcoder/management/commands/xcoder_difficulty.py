"""The difficulty estimate of a finished X-Coder campaign (appendix B.3 done differently): the
judge model's Codeforces-style rating of every accepted task that has none yet, asked by the
stage's own step (``xcoder.stages.difficulty.rate``), each call in the campaign's ledger and
budget. The campaign page shows the ratings beside the panel's pass@1 with Spearman's rho
(/xcoder/<id>/#difficulty)."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from evolution.llm import LLMError
from evolution.management.campaign_commands import (
    add_campaign_choice,
    campaign_chosen,
    endpoint_named,
    write_json,
)
from evolution.models import LLMCall, ModelEndpoint
from evolution.models.campaigns import CampaignState
from xcoder import selectors
from xcoder.models import XcoderCampaign
from xcoder.stages import difficulty as stage

# The runner may be asking for the same estimates while the campaign is in one of these.
NOT_FINISHED = (CampaignState.DRAFT, CampaignState.QUEUED, CampaignState.RUNNING)


class Command(BaseCommand):
    help = (
        "Rate every accepted task of a finished X-Coder campaign that has no difficulty "
        "estimate yet: a judge model's Codeforces-style rating of the statement (B.3 done "
        "differently), asked by the campaign's difficulty stage and charged to the campaign. "
        "Tasks already rated are left as they are; a rerun asks for nothing."
    )

    def add_arguments(self, parser):
        add_campaign_choice(
            parser,
            label="X-Coder",
            demo_help="the demo's X-Coder campaign (built and run from its cassette when "
            "missing); the judge's answers are replayed from the authored difficulty cassette",
        )
        parser.add_argument(
            "--judge-endpoint",
            default="",
            help="endpoint name of the judge (default: the campaign's difficulty_judge setting, "
            "else its generator endpoint; with --demo, the replayed demo judge)",
        )
        parser.add_argument("--json", default="", help="also write the estimates to this file")

    def handle(self, *args, **options):
        xc, judge = self._campaign(options)
        if options["judge_endpoint"]:
            judge = endpoint_named(options["judge_endpoint"])
        state = xc.campaign.state
        if state in NOT_FINISHED:
            raise CommandError(
                f"X-Coder campaign {xc.pk} is {state}: rate its tasks once it has finished"
            )
        before = LLMCall.objects.filter(campaign_id=xc.pk).count()
        failure = ""
        try:
            asked = stage.rate_campaign(xc.pk, judge)
        except LLMError as exc:
            asked, failure = None, str(exc)
        calls = LLMCall.objects.filter(campaign_id=xc.pk).count() - before
        summary = selectors.difficulty_agreement(xc)
        self._report(xc, summary, calls, asked)
        if options["json"]:
            write_json(options["json"], _json(xc, summary, calls, failure))
        if failure:
            raise CommandError(f"a judge call failed (the other answers are stored): {failure}")

    def _campaign(self, options) -> tuple[XcoderCampaign, ModelEndpoint | None]:
        from xcoder.demo.difficulty_pack import judge_endpoint
        from xcoder.demo.setup import xcoder_demo

        xc = campaign_chosen(
            options, model=XcoderCampaign, label="X-Coder", demo=xcoder_demo, stderr=self.stderr
        )
        return xc, judge_endpoint() if options["demo"] else None

    def _report(self, xc: XcoderCampaign, summary: dict, calls: int, asked) -> None:
        write = self.stdout.write
        replayed = (
            " (replayed answers: the judge's answers came from a replay cassette; the parser and "
            "the calibration ran live)"
            if summary["replayed"]
            else ""
        )
        write(f"X-Coder difficulty estimate of campaign {xc.pk} '{xc.campaign.name}'{replayed}")
        write(f"method: {summary['method']}")
        newly = "stopped by a failed call" if asked is None else f"{len(asked)} task(s) asked for"
        write(f"{newly}; {calls} model call(s) charged to the campaign")
        write(f"{'task':>4} {'rating':>7} {'pass@1':>7}  judge")
        for row in summary["rows"]:
            rating = row["rating"] if row["status"] == "ok" else f"failed: {row['reason']}"
            passed = "—" if row["pass_at_1"] is None else f"{row['pass_at_1']:.2f}"
            mark = " (replayed)" if row["replayed"] else ""
            write(f"{row['task'].index:>4} {rating!s:>7} {passed:>7}  {row['judge']}{mark}")
        rho = summary["spearman"]
        write(
            "Spearman's rho (judged rating vs measured pass@1): "
            + ("not computed (needs at least 3 varying pairs)" if rho is None else f"{rho:.3f}")
            + f", n = {summary['n']}"
        )
        write(f"Shown on /xcoder/{xc.pk}/#difficulty")


def _json(xc: XcoderCampaign, summary: dict, calls: int, failure: str) -> dict:
    return {
        "campaign": xc.pk,
        "method": summary["method"],
        "calls": calls,
        "replayed": summary["replayed"],
        "rated": summary["rated"],
        "failed": summary["failed"],
        "spearman": summary["spearman"],
        "n": summary["n"],
        "error": failure,
        "tasks": [
            {
                "index": row["task"].index,
                "status": row["status"],
                "rating": row["rating"],
                "reason": row["reason"],
                "pass_at_1": row["pass_at_1"],
                "judge": row["judge"],
                "replayed": row["replayed"],
            }
            for row in summary["rows"]
        ],
    }
