"""No page of any kind prints a Python object dump (a dict or list printed with str() or
pprint, a default ``<... object at 0x...>`` repr): the database ``make demo`` builds
(BenchEvolver lineages and candidates, X-Coder tasks, reasoning items, review rounds, a
published release) plus finished EvoSyn and FrontierSmith campaigns, crawled through every
link an admin, a reviewer and an anonymous visitor can follow."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from tests.support.crawl import crawl
from tests.support.kinds import evosyn_campaign, frontiersmith_campaign

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# Every kind of page the issue names, and the public ones: the crawl must reach each.
MUST_VISIT = {
    "demo-admin": {
        "evolution:campaign_detail",
        "evolution:lineage_detail",
        "evolution:candidate_detail",
        "evolution:problem_detail",
        "evolution:campaign_analytics",
        "xcoder:campaign_detail",
        "xcoder:task_detail",
        "evosyn:campaign_detail",
        "frontiersmith:campaign_detail",
        "frontiersmith:candidate_detail",
        "reasoning:campaign_detail",
        "reasoning:item_detail",
        "review:round_detail",
        "releases:curate_detail",
        "releases:run_detail",
        "releases:public_item",
        "releases:public_leaderboard",
    },
    "demo-reviewer": {"review:queue", "review:group"},
    None: {"releases:public_detail", "releases:public_item", "releases:public_leaderboard"},
}


def test_no_page_of_any_kind_prints_a_python_object_dump():
    call_command("demo", no_serve=True, stdout=io.StringIO(), stderr=io.StringIO())
    assert evosyn_campaign().state == "completed"
    assert frontiersmith_campaign().state == "completed"
    users = get_user_model().objects
    for who, required in MUST_VISIT.items():
        client = Client()
        if who:
            client.force_login(users.get(username=who))
        found = crawl(client, ["/"], per_route=25, skip=("/logout", "/admin/", "/export/"))
        visited = set(found.pop("__visited__"))
        assert required <= visited, (who, sorted(required - visited))
        assert found == {}, (who, found)
