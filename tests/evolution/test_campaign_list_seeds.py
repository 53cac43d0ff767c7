"""The campaign list shows every kind's real seed count and real cost (issue #33, finding 9:
0 seeds and $0 for the kinds other than BenchEvolver). Campaigns are made by each kind's own
create service; their model calls go through the gateway to a loopback OpenAI-compatible
server, priced or not by their endpoint."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from django.urls import reverse

from evolution.benchevolver.services import campaign_create
from evolution.llm import CallContext, LLMClient
from evolution.models import LLMCall, ModelEndpoint, Panel, PanelMember, TestCase
from evosyn.services import evosyn_campaign_create
from frontiersmith.services import frontier_campaign_create
from reasoning.services import reasoning_campaign_create
from tests.factories import ProblemFactory, ProblemSetFactory
from tests.support.fake_openai import FakeOpenAI, Reply
from xcoder.services import xcoder_campaign_create

pytestmark = pytest.mark.django_db


def _row(html: str, name: str) -> str:
    return re.search(rf">{re.escape(name)}</a>.*?</tr>", html, re.S).group(0)


def _cell(html: str, name: str, css: str) -> str:
    cell = re.search(rf'<td class="{css}">(.*?)</td>', _row(html, name), re.S).group(1)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", cell)).strip()


def _endpoint(server: FakeOpenAI, name: str, price_in: str = "0", price_out: str = "0"):
    return ModelEndpoint.objects.create(
        name=name,
        provider="openai",
        base_url=server.base_url,
        model=name,
        max_retries=0,
        price_in_per_1k=Decimal(price_in),
        price_out_per_1k=Decimal(price_out),
    )


def _seed_set(n: int, *, without_reference: int = 0):
    """``n`` stdin/stdout problems with a human test each; the last ``without_reference``
    have no reference solution."""
    problems = []
    for i in range(n):
        p = ProblemFactory(reference_solution="" if i >= n - without_reference else "print(1)\n")
        TestCase.objects.create(
            problem=p, tier="public", ordinal=0, hidden=False, input_text="", output_text="1\n"
        )
        problems.append(p)
    return ProblemSetFactory(problems=problems)


def _call(campaign, endpoint) -> None:
    """One model call charged to ``campaign`` (the server answers with the test's usage)."""
    LLMClient(endpoint, CallContext(campaign_id=campaign.pk)).chat(
        [{"role": "user", "content": "hi"}], role="list-cost"
    )


def test_every_kind_shows_its_real_seeds_and_cost_or_says_it_is_not_tracked(personas):
    with FakeOpenAI() as server:
        server.responder = lambda body, headers: Reply(
            "ok", prompt_tokens=1000, completion_tokens=500
        )
        priced = _endpoint(server, "priced", price_in="0.5", price_out="2")  # $1.50 a call
        unpriced = _endpoint(server, "unpriced")
        panel = Panel.objects.create(name="list panel")
        PanelMember.objects.create(panel=panel, endpoint=unpriced)
        seeds = _seed_set(5, without_reference=2)

        bench = campaign_create(
            name="bench-run", seed_set=seeds, evolver=priced, panel=panel, seed_limit=4
        )
        evosyn = evosyn_campaign_create(
            name="evosyn-run", seed_set=seeds, endpoint=unpriced, seed_limit=2
        )
        xcoder = xcoder_campaign_create(
            name="xcoder-run",
            seed_set=seeds,
            generator_endpoint=priced,
            solver_endpoints=[unpriced],
        )
        frontier = frontier_campaign_create(
            name="frontier-run",
            seed_set=seeds,
            mutator_endpoint=unpriced,
            solver_endpoint=unpriced,
            seed_limit=3,
        )
        reasoning = reasoning_campaign_create(
            name="reasoning-run",
            generation_endpoint=priced,
            answering_endpoint=priced,
            judge_endpoints=[priced],
        )
        # What each campaign's model calls cost, through the gateway's own ledger.
        for _ in range(2):
            _call(bench, priced)
        _call(evosyn, unpriced)
        _call(xcoder, priced)
        _call(xcoder, unpriced)
        _call(xcoder, unpriced)
        _call(reasoning, priced)
    assert LLMCall.objects.filter(cost=Decimal("1.5")).count() == 4
    # FrontierSmith accepts a problem: it joins its seed pool and its output set; it is not a
    # seed the campaign started from.
    accepted = ProblemFactory()
    frontier.frontier.seed_pool.problems.add(accepted)
    frontier.frontier.output_set.problems.add(accepted)

    html = personas.curator.client.get(reverse("evolution:campaign_list")).content.decode()
    seeds_shown = {
        n: _cell(html, n, "seeds")
        for n in ("bench-run", "evosyn-run", "xcoder-run", "frontier-run", "reasoning-run")
    }
    assert seeds_shown == {
        "bench-run": "4",  # its seed limit: one lineage per seed
        "evosyn-run": "2",  # its seed limit: one seed instance per seed
        "xcoder-run": "3",  # the seeds with a reference solution
        "frontier-run": "3",  # its seed limit; the accepted problem is no seed
        "reasoning-run": "—",  # the reasoning loop starts from no seeds
    }
    costs = {
        n: _cell(html, n, "cost")
        for n in ("bench-run", "evosyn-run", "xcoder-run", "frontier-run", "reasoning-run")
    }
    assert costs == {
        "bench-run": "$3.0000",
        "evosyn-run": "not tracked",  # its endpoint has no price: never a false $0
        "xcoder-run": "$1.5000 + 2 calls not priced",
        "frontier-run": "$0.0000",  # no call made: nothing spent
        "reasoning-run": "$1.5000",
    }
    # FrontierSmith's own list says the same.
    own = personas.curator.client.get(reverse("frontiersmith:campaign_list")).content.decode()
    assert _cell(own, "frontier-run", "cost") == "$0.0000"


def test_the_frontiersmith_list_says_unpriced_calls_are_not_tracked(personas):
    with FakeOpenAI() as server:
        server.responder = lambda body, headers: Reply(
            "ok", prompt_tokens=300, completion_tokens=20
        )
        unpriced = _endpoint(server, "unpriced-fs")
        frontier = frontier_campaign_create(
            name="frontier-unpriced",
            seed_set=_seed_set(2),
            mutator_endpoint=unpriced,
            solver_endpoint=unpriced,
        )
        _call(frontier, unpriced)
    own = personas.curator.client.get(reverse("frontiersmith:campaign_list")).content.decode()
    assert _cell(own, "frontier-unpriced", "cost") == "not tracked"
    listed = personas.curator.client.get(reverse("evolution:campaign_list")).content.decode()
    assert _cell(listed, "frontier-unpriced", "seeds") == "2"
