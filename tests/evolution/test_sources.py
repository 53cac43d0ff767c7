"""The problem-source registry: kinds register their reviewable items, review and releases ask."""

from __future__ import annotations

import pytest

from evolution import sources
from evolution.sources import ProblemSource, source_for_model, source_get, source_register
from reasoning.models import ReasoningItem
from reasoning.sources import ReasoningSource
from releases.models import ReleaseQuestion
from review.models import GroupItem
from tests.reasoning.judged import judged_reasoning
from tests.support.fake_openai import FakeOpenAI


def test_the_reasoning_source_is_discovered_at_start():
    # Found by autodiscover_modules("sources"); nothing registers it by hand.
    assert isinstance(source_get("reasoning"), ReasoningSource)
    assert "reasoning" in [s.kind for s in sources.source_list()]


def test_review_and_releases_find_the_source_through_their_foreign_keys():
    for field in (
        GroupItem._meta.get_field("reasoning_item"),
        ReleaseQuestion._meta.get_field("reasoning_item"),
    ):
        assert source_for_model(field.related_model) is source_get("reasoning")


def test_an_unknown_kind_is_refused_with_its_name():
    with pytest.raises(LookupError, match="'nonesuch'.*registered: .*reasoning"):
        source_get("nonesuch")
    with pytest.raises(LookupError, match="evolution.Problem"):
        from evolution.models import Problem

        source_for_model(Problem)


def test_a_second_source_for_a_kind_is_refused():
    class Impostor(ProblemSource):
        kind = "reasoning"
        item_model_label = "reasoning.ReasoningItem"

    with pytest.raises(ValueError, match="already registered"):
        source_register(Impostor())
    assert isinstance(source_get("reasoning"), ReasoningSource)


def test_a_source_without_kind_or_item_model_is_refused():
    with pytest.raises(ValueError, match="must set kind"):
        source_register(ProblemSource())


@pytest.mark.django_db
def test_the_reasoning_source_presents_blinded_items_and_their_facts():
    with FakeOpenAI() as server:
        rc = judged_reasoning(server, verdicts=[True, False, None, True])
    source = source_get("reasoning")
    assert list(source.reviewable_campaigns()) == [rc]
    item = ReasoningItem.objects.filter(reasoning=rc).order_by("pk").first()
    shown = source.present(item)
    # Only the question and the answer: nothing that says where it came from.
    assert (shown.statement, shown.answer) == (item.question, item.answer)
    assert set(vars(shown)) == {"statement", "answer"}
    facts = source.facts(item)
    assert facts.kind == "reasoning" and facts.status_ok
    assert (facts.item_type, facts.difficulty) == (item.reasoning_type, item.difficulty)
    assert facts.provenance["campaign"]["id"] == rc.campaign_id
    assert source.review_refusal(item) is None
    item.status = "answered"
    assert "only judged items" in source.review_refusal(item)
    assert source.creator_ids(item_ids=[item.pk]) == {rc.campaign.created_by_id}
