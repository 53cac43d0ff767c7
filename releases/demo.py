"""Demo content for `make demo`: a gate report over the demo campaign and the other kinds' demo
campaigns (X-Coder, EvoSyn, FrontierSmith), a published v1.0.0 with its card, changelog and
exports, and a leaderboard for the demo panel.

The gate runs with the paper's default rules, for real. The demo campaign is tiny and only
some of its problems were reviewed, so the demo curator includes the accepted problems that
the gate held back for missing reviews or difficulty, each with a justification that says
so; those items show up as "included against the gate" everywhere. The leaderboard runs the
demo panel's replayed endpoints on the release (their recorded answers), judged live.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError

from evolution.models import Campaign, Problem
from evolution.models.campaigns import CampaignKind, CampaignState

from . import leaderboard, services
from .models import Benchmark, LeaderboardRun, Release, ReleaseState, RunState

DEMO_BENCHMARK = "BenchForge-Demo-Plus"
OTHER_KINDS = [CampaignKind.XCODER, CampaignKind.EVOSYN, CampaignKind.FRONTIERSMITH]
DEMO_NOTE = (
    "Demo curator: the demo campaign is tiny and partly unreviewed; included against the gate "
    "so the demo release has content. Not a quality judgement."
)


def releases_demo(*, world, stdout, admin) -> Release | None:
    campaign = world.completed
    if campaign is None or campaign.state != CampaignState.COMPLETED:
        raise CommandError("Demo: no release, because the demo campaign has not completed.")
    curator = get_user_model().objects.filter(username="demo-curator").first() or admin
    bench = Benchmark.objects.filter(name=DEMO_BENCHMARK).first() or services.benchmark_create(
        name=DEMO_BENCHMARK,
        description="Evolved problems from the demo campaign, synthesized ones from the "
        "X-Coder, EvoSyn and FrontierSmith demos, plus hard original seeds, selected by the "
        "LiveCodeBench-Plus gate (replayed model responses).",
        # The demo runs no independent evaluation: its gate reads the selection-time pass@1,
        # which every difficulty rule then labels with this reason.
        default_rules={
            "require_independent": False,
            "selection_time_reason": "demo: replayed responses and no independent "
            "evaluation; the campaign panels' figures are read as they are",
        },
    )
    release = Release.objects.filter(benchmark=bench, major=1, minor=0, patch=0).first()
    if release is None:
        # Every kind's completed demo campaign: their problems carry a panel measurement
        # (X-Coder, EvoSyn) or a score spread (FrontierSmith) and the demo round's reviews.
        others = Campaign.objects.filter(
            state=CampaignState.COMPLETED, kind__in=OTHER_KINDS
        ).order_by("kind", "pk")
        release = services.release_create(
            benchmark=bench,
            campaigns=[campaign, *others],
            notes="Built by `make demo` from replayed model responses and live execution.",
            created_by=curator,
        )
    if release.state == ReleaseState.DRAFT:
        run = services.gate_run_create(release=release, by=curator)
        for entry in services.release_selection(release=release):
            failed = {r["rule"] for r in entry["rules"] if not r["passed"]}
            held_back = failed and failed <= {"reviews", "quality", "difficulty"}
            if entry["origin"] == "evolved" and not entry["included"] and held_back:
                services.curation_decide(
                    release=release,
                    problem=Problem.objects.get(pk=entry["problem_id"]),
                    include=True,
                    justification=DEMO_NOTE,
                    by=curator,
                )
        stdout.write(f"Gate: {run.passed} of {run.candidates} candidates pass the default rules.")
        try:
            release = services.release_freeze(release=release, by=curator)
        except Exception as exc:
            raise CommandError(f"Demo: could not freeze {bench.name} v1.0.0 ({exc}).") from exc
    if release.state == ReleaseState.FROZEN:
        release = services.release_publish(release=release)
    for member in world.panel.members.select_related("endpoint"):
        done = LeaderboardRun.objects.filter(
            release=release, endpoint=member.endpoint, state=RunState.COMPLETED
        ).exists()
        if not done:
            run = leaderboard.run_create(
                release=release, endpoint=member.endpoint, samples=member.attempts or 4, by=curator
            )
            leaderboard.run_execute(run_id=run.pk)
    if release.state != ReleaseState.PUBLISHED:
        raise CommandError(
            f"Demo: {bench.name} v{release.version} is {release.state}, not published."
        )
    board = check_leaderboard(release=release, panel=world.panel)
    stdout.write(
        f"Release {bench.name} v{release.version} published ({release.item_count} problems, "
        f"hash {release.content_hash[:12]}), leaderboard for {world.panel.name}: {board}."
    )
    return release


def check_leaderboard(*, release: Release, panel) -> str:
    """What the demo announces of the leaderboard, checked first: every panel model has a
    completed run with a judged sample for each item of the release. CommandError naming the
    model and the reason otherwise (a demo that said "leaderboard" over failed runs was the
    defect this replaces)."""
    items = release.items.count()
    shown = []
    for member in panel.members.select_related("endpoint"):
        run = (
            LeaderboardRun.objects.filter(release=release, endpoint=member.endpoint)
            .order_by("-pk")
            .first()
        )
        if run is None or run.state != RunState.COMPLETED:
            why = "no run" if run is None else f"{run.state}: {run.error or 'no reason recorded'}"
            raise CommandError(f"Demo: the leaderboard of {member.endpoint.name} failed ({why}).")
        judged = (
            run.samples.exclude(verdict=leaderboard.INFRA_ERROR).values("item").distinct().count()
        )
        if judged != items:
            raise CommandError(
                f"Demo: the leaderboard of {member.endpoint.name} judged {judged} of the "
                f"release's {items} problems."
            )
        passed = run.samples.filter(verdict="AC").count()
        shown.append(f"{member.endpoint.model} {passed}/{run.samples.count()} samples passed")
    if not shown:
        raise CommandError(f"Demo: the panel {panel.name} has no model to put on the leaderboard.")
    return ", ".join(shown)
