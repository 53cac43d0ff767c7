"""The document's ablations over one campaign's stored pass matrices: Figure 4b (usable
synthesized problems per M x N) and Table 1 (the consistency score per K, with and without
Criterion-1). Sub-grids are sub-sampled from the stored M x N matrix, so no model is called; the
strategy runs live in the sandbox. A sub-grid is what a campaign at that M and N computes: the
test runs one and compares."""

from __future__ import annotations

import io

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.urls import reverse

from evolution.models import LLMCall
from evolution.models.campaigns import CampaignState
from evolution.services import campaigns as campaign_services
from evolution.streams.runner import run_inline
from evosyn import services
from evosyn.ablation import ablation_run
from evosyn.engine import ablation as A
from evosyn.models import Ablation, InstanceRole, InstanceStatus
from tests.support.answers import fenced

from .helpers import CRASHING, FIGURE_3, SMALL_SETTINGS, respond, script

pytestmark = pytest.mark.django_db


def _campaign(seed_set, endpoint, name: str, settings: dict):
    campaign = services.evosyn_campaign_create(
        name=name, seed_set=seed_set, endpoint=endpoint, settings=settings
    )
    campaign_services.campaign_launch(campaign_id=campaign.pk)
    campaign = run_inline(campaign_id=campaign.pk, max_steps=120)
    assert campaign.state == CampaignState.COMPLETED, campaign.state_reason
    return campaign


@pytest.fixture
def finished(world, fake_server):
    """The demo's data: M = N = 4, one seed, the crashing mutation and Figure 3, three
    synthesized problems (one kept, one pruned for zero variance, one for identical solutions)."""
    seed_set, endpoint = world
    respond(fake_server, script(strategist=[fenced(CRASHING), fenced(FIGURE_3)]))
    return _campaign(seed_set, endpoint, "evosyn ablation", SMALL_SETTINGS)


def _cell(ablation: Ablation, m: int, n: int, k: int) -> dict:
    (cell,) = [c for c in ablation.cells if (c["m"], c["n"], c["k"]) == (m, n, k)]
    return cell


def test_grids_are_parsed_and_cells_beyond_the_stored_matrix_say_why():
    assert A.parse_values("16, 4,8,4", "--m", low=2) == [4, 8, 16]
    with pytest.raises(ValueError, match="--m: 'x' is not an integer"):
        A.parse_values("4,x", "--m", low=2)
    with pytest.raises(ValueError, match="--k: 0 is below 1"):
        A.parse_values("0,1", "--k", low=1)
    with pytest.raises(ValueError, match="at least one value"):
        A.parse_values(",", "--n", low=1)
    assert A.unavailable(m=8, n=4, k=1, stored_m=4, stored_n=4).startswith(
        "the campaign stored M = 4 solutions: M = 8 needs new model calls"
    )
    assert "N = 16 needs new model calls" in A.unavailable(m=4, n=16, k=1, stored_m=4, stored_n=4)
    assert "overlap" in A.unavailable(m=4, n=4, k=3, stored_m=4, stored_n=4)
    assert A.unavailable(m=4, n=4, k=2, stored_m=4, stored_n=4) == ""
    # Solutions by index (a solution without code has no row), the first n testings.
    matrix = {"solutions": [0, 2, 3, 5], "tests": [0, 2, 3], "rows": []}
    assert A.sub_matrix(matrix, m=4, n=2) == ([0, 1, 2], [0, 1])
    assert A.take([[1, 0, 1], [0, 1, 1], [1, 1, 0]], [0, 2], [1, 2]) == [[0, 1], [1, 0]]


def test_a_sub_grid_is_what_a_campaign_at_that_m_and_n_computes(world, fake_server, finished):
    # A second campaign on the same answers at M = 3, N = 4, with the initial strategy only:
    # its solutions are the first three of the same calls, its testings the same four.
    seed_set, endpoint = world
    small = _campaign(
        seed_set,
        endpoint,
        "evosyn m3",
        {**SMALL_SETTINGS, "solutions_per_problem": 3, "max_iterations": 0},
    )
    calls = LLMCall.objects.count()
    ablation = ablation_run(
        campaign_id=finished.pk, m_values=[3, 4], n_values=[4], k_values=[1], strategy="initial"
    )
    assert LLMCall.objects.count() == calls  # no model call
    big_esc, small_esc = finished.evosyn, small.evosyn
    for inst in small_esc.instances.filter(matrix__isnull=False):
        twin = big_esc.instances.get(role=inst.role, slot=inst.slot)
        rows, columns = A.sub_matrix(twin.matrix, m=3, n=4)
        assert A.take(twin.matrix["rows"], rows, columns) == inst.matrix["rows"]
        if inst.role == InstanceRole.SEED:
            assert [twin.human[r] for r in rows] == inst.human
    cell = _cell(ablation, 3, 4, 1)
    assert cell["available"] and cell["seeds"] == 1
    # The consistency score is the small campaign's own score of the same (initial) strategy.
    assert cell["score"] == small_esc.strategies.get(iteration=0).score
    # Figure 4b's measure: the filter keeps what the small campaign kept, pruned for the same
    # reasons.
    synthetic = small_esc.instances.filter(role=InstanceRole.SYNTHETIC)
    kept = synthetic.filter(status=InstanceStatus.KEPT).count()
    assert cell["usable"] == kept == 1 and cell["synthetic"] == 3
    causes = sorted(
        i.status_reason.split(":")[0] for i in synthetic.filter(status=InstanceStatus.PRUNED)
    )
    assert sorted(c for c, n in cell["pruned"].items() for _ in range(n)) == causes
    # One strategy run per (M, N) and instance, live in the sandbox.
    assert ablation.sandbox_executions == 2 * 4
    assert ablation.strategy is None and ablation.strategy_label == "initial (the document's)"


def test_the_grid_shows_figure_4b_and_table_1_trends_on_the_demo_data(finished):
    ablation = ablation_run(
        campaign_id=finished.pk, m_values=[2, 3, 4], n_values=[3, 4], k_values=[1, 2]
    )
    esc = finished.evosyn
    best = esc.best_strategy
    assert ablation.strategy_id == best.pk and ablation.strategy_label == f"best: v{best.version}"
    full = _cell(ablation, 4, 4, 1)
    # The full matrix at K = 1 is the campaign itself: its best strategy's score and its kept
    # problems.
    assert full["score"] == best.score == 1.0
    kept = esc.instances.filter(status=InstanceStatus.KEPT).count()
    assert full["usable"] == kept == 1
    assert full["executions"] == 4 and full["matrix_executions"] == 16
    # Figure 4b: with N = 3 every testing of the sum-of-evens problem accepts the same two
    # solutions (zero variance); the fourth testing, passed by all four, gives the ranking.
    assert _cell(ablation, 4, 3, 1)["usable"] == 0
    assert _cell(ablation, 4, 3, 1)["pruned"] == {"zero variance": 2, "identical solutions": 1}
    # Table 1: K = 2 checks the two best and the two worst solutions: stricter. Figure 3's top
    # testing accepts "always True" (s3, among the two worst), which the human testing rejects.
    at_2 = _cell(ablation, 4, 4, 2)
    assert at_2["score"] == 0.0 and at_2["score_without_c1"] == 0.0 and at_2["executions"] == 8
    assert _cell(ablation, 3, 4, 2)["reason"].startswith("K = 2 > M / 2")
    assert not ablation.replayed


def test_bad_grids_and_strategies_are_refused_by_name(finished):
    with pytest.raises(ValidationError) as bad:
        ablation_run(campaign_id=finished.pk, m_values=[1], n_values=[0], k_values=[1])
    assert set(bad.value.message_dict) == {"m", "n"}
    with pytest.raises(ValidationError) as unknown:
        ablation_run(
            campaign_id=finished.pk, m_values=[4], n_values=[4], k_values=[1], strategy="v99"
        )
    assert "no strategy v99" in unknown.value.message_dict["strategy"][0]
    assert not Ablation.objects.exists()


def test_the_command_prints_the_grid_and_the_page_draws_it(personas, finished):
    client = personas.curator.client
    page_url = reverse("evosyn:campaign_detail", args=[finished.pk])
    data_url = reverse("evosyn:campaign_ablation", args=[finished.pk])
    before = client.get(page_url).content.decode()
    assert 'id="ablation-none"' in before
    assert f"python manage.py evosyn_ablation --campaign {finished.pk}" in before
    assert client.get(data_url).status_code == 404

    out = io.StringIO()
    call_command(
        "evosyn_ablation",
        "--campaign",
        str(finished.pk),
        "--m",
        "4,8",
        "--n",
        "4",
        "--k",
        "1,2",
        stdout=out,
    )
    text = out.getvalue()
    assert "no model call" in text and "replayed" not in text
    assert "  4   4   1     1   1.000   1.000     4  1 of 3" in text
    assert "  8   4   1  not computed: the campaign stored M = 4 solutions" in text
    assert f"Shown on /evosyn/{finished.pk}/#ablation" in text

    page = client.get(page_url).content.decode()
    assert 'id="ablation-cells"' in page and 'id="ablation-consistency"' in page
    assert "M = 8 needs new model calls" in page
    assert "<td>1 of 3</td>" in page
    series = client.get(data_url).json()
    assert series["labels"] == ["M=4 N=4"] and series["k"] == [1, 2]
    assert series["score"] == {"1": [1.0], "2": [0.0]}
    assert series["usable"] == [1] and series["synthetic"] == 3
    assert series["replayed"] is False

    with pytest.raises(CommandError, match="--m: 'x' is not an integer"):
        call_command("evosyn_ablation", "--campaign", str(finished.pk), "--m", "x")
    with pytest.raises(CommandError, match="no EvoSyn campaign 999999"):
        call_command("evosyn_ablation", "--campaign", "999999")
    with pytest.raises(CommandError, match="no strategy v42"):
        call_command("evosyn_ablation", "--campaign", str(finished.pk), "--strategy", "v42")
    assert Ablation.objects.count() == 1
