"""The strategy programs the document prints (Figure 3, Appendix A.3's Figures 10-14) are
fragments: code over the matrix's names that reads no input and prints no ranking. A model
answering with one (as the document shows them) gets it wrapped by ``parse_strategy``: the
fragment runs as written, live in the sandbox, and its ranking is the one its own names hold.

The rankings below are worked out by hand from each figure's code on the demo seed's matrix
(the comments show the arithmetic)."""

from __future__ import annotations

import pytest

from evolution import sandbox
from evolution.models.campaigns import CampaignState
from evolution.services import campaigns as campaign_services
from evolution.streams.runner import run_inline
from evosyn import services
from evosyn.demo import pack
from evosyn.engine import prompts as P
from evosyn.engine import strategy as S
from evosyn.models import StrategyStatus
from tests.support.answers import fenced

from .helpers import SMALL_SETTINGS, respond, script
from .paper_listings import PRINTED, unnumber

LIMITS = sandbox.Limits(time_s=10, memory_mb=512)

# The demo seed's matrix (tests/evosyn/test_demo.py): solutions s0, s1 (right), s2 ("always
# False"), s3 ("always True") x testings t0..t3.
#   t0 accepts s0 s1 s2 (n_T 3)   t1 accepts s0 s1 (2)   t2 accepts s3 (1)   t3 accepts s0 s1 s3 (3)
#   s0, s1 pass t0 t1 t3 (3)      s2 passes t0 (1)       s3 passes t2 t3 (2)
SEED_MATRIX = [[1, 1, 0, 1], [1, 1, 0, 1], [1, 0, 0, 0], [0, 0, 1, 1]]

EXPECTED = {
    # quality = passes / 4: .75 .75 .25 .5; testing quality = passed avg - failed avg:
    # t0 .583-.5, t1 .75-.375, t2 .5-.583, t3 .667-.25
    "Figure 3": (["t3", "t1", "t0", "t2"], ["s0", "s1", "s3", "s2"]),
    # solution weight = sum of 1/n_T: s0 = s1 = 1/3+1/2+1/3, s2 = 1/3, s3 = 1+1/3;
    # testing weight = 1/n_T: t2 1, t1 .5, t0 = t3 1/3 (a tie keeps the list's order)
    "Figure 10": (["t2", "t1", "t0", "t3"], ["s3", "s0", "s1", "s2"]),
    # weight = passes (3 3 1 2, total 9); discrimination: t0 (7-3)/3 - 2/1, t1 (6-2)/2 - 3/2,
    # t2 (2-1)/1 - 7/3, t3 (8-3)/3 - 1/1
    "Figure 11": (["t3", "t1", "t0", "t2"], ["s0", "s1", "s3", "s2"]),
    # testing weight = 4 - accepted: t0 1, t1 2, t2 3, t3 1
    "Figure 12": (["t2", "t1", "t0", "t3"], ["s0", "s1", "s3", "s2"]),
    # (weight of the passing solutions - n) / n: t0 4/3, t1 2, t2 1, t3 5/3
    "Figure 13": (["t1", "t3", "t0", "t2"], ["s0", "s1", "s3", "s2"]),
    # testing weight 4 - accepted (no penalty: no testing accepts all or none); solutions by
    # the mean weight of the testings they pass: s3 (3+1)/2, s0 = s1 (1+2+1)/3, s2 1
    "Figure 14": (["t2", "t1", "t0", "t3"], ["s3", "s0", "s1", "s2"]),
}


def _ids(ranking: S.Ranking) -> tuple[list[str], list[str]]:
    return [f"t{j}" for j in ranking.tests], [f"s{i}" for i in ranking.solutions]


def test_the_listings_are_the_documents_code_unnumbered():
    import ast

    for figure, listing in PRINTED.items():
        code = unnumber(listing)
        ast.parse(code)  # every printed program is valid Python once unnumbered
        numbered = [line for line in listing.splitlines() if line[:1].isdigit()]
        assert len(code.splitlines()) == len(numbered), figure
        # A fragment: it neither reads its input nor prints a ranking.
        assert "print(" not in code and "stdin" not in code, figure
        assert S.is_fragment(code), figure


@pytest.mark.parametrize("figure", list(PRINTED))
def test_each_printed_strategy_runs_in_the_sandbox_as_the_document_prints_it(figure):
    fragment = unnumber(PRINTED[figure])
    program = P.parse_strategy(fenced(fragment))
    # Wrapped, the fragment itself unchanged inside.
    assert program.startswith(S.FRAGMENT_HEAD) and fragment.rstrip() in program
    (ranking,) = S.run_strategy(
        program, [SEED_MATRIX], [4], run_batch=sandbox.run_batch, limits=LIMITS
    )
    assert isinstance(ranking, S.Ranking), ranking
    assert _ids(ranking) == EXPECTED[figure]
    assert ranking.solutions_from_strategy and ranking.test_scores is not None


def test_figure_14_penalises_testings_that_accept_all_or_no_solution():
    # t0 accepts every solution, t1 none, t2 only s0. Inverse filtering (Figure 12) ranks the
    # broken t1 first (3 - 0); the hardness-aware program subtracts 100 x 3 from it and 50 x 3
    # from the lenient t0: t2 (2), t0 (0 - 150), t1 (3 - 300).
    matrix = [[1, 0, 1], [1, 0, 0], [1, 0, 0]]
    runs = S.run_strategy(
        P.parse_strategy(fenced(unnumber(PRINTED["Figure 14"]))),
        [matrix],
        [3],
        run_batch=sandbox.run_batch,
        limits=LIMITS,
    )
    (hardness,) = runs
    assert _ids(hardness) == (["t2", "t0", "t1"], ["s0", "s1", "s2"])
    assert hardness.test_scores == [-150.0, -297.0, 2.0]
    (inverse,) = S.run_strategy(
        P.parse_strategy(fenced(unnumber(PRINTED["Figure 12"]))),
        [matrix],
        [3],
        run_batch=sandbox.run_batch,
        limits=LIMITS,
    )
    assert _ids(inverse)[0] == ["t1", "t2", "t0"]


def test_complete_programs_are_left_as_they_are_and_a_fragment_ranking_nothing_fails():
    # The demo's Figure 3 is a complete program (it reads stdin and prints): not wrapped.
    assert P.parse_strategy(fenced(pack.FIGURE_3)) == pack.FIGURE_3
    assert P.parse_strategy(fenced(S.INITIAL_STRATEGY)) == S.INITIAL_STRATEGY
    # A fragment that leaves no ranking in its names is a recorded failure, not a guess.
    program = P.parse_strategy(fenced("total = len(testing_id_list)\n"))
    (failure,) = S.run_strategy(
        program, [SEED_MATRIX], [4], run_batch=sandbox.run_batch, limits=LIMITS
    )
    assert isinstance(failure, S.StrategyFailure)
    assert "ranks no testing" in str(failure)


@pytest.mark.django_db
def test_a_strategist_answering_with_the_printed_figure_3_scores_as_the_program(world, fake_server):
    # The strategist answers with Figure 3 exactly as the document prints it (unnumbered):
    # it is stored wrapped and scores 1.0 on the seed, as the demo's complete Figure 3 does.
    seed_set, endpoint = world
    respond(fake_server, script(strategist=[fenced(unnumber(PRINTED["Figure 3"]))]))
    campaign = services.evosyn_campaign_create(
        name="evosyn printed figure 3",
        seed_set=seed_set,
        endpoint=endpoint,
        settings={**SMALL_SETTINGS, "max_iterations": 1, "synth_problems": 0},
    )
    campaign_services.campaign_launch(campaign_id=campaign.pk)
    campaign = run_inline(campaign_id=campaign.pk, max_steps=60)
    assert campaign.state == CampaignState.COMPLETED, campaign.state_reason
    strategy = campaign.evosyn.strategies.get(iteration=1)
    assert strategy.status == StrategyStatus.OK, strategy.error
    assert strategy.code.startswith(S.FRAGMENT_HEAD)
    assert "sorted_testings = sorted(testing_id_list" in strategy.code
    assert strategy.score == 1.0
    (check,) = strategy.evaluation["checks"]
    assert (check["top_solution"], check["bottom_solution"], check["top_test"]) == (0, 2, 3)
