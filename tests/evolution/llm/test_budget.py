"""Budget accounting: counters per campaign, and refusal before sending once a budget is reached."""

from __future__ import annotations

import threading
from decimal import Decimal

import pytest
from django.db import connection

from evolution.llm import BudgetExhausted, CallContext, LLMClient, LLMTransportError
from evolution.models import Campaign, LLMCall
from tests.factories import CampaignFactory
from tests.support.fake_openai import Fault, Reply

MESSAGES = [{"role": "user", "content": "go"}]


@pytest.fixture
def priced(endpoint):
    endpoint.price_in_per_1k = Decimal("1")
    endpoint.price_out_per_1k = Decimal("3")
    endpoint.save()
    return endpoint


def test_it_adds_each_call_to_the_campaign_counters(priced, fake):
    campaign = CampaignFactory()
    fake.script("solver", [Reply("a", 100, 10), Reply("b", 200, 20)])
    client = LLMClient(priced, CallContext(campaign_id=campaign.pk))

    client.chat(MESSAGES, role="solver")
    client.chat(MESSAGES, role="solver")

    campaign.refresh_from_db()
    assert (campaign.calls_made, campaign.tokens_in, campaign.tokens_out) == (2, 300, 30)
    # (300 * 1 + 30 * 3) / 1000
    assert campaign.cost == Decimal("0.390000")


def test_it_counts_a_failed_call_but_charges_no_tokens(priced, fake):
    campaign = CampaignFactory()
    fake.script("solver", [Fault.server_error()] * 3)

    with pytest.raises(LLMTransportError):
        LLMClient(priced, CallContext(campaign_id=campaign.pk)).chat(MESSAGES, role="solver")

    campaign.refresh_from_db()
    assert (campaign.calls_made, campaign.tokens_in, campaign.cost) == (1, 0, Decimal("0"))


def test_it_refuses_before_sending_once_the_call_budget_is_reached(priced, fake):
    campaign = CampaignFactory(budget_max_calls=2)
    client = LLMClient(priced, CallContext(campaign_id=campaign.pk))
    client.chat(MESSAGES, role="solver")
    client.chat(MESSAGES, role="solver")

    with pytest.raises(BudgetExhausted, match="2 of 2 calls"):
        client.chat(MESSAGES, role="solver")

    assert fake.request_count == 2
    assert LLMCall.objects.filter(campaign=campaign).count() == 2


def test_it_refuses_once_the_token_budget_is_reached(priced, fake):
    campaign = CampaignFactory(budget_max_tokens=150)
    fake.script("solver", [Reply("a", 100, 60)])
    client = LLMClient(priced, CallContext(campaign_id=campaign.pk))
    client.chat(MESSAGES, role="solver")

    with pytest.raises(BudgetExhausted, match="160 of 150 tokens"):
        client.chat(MESSAGES, role="solver")
    assert fake.request_count == 1


def test_it_refuses_once_the_cost_budget_is_reached(priced, fake):
    campaign = CampaignFactory(budget_max_cost=Decimal("0.1"))
    fake.script("solver", [Reply("a", 100, 0)])  # exactly 0.1
    client = LLMClient(priced, CallContext(campaign_id=campaign.pk))
    client.chat(MESSAGES, role="solver")

    with pytest.raises(BudgetExhausted, match="cost"):
        client.chat(MESSAGES, role="solver")
    assert fake.request_count == 1


def test_it_charges_nothing_when_the_call_has_no_campaign(priced, fake):
    result = LLMClient(priced).chat(MESSAGES, role="solver")

    assert LLMCall.objects.get(pk=result.call_id).campaign_id is None
    assert not Campaign.objects.exclude(calls_made=0).exists()


@pytest.mark.django_db(transaction=True)
def test_it_never_starts_more_calls_than_the_budget_allows_under_concurrency(fake):
    from tests.factories import ModelEndpointFactory

    endpoint = ModelEndpointFactory(base_url=fake.base_url, concurrency_limit=8, max_retries=0)
    campaign = CampaignFactory(budget_max_calls=5)
    fake.latency = 0.05
    refused = []
    answered = []

    def worker():
        client = LLMClient(endpoint, CallContext(campaign_id=campaign.pk))
        try:
            for _ in range(3):
                try:
                    answered.append(client.chat(MESSAGES, role="solver"))
                except BudgetExhausted:
                    refused.append(1)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    campaign.refresh_from_db()
    assert len(answered) == 5 == fake.request_count == campaign.calls_made
    assert len(refused) == 13
