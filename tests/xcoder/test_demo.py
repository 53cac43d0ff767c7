"""The X-Coder demo runs offline on its authored cassette: the tree grows, a Codeforces-style
and a LeetCode-style task are accepted by the live vote, a leaky statement is rejected."""

from __future__ import annotations

import io
import time

import pytest

from evolution.measurement.models import Measurement
from evolution.models import LLMCall, Problem
from evolution.models.campaigns import CampaignState
from xcoder.demo import pack
from xcoder.demo.setup import xcoder_demo
from xcoder.models import SynthTask, TaskStatus

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_demo_campaign_runs_on_the_cassette():
    out = io.StringIO()
    started = time.monotonic()
    campaign = xcoder_demo(stdout=out)
    elapsed = time.monotonic() - started
    assert campaign.state == CampaignState.COMPLETED, campaign.state_reason
    assert campaign.replayed
    tasks = {t.index: t for t in SynthTask.objects.filter(xcoder_id=campaign.pk)}
    assert (tasks[0].style, tasks[0].status) == ("codeforces", TaskStatus.ACCEPTED)
    assert (tasks[1].style, tasks[1].status) == ("leetcode", TaskStatus.ACCEPTED)
    assert (tasks[2].status, tasks[2].reason_code) == (TaskStatus.REJECTED, "hint_leakage")
    leet = Problem.objects.get(pk=tasks[1].problem_id)
    assert (leet.harness, leet.entry_point) == ("function", "stable_stretches")
    # The wrong solver loses the vote on the tests where the last stretch counts.
    ver = tasks[1].verification
    assert ver["golden"] is not None and any(row[2] is False for row in ver["agree"])
    xc = campaign.xcoder
    assert (sum(xc.counts_extracted.values()), sum(xc.counts_evolved.values())) == (19, 31)
    # The demo panel measured both accepted tasks (replayed attempts, live judging): one
    # model solves them, the other is wrong on larger inputs.
    for task in (tasks[0], tasks[1]):
        m = Measurement.objects.get(campaign=campaign, problem_id=task.problem_id)
        assert (m.state, m.passes, m.attempts) == ("completed", 2, 4), m.reason
        assert m.per_model["xcoder-panel-q (replayed)"]["passes"] == 0
    # Every call was answered by the cassette; re-running the hook changes nothing.
    calls = LLMCall.objects.count()
    assert calls == len(pack.answers())
    assert xcoder_demo().pk == campaign.pk and LLMCall.objects.count() == calls
    assert "2 of 3 tasks accepted" in out.getvalue()
    assert elapsed < 60


def test_the_committed_cassette_is_exactly_what_the_pack_writes(tmp_path):
    written = tmp_path / "cassette.jsonl"
    pack.write_cassette(written)
    assert written.read_text() == pack.CASSETTE.read_text()
