"""The campaign list counts every kind's seeds (issue: 0 seeds for the kinds that have no
lineages)."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from evolution.models.campaigns import CampaignKind
from tests.factories import CampaignFactory, ProblemFactory, ProblemSetFactory

pytestmark = pytest.mark.django_db


def _seeds_cell(html: str, name: str) -> str:
    row = re.search(rf">{re.escape(name)}</a>.*?</tr>", html, re.S).group(0)
    return re.search(r'<td class="seeds">(.*?)</td>', row, re.S).group(1)


def test_a_kind_without_lineages_shows_its_seed_set_size(personas):
    seeds = ProblemSetFactory()
    seeds.problems.add(*[ProblemFactory() for _ in range(3)])
    CampaignFactory(name="evosyn-run", kind=CampaignKind.EVOSYN, seed_set=seeds)
    CampaignFactory(name="no-seeds-run", kind=CampaignKind.REASONING, seed_set=None)
    html = personas.curator.client.get(reverse("evolution:campaign_list")).content.decode()
    assert _seeds_cell(html, "evosyn-run") == "3"
    assert "—" in _seeds_cell(html, "no-seeds-run")
