"""A curator reviews the re-evolution drafted from the living page, adjusts it (which saturated
problems go in, the campaign's name and budget) and launches or discards it there; launching
any other campaign stays an admin's action (issue: the draft could be neither edited nor
launched by a curator, launch being admin-only)."""

from __future__ import annotations

import html as html_lib
import re
from decimal import Decimal

import pytest
from django.core.cache import cache
from django.urls import reverse

from evolution.benchevolver.selectors import campaign_settings_table
from evolution.models import Campaign
from releases.models import ReEvolution

from .living_support import remeasured_release


@pytest.fixture
def drafted(transactional_db, personas):
    """The re-measured release (E-OK and E-OVERRIDE saturated by strong) and the re-evolution a
    curator drafted from its living page."""
    cache.clear()
    world, release = remeasured_release()
    slug = release.benchmark.slug
    page = personas.curator.client.post(
        reverse("releases:living_reevolve", args=[slug, release.pk]), follow=True
    ).content.decode()
    assert "created from 2 saturated problem(s)" in page
    reevolution = ReEvolution.objects.select_related("campaign").get(release=release)
    yield world, release, reevolution
    cache.clear()


def _post(persona, reevolution, data, *, discard: bool = False):
    name = "living_reevolution_discard" if discard else "living_reevolution_edit"
    url = reverse(f"releases:{name}", args=[reevolution.release.benchmark.slug, reevolution.pk])
    return persona.client.post(url, data, follow=True)


def _messages(response) -> list[str]:
    body = response.content.decode()
    return [
        html_lib.unescape(m) for m in re.findall(r'<li class="(?:success|error)">(.*?)</li>', body)
    ]


def test_a_curator_sees_what_the_draft_holds_and_what_it_inherited(drafted, personas):
    world, release, reevolution = drafted
    ok, override = world.problem("E-OK").public_id, world.problem("E-OVERRIDE").public_id
    living = reverse("releases:living", args=[release.benchmark.slug])
    page = personas.curator.client.get(living).content.decode()
    draft = re.search(
        rf'<div class="reevolution-draft" id="reevolution-{reevolution.pk}">.*?</div>', page, re.S
    )
    assert draft, "the curator sees the draft's form"
    draft = draft[0]
    edit = reverse(
        "releases:living_reevolution_edit", args=[release.benchmark.slug, reevolution.pk]
    )
    assert f'action="{edit}"' in draft
    # Which problems, each with why it is retired.
    boxes = re.findall(r'<input type="checkbox" name="retired" value="(\w+)"[^>]*checked>', draft)
    assert sorted(boxes) == sorted([ok, override])
    assert draft.count("pass@1 0.88 over the panel &gt; 0.75 (solved by strong)") == 2
    # What it inherited: the evolver and settings of the campaign the problems came from, the
    # evaluation panel as its target.
    inherited = re.search(r'<dl class="kv reevolution-inherited">.*?</dl>', draft, re.S)[0]
    assert world.campaign.evolver.name in inherited
    assert re.findall(r'<span class="badge">(\w+) ×(\d+)</span>', inherited) == [
        ("weak", "4"),
        ("strong", "4"),
    ]
    source = reverse("evolution:campaign_detail", args=[world.campaign.pk])
    assert f'those of <a href="{source}">{world.campaign.name}</a>' in inherited
    assert f'value="{reevolution.campaign.name}"' in draft
    assert "Save and launch" in draft and "Discard the draft" in page
    # The public page shows the pending campaign, no form.
    public = personas.anonymous.client.get(living).content.decode()
    assert 'class="reevolution"' in public and "reevolution-draft" not in public
    assert edit not in public


def test_a_curator_adjusts_the_draft_then_launches_it(drafted, personas):
    world, release, reevolution = drafted
    ok, override = world.problem("E-OK").public_id, world.problem("E-OVERRIDE").public_id
    campaign = reevolution.campaign

    # Not for reviewers or anonymous visitors; the generic launch stays an admin's.
    data = {"retired": [ok], "name": "x", "action": "launch"}
    assert _post(personas.reviewer_a, reevolution, data).status_code == 403
    assert (
        personas.anonymous.client.post(
            reverse(
                "releases:living_reevolution_edit", args=[release.benchmark.slug, reevolution.pk]
            ),
            data,
        ).status_code
        == 302
    )
    control = reverse("evolution:campaign_control", args=[campaign.pk, "launch"])
    assert personas.curator.client.post(control).status_code == 403
    campaign.refresh_from_db()
    assert campaign.state == "draft"

    # Refused edits name the field and change nothing.
    for bad, said in (
        ({"name": campaign.name}, "Keep at least one problem, or discard the draft"),
        ({"retired": [ok], "name": "  "}, "A campaign needs a name."),
        ({"retired": [ok], "name": "n", "budget_max_calls": "many"}, "call limit must be a whole"),
        ({"retired": [ok], "name": "n", "budget_max_calls": "-3"}, "must be between 1 and"),
        ({"retired": [ok], "name": "n", "budget_max_cost": "NaN"}, "cost limit must be a number"),
        ({"retired": ["p0000000000000000"], "name": "n"}, "is not among this re-evolution"),
    ):
        response = _post(personas.curator, reevolution, {**bad, "action": "launch"})
        assert any(said in m for m in _messages(response)), (bad, _messages(response))
    campaign.refresh_from_db()
    assert campaign.state == "draft" and campaign.budget_max_calls is None
    assert sorted(ReEvolution.objects.get(pk=reevolution.pk).retired) == sorted([ok, override])

    # Only E-OK goes in, under another name and a budget; saved, still a draft.
    response = _post(
        personas.curator,
        reevolution,
        {
            "retired": [ok],
            "name": "Re-evolve E-OK, capped",
            "budget_max_calls": "120",
            "budget_max_tokens": "",
            "budget_max_cost": "2.5",
            "action": "save",
        },
    )
    assert "Campaign 'Re-evolve E-OK, capped' saved; still a draft." in _messages(response)
    campaign.refresh_from_db()
    assert (campaign.name, campaign.state) == ("Re-evolve E-OK, capped", "draft")
    assert (campaign.budget_max_calls, campaign.budget_max_tokens) == (120, None)
    assert campaign.budget_max_cost == Decimal("2.5")
    assert list(campaign.seed_set.problems.all()) == [world.problem("E-OK")]
    assert [lin.seed for lin in campaign.lineages.all()] == [world.problem("E-OK")]
    saved = ReEvolution.objects.get(pk=reevolution.pk)
    assert list(saved.retired) == [ok] and saved.retired[ok].startswith("saturated on ")
    # The settings stay those inherited.
    assert campaign_settings_table(campaign) == campaign_settings_table(world.campaign)

    # E-OVERRIDE was given back: the next action takes it alone.
    response = personas.curator.client.post(
        reverse("releases:living_reevolve", args=[release.benchmark.slug, release.pk]), follow=True
    )
    assert any(
        m.endswith("created from 1 saturated problem(s); check it below and launch it.")
        for m in _messages(response)
    )
    other = ReEvolution.objects.exclude(pk=reevolution.pk).get(release=release)
    assert list(other.retired) == [override]

    # The curator launches the first draft from the living page.
    response = _post(
        personas.curator,
        reevolution,
        {"retired": [ok], "name": campaign.name, "budget_max_calls": "120", "action": "launch"},
    )
    assert "Campaign 'Re-evolve E-OK, capped' launched." in _messages(response)
    campaign.refresh_from_db()
    assert (campaign.state, campaign.state_reason) == ("queued", "launched")
    assert campaign.budget_max_cost is None  # the launch saved the form as sent
    page = response.content.decode()
    assert f'id="reevolution-{reevolution.pk}"' not in page  # no longer a draft: no form
    assert f'id="reevolution-{other.pk}"' in page
    again = _post(personas.curator, reevolution, {"retired": [ok], "name": "y", "action": "save"})
    assert any("is queued, no longer a draft" in m for m in _messages(again))
    assert Campaign.objects.get(pk=campaign.pk).name == "Re-evolve E-OK, capped"

    # The second draft is discarded: cancelled, its problem given back again.
    response = _post(personas.curator, other, {}, discard=True)
    assert any(
        "discarded; its 1 problem(s) can be re-evolved again" in m for m in _messages(response)
    )
    other.campaign.refresh_from_db()
    assert other.campaign.state == "cancelled"
    assert other.campaign.state_reason == "draft discarded by cory_curator before launch"
    response = _post(personas.curator, other, {}, discard=True)
    assert any("is cancelled, no longer a draft" in m for m in _messages(response))
