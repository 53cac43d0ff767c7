"""The EvoSyn demo runs offline on its authored cassette, every program executed live: the
strategy search records the crashing mutation and keeps Figure 3, one synthesized problem is
kept and two are pruned with their reasons, and the replayed panel measures the kept one."""

from __future__ import annotations

import io
import time

import pytest

from evolution.measurement.models import Measurement
from evolution.measurement.panel import statement_hash
from evolution.models import LLMCall
from evolution.models.campaigns import CampaignState
from evosyn.demo import pack
from evosyn.demo.setup import evosyn_demo
from evosyn.models import InstanceRole, InstanceStatus

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_demo_campaign_runs_on_the_cassette():
    out = io.StringIO()
    started = time.monotonic()
    campaign = evosyn_demo(stdout=out)
    elapsed = time.monotonic() - started
    assert campaign.state == CampaignState.COMPLETED, campaign.state_reason
    assert campaign.replayed
    esc = campaign.evosyn
    synthetic = {i.entry_point: i for i in esc.instances.filter(role=InstanceRole.SYNTHETIC)}
    assert synthetic["sum_evens"].status == InstanceStatus.KEPT
    assert {synthetic["is_blank"].status, synthetic["triple_it"].status} == {InstanceStatus.PRUNED}
    assert all(synthetic[e].status_reason for e in ("is_blank", "triple_it"))
    # Four testings, each one authored answer's unit-test list.
    seed = esc.instances.get(role=InstanceRole.SEED)
    assert seed.matrix["sizes"] == [len(t) for t in pack.SEED_TESTINGS] == [1, 2, 1, 1]
    assert seed.matrix["rows"] == [[1, 1, 0, 1], [1, 1, 0, 1], [1, 0, 0, 0], [0, 0, 1, 1]]
    strategies = list(esc.strategies.order_by("version"))
    assert len(strategies) == 3 and any(s.status == "failed" for s in strategies)

    kept = synthetic["sum_evens"].kept_problem
    m = Measurement.objects.get(campaign=campaign, problem=kept)
    assert (m.state, m.passes, m.attempts) == ("completed", 2, 4), m.reason
    assert m.per_model["evosyn-panel-q (replayed)"]["verdicts"] == {"WA": 2}
    assert pack.statement_hash(kept.statement) == statement_hash(kept.statement)

    # Every call was answered by the cassette; re-running the hook changes nothing.
    calls = LLMCall.objects.count()
    assert LLMCall.objects.filter(status="ok").count() == calls
    assert evosyn_demo().pk == campaign.pk and LLMCall.objects.count() == calls
    assert "1 synthesized problem(s) kept" in out.getvalue()
    assert elapsed < 90


def test_the_committed_cassette_is_exactly_what_the_pack_writes(tmp_path):
    written = tmp_path / "cassette.jsonl"
    pack.write_cassette(written)
    assert written.read_text() == pack.CASSETTE.read_text()
