"""The reasoning demo pack: the committed cassette is what pack.py writes, and the demo
campaign runs to the end on replayed responses with its planted stories computed live."""

from __future__ import annotations

import pytest

from reasoning.demo import pack
from reasoning.demo.setup import reasoning_demo
from reasoning.models import ItemStatus

pytestmark = pytest.mark.django_db


def test_the_committed_cassette_is_exactly_what_the_pack_writes():
    committed = pack.CASSETTE.read_text(encoding="utf-8").splitlines()
    assert committed == pack.cassette_lines()


@pytest.mark.slow
def test_the_demo_campaign_runs_on_replayed_responses(personas):
    campaign = reasoning_demo(admin=personas.admin.user)
    campaign.refresh_from_db()
    assert campaign.state == "completed", campaign.state_reason
    assert campaign.replayed
    rc = campaign.reasoning
    assert rc.run_count == pack.RUNS
    runs = list(rc.runs.order_by("number"))
    # Weak-area focus: from run 2 on, the two lowest-EMA types get a second question per cell.
    assert [sum(t["weak"] for t in r.plan) for r in runs] == [0, 2, 2]
    assert rc.items.filter(run__number=1).count() == 80
    assert rc.items.filter(run__number=2).count() == 80 + 2 * 10
    # Planted stories, decided live: two copied drafts rejected for novelty, one draft rejected
    # by the quality filter, judge B's prose answers as parse failures, judge C's dissent.
    regenerated = rc.items.filter(regenerations__gt=0)
    reasons = [d["reason"] for item in regenerated for d in item.rejected_drafts]
    assert sum("too similar" in r for r in reasons) == 2
    assert sum("quality filter" in r for r in reasons) == 1
    assert rc.items.filter(parse_failures=1).count() == 2
    assert rc.items.filter(disagreement=True).count() > 5
    assert not rc.items.exclude(status=ItemStatus.JUDGED).exists()
    # Per item: one question, one quality verdict, one answer, three judges; plus the two
    # regenerated copies (a question each) and the quality rejection (a question and a verdict).
    assert rc.items.count() == 280
    assert campaign.calls_made == 280 * 6 + 2 + 2
    # The scripted answerer gets harder levels wrong more often: the EMA falls with difficulty.
    assert rc.ema_by_difficulty["1"] > rc.ema_by_difficulty["10"]
    assert all(r.report.startswith("# Self-evolving benchmark report") for r in runs)
    # Running the hook again reuses the finished campaign.
    assert reasoning_demo(admin=personas.admin.user).pk == campaign.pk
