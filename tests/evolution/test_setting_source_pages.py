"""The creation form and the campaign page of every kind mark each setting's default as its
document's (naming where) or BenchForge's, and no heading claims every default for the paper."""

from __future__ import annotations

import html
import re

import pytest
from django.urls import reverse

from evolution.benchevolver.engine.config import EvolutionSettings
from evolution.benchevolver.forms import BenchEvolverCampaignForm as BenchEvolverForm
from evosyn.config import EvoSynSettings
from evosyn.forms import EvoSynCampaignForm
from evosyn.services import evosyn_campaign_create
from frontiersmith.config import FrontierSettings
from frontiersmith.forms import FrontierCampaignForm
from frontiersmith.services import frontier_campaign_create
from reasoning.config import ReasoningSettings
from reasoning.forms import ReasoningCampaignForm
from reasoning.services import reasoning_campaign_create
from tests.factories import (
    CampaignFactory,
    ModelEndpointFactory,
    ProblemFactory,
    ProblemSetFactory,
    TestCaseFactory,
)
from xcoder.config import XcoderSettings
from xcoder.forms import XcoderCampaignForm
from xcoder.services import xcoder_campaign_create

pytestmark = pytest.mark.django_db

NEW_PAGES = [
    ("evolution:campaign_new", BenchEvolverForm),
    ("reasoning:campaign_new", ReasoningCampaignForm),
    ("xcoder:campaign_new", XcoderCampaignForm),
    ("evosyn:campaign_new", EvoSynCampaignForm),
    ("frontiersmith:campaign_new", FrontierCampaignForm),
]
BADGE = re.compile(
    r'<span class="badge setting-source (from-paper|from-project)"[^>]*>([^<]*)</span>'
)


def marks(page: str, settings_class) -> dict[str, tuple[str, str]]:
    """{setting: (badge class, mark)} of every setting a page shows with its source badge: the
    badge that follows the setting's name in the same row (or label)."""
    found = {}
    for chunk in re.split(r"<tr>|<label>", page):
        names = [n for n in re.findall(r"<code>(\w+)</code>", chunk) if n in settings_class.names()]
        badge = BADGE.search(chunk)
        if names and badge:
            found[names[0]] = (badge.group(1), html.unescape(badge.group(2)))
    return found


def expected(settings_class) -> dict[str, tuple[str, str]]:
    return {
        name: (
            "from-paper" if settings_class.from_paper(name) else "from-project",
            settings_class.source(name),
        )
        for name in settings_class.names()
    }


@pytest.mark.parametrize("url_name, form_class", NEW_PAGES, ids=lambda v: str(v))
def test_the_creation_form_marks_each_defaults_source(personas, url_name, form_class):
    settings_class = form_class.settings_class
    page = personas.admin.client.get(reverse(url_name)).content.decode()
    shown = marks(page, settings_class)
    # Every setting the form edits as a setting carries its mark (a kind's own field for a
    # setting, such as the reasoning types, says its source in its help text).
    every = expected(settings_class)
    assert shown == {name: every[name] for name in form_class.setting_names()}
    assert "defaults of" not in page
    assert "Defaults are BenchEvolver's Table 5" not in page
    assert "BenchForge's own choice" in page


def test_the_frontiersmith_form_no_longer_calls_the_projects_choices_the_papers(personas):
    page = personas.admin.client.get(reverse("frontiersmith:campaign_new")).content.decode()
    shown = marks(page, FrontierSettings)
    for name in ("tests_per_candidate", "max_build_attempts", "min_objective_spread"):
        assert shown[name] == ("from-project", "BenchForge")
    assert shown["n_final"] == ("from-paper", "paper (experiment design, Synthesis)")


def test_the_reasoning_types_field_names_its_source(personas):
    page = personas.admin.client.get(reverse("reasoning:campaign_new")).content.decode()
    assert "the 8 default types of the design document (§10)" in html.unescape(page)


def _function_seed_set():
    problem = ProblemFactory(
        harness="assert",
        entry_point="add",
        statement="Write `add(a, b)` returning the sum.",
        reference_solution="def add(a, b):\n    return a + b\n",
    )
    TestCaseFactory(problem=problem, input_text="", output_text="assert add(1, 2) == 3\n")
    return ProblemSetFactory(problems=[problem])


def _campaigns():
    endpoint = ModelEndpointFactory
    return [
        (reverse("evolution:campaign_detail", args=[CampaignFactory().pk]), EvolutionSettings),
        (
            f"/reasoning/{reasoning_campaign_create(name='r', generation_endpoint=endpoint(), answering_endpoint=endpoint(), judge_endpoints=[endpoint()]).pk}/",
            ReasoningSettings,
        ),
        (
            reverse(
                "xcoder:campaign_detail",
                args=[
                    xcoder_campaign_create(
                        name="x",
                        seed_set=ProblemSetFactory(problems=[ProblemFactory()]),
                        generator_endpoint=endpoint(),
                        solver_endpoints=[endpoint()],
                    ).pk
                ],
            ),
            XcoderSettings,
        ),
        (
            reverse(
                "evosyn:campaign_detail",
                args=[
                    evosyn_campaign_create(
                        name="e", seed_set=_function_seed_set(), endpoint=endpoint()
                    ).pk
                ],
            ),
            EvoSynSettings,
        ),
        (
            f"/frontiersmith/{frontier_campaign_create(name='f', seed_set=ProblemSetFactory(problems=[ProblemFactory()]), mutator_endpoint=endpoint(), solver_endpoint=endpoint()).pk}/",
            FrontierSettings,
        ),
    ]


def test_every_campaign_page_marks_each_defaults_source(personas):
    for url, settings_class in _campaigns():
        page = personas.curator.client.get(url).content.decode()
        assert marks(page, settings_class) == expected(settings_class), url
        assert "BenchForge's own choice" in page, url
