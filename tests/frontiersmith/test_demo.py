"""The FrontierSmith demo runs offline on its authored cassette, every program executed live:
one round of four proposals gives one accepted open-ended problem with a real score spread,
one proposal whose verifier never converges, one the coarse filter rejects and one dropped at
the final selection; the coarse filter's error rates are measured on the bundled labelled
sets."""

from __future__ import annotations

import io
import time

import pytest

from evolution.models import LLMCall
from evolution.models.campaigns import CampaignState
from frontiersmith import calibration, selectors
from frontiersmith.demo import pack
from frontiersmith.demo.setup import frontiersmith_demo
from frontiersmith.models import CandidateDecision

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_demo_campaign_runs_on_the_cassette():
    out = io.StringIO()
    started = time.monotonic()
    campaign = frontiersmith_demo(stdout=out)
    elapsed = time.monotonic() - started
    assert campaign.state == CampaignState.COMPLETED, campaign.state_reason
    assert campaign.replayed
    decisions = [c.decision for c in campaign.frontier.candidates.order_by("index")]
    assert decisions == [
        CandidateDecision.ACCEPTED,
        CandidateDecision.NOT_CONVERGED,
        CandidateDecision.FILTERED_OUT,
        CandidateDecision.LOW_EXEC_DIVERGENCE,
    ]
    accepted = campaign.frontier.candidates.get(decision=CandidateDecision.ACCEPTED)
    problem = accepted.accepted_problem
    assert problem.comparison["mode"] == "score" and problem.tests.count() == 3
    assert accepted.score_spread > 0

    # Every call was answered by the cassette (each authored answer once); re-running the
    # hook changes nothing.
    calls = LLMCall.objects.count()
    assert calls == len(pack.answers())
    assert LLMCall.objects.filter(status="ok").count() == calls
    assert frontiersmith_demo().pk == campaign.pk and LLMCall.objects.count() == calls
    assert "1 open-ended problem(s) accepted" in out.getvalue()

    # The coarse filter was measured on the bundled authored labelled sets at first use:
    # the authored answers miss one problem of each label.
    rates = selectors.filter_rates(fc=campaign.frontier)
    closed, opened = (len(v) for v in calibration.sets().values())
    assert (rates["closed"], rates["open"]) == (closed, opened) == (8, 8)
    assert rates["false_positive"] == pytest.approx(1 / closed)
    assert rates["false_negative"] == pytest.approx(1 / opened)
    assert rates["sets"]["closed"] == {"name": calibration.SET_NAMES["closed"], "bundled": True}
    assert elapsed < 90


def test_the_committed_cassette_is_exactly_what_the_pack_writes(tmp_path):
    written = tmp_path / "cassette.jsonl"
    pack.write_cassette(written)
    assert written.read_text() == pack.CASSETTE.read_text()
