"""The reasoning part of `make demo`: replayed endpoints for the three roles and three judges,
and one benchmark (a series) of three runs over the 8 types x 10 difficulties built by two
campaigns, run inline: the first makes runs 1 and 2, the second continues the series with run
3 (its EMAs start where the first stopped, its generator is shown the first's questions, one of
its planted copies of run 2's questions is rejected against them). Idempotent."""

from __future__ import annotations

from evolution.demo.kind_setup import (
    demo_campaign_get_or_create,
    demo_campaign_run,
    replayer,
)
from evolution.models import Campaign

from . import pack

SERIES_NAME = "Demo reasoning benchmark"
CAMPAIGN_NAME = "Demo: self-evolving reasoning benchmark, runs 1-2"
CONTINUED_NAME = "Demo: self-evolving reasoning benchmark, run 3 (continued)"
replayed = replayer(pack.CASSETTE, concurrency_limit=8)


def _create(name: str, runs: int, created_by):
    from reasoning.services import reasoning_campaign_create

    return demo_campaign_get_or_create(
        name,
        lambda: reasoning_campaign_create(
            name=name,
            series=SERIES_NAME,
            generation_endpoint=replayed("demo-question-writer (replayed)", "question-writer"),
            answering_endpoint=replayed("demo-answerer (replayed)", "answerer"),
            judge_endpoints=[replayed(f"{judge} (replayed)", judge) for judge in pack.JUDGES],
            settings={**pack.DEMO_SETTINGS, "runs": runs},
            created_by=created_by,
        ),
    )


def demo_reasoning_campaign(*, created_by=None) -> Campaign:
    """The series' first campaign (runs 1 and 2)."""
    return _create(CAMPAIGN_NAME, pack.FIRST_CAMPAIGN_RUNS, created_by)


def demo_continued_campaign(*, created_by=None) -> Campaign:
    """The series' second campaign (run 3), continuing where the first stopped."""
    return _create(CONTINUED_NAME, pack.CONTINUED_CAMPAIGN_RUNS, created_by)


def _line(campaign: Campaign) -> str:
    rc = campaign.reasoning
    ema = f"{rc.ema:.3f}" if rc.ema is not None else "–"
    numbers = sorted(rc.runs.values_list("number", flat=True))
    runs = f"run{'s' if len(numbers) > 1 else ''} {', '.join(map(str, numbers)) or '–'}"
    return (
        f"'{campaign.name}': {campaign.state}; {runs} of series '{rc.series.name}', "
        f"{rc.items.count()} items, overall EMA {ema} (/reasoning/{campaign.pk}/)"
    )


def reasoning_demo(*, world=None, stdout=None, admin=None) -> Campaign:
    """The demo hook: build and run the series' two campaigns inline, one after the other (a
    series runs one campaign at a time); returns the second."""
    first = demo_campaign_run(demo_reasoning_campaign(created_by=admin), stdout=stdout)
    if stdout:
        stdout.write(_line(first))
    second = demo_campaign_run(demo_continued_campaign(created_by=admin), stdout=stdout)
    if stdout:
        stdout.write(_line(second))
    return second
