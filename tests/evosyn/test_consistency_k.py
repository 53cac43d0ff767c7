"""Criterion-2's K (the document's Table 1): the top-K and the bottom-K ranked solutions must
each behave on the human testing as on the strategy's top testing. K = 1 is the document's
setting (with Criterion-1); ``consistency_k`` sets it, at most M / 2, and the strategy search
scores every program at the campaign's K."""

from __future__ import annotations

import json

import pytest
from django.core.exceptions import ValidationError

from evolution.models.campaigns import CampaignKind, CampaignState
from evolution.services import campaigns as campaign_services
from evolution.streams.runner import run_inline
from evosyn import services
from evosyn.config import EvoSynSettings
from evosyn.engine import strategy as S
from evosyn.models import StrategyStatus
from tests.support.answers import fenced

from .helpers import SMALL_SETTINGS, respond, script

# Ranks testing t0 first and the solutions in id order. On the world's seed (solutions: two
# right, "always False", "always True"; human testing: [right, right, wrong, wrong]) t0 accepts
# s0, s1 and s2 ("always False" passes t0's only unit test, whose answer is False).
T0_FIRST = """import json, sys
json.load(sys.stdin)
print(json.dumps({"testings": ["t0", "t1", "t2", "t3"], "solutions": ["s0", "s1", "s2", "s3"]}))
"""


def test_k_widens_criterion_2_to_the_top_k_and_bottom_k_solutions():
    # Solutions ranked s0..s3; the human testing accepts s0 and s1; the top testing accepts s0.
    matrix = [[1, 0], [0, 0], [0, 1], [0, 1]]
    human = [True, True, False, False]
    ranking = S.Ranking(tests=[0, 1], solutions=[0, 1, 2, 3])
    at_1 = S.check_instance(0, ranking, matrix=matrix, human=human)
    # K = 1: the best (s0: passes both) and the worst (s3: fails both) agree.
    assert at_1.criterion1 and at_1.criterion2 and at_1.k == 1
    # K = 2 also checks s1, which passes the human testing and fails the top testing.
    at_2 = S.check_instance(0, ranking, matrix=matrix, human=human, k=2)
    assert at_2.criterion1 and not at_2.criterion2 and at_2.k == 2
    assert S.consistent_solutions(ranking, 2) == [0, 1, 2, 3]
    assert S.consistent_solutions(ranking, 1) == [0, 3]
    assert S.evaluate([at_2]).to_dict()["k"] == 2
    # Table 1's #Exec: 4 at K = 1, 32 at K = 8 ("8x fewer executions").
    assert [S.executions_per_instance(k) for k in (1, 2, 4, 8)] == [4, 8, 16, 32]
    with pytest.raises(ValueError, match="at least 1"):
        S.check_instance(0, ranking, matrix=matrix, human=human, k=0)


def test_k_defaults_to_the_documents_1_and_is_validated_against_m():
    assert EvoSynSettings.from_dict({}).consistency_k == 1
    assert EvoSynSettings.source("consistency_k") == "paper (§4.2, Table 1: K = 1 with Criterion-1)"
    # Table 1 goes up to K = M / 2 (K = 8 of M = 16).
    assert EvoSynSettings.from_dict({"consistency_k": 8}).consistency_k == 8
    with pytest.raises(ValidationError) as bad:
        EvoSynSettings.from_dict({"solutions_per_problem": 4, "consistency_k": 3})
    (message,) = bad.value.message_dict["consistency_k"]
    assert "at most M / 2 = 2" in message and "overlap" in message
    with pytest.raises(ValidationError) as low:
        EvoSynSettings.from_dict({"consistency_k": 0})
    assert low.value.message_dict["consistency_k"] == ["consistency_k must be in [1, 32]"]


@pytest.mark.django_db
def test_the_api_names_a_k_above_m_over_2(personas, world):
    seed_set, endpoint = world
    response = personas.admin.client.post(
        "/api/evosyn/campaigns",
        json.dumps(
            {
                "name": "k too large",
                "seed_set": seed_set.name,
                "endpoint_id": endpoint.pk,
                "settings": {"solutions_per_problem": 4, "consistency_k": 3},
            }
        ),
        content_type="application/json",
    )
    assert response.status_code == 400
    assert list(response.json()["errors"]) == ["consistency_k"]
    assert "at most M / 2 = 2" in response.json()["errors"]["consistency_k"][0]
    from evolution.models import Campaign

    assert not Campaign.objects.filter(kind=CampaignKind.EVOSYN).exists()


@pytest.mark.django_db
def test_the_search_scores_each_strategy_at_the_campaigns_k(world, fake_server):
    seed_set, endpoint = world
    seen: dict[str, str] = {}
    responder = respond(fake_server, script(strategist=[fenced(T0_FIRST)]))

    def capture(body, headers):
        key = headers.get("X-BenchForge-Key", headers.get("x-benchforge-key", ""))
        seen[key] = json.dumps(body.get("messages"))
        return responder(body, headers)

    fake_server.responder = capture
    scores = {}
    for k in (1, 2):
        campaign = services.evosyn_campaign_create(
            name=f"evosyn k={k}",
            seed_set=seed_set,
            endpoint=endpoint,
            settings={
                **SMALL_SETTINGS,
                "max_iterations": 1,
                "synth_problems": 0,
                "consistency_k": k,
            },
        )
        campaign_services.campaign_launch(campaign_id=campaign.pk)
        campaign = run_inline(campaign_id=campaign.pk, max_steps=60)
        assert campaign.state == CampaignState.COMPLETED, campaign.state_reason
        strategy = campaign.evosyn.strategies.get(iteration=1)
        assert strategy.status == StrategyStatus.OK
        (check,) = strategy.evaluation["checks"]
        assert check["k"] == k and strategy.evaluation["k"] == k
        scores[k] = (strategy.score, strategy.criterion1, strategy.criterion2)
        prompt = seen["evosyn;iteration=1;role=strategist"]
        rule = "the best and the worst ranked" if k == 1 else "each of the 2 best and the 2 worst"
        assert rule in prompt
    # The seed's matrix: t0 accepts s0, s1 and s2; the human testing s0 and s1. At K = 1 the
    # best (s0) and the worst (s3) agree; at K = 2, s2 ("always False") passes t0 but not the
    # human testing, so the same program fails Criterion-2.
    assert scores[1] == (1.0, 1.0, 1.0)
    assert scores[2] == (0.0, 1.0, 0.0)
