"""What every campaign kind shares: the settings base, the creation form base, the one control
view and the live-progress section."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from evolution.algorithm_settings import AlgorithmSettings
from evolution.benchevolver.engine.config import EvolutionSettings
from evolution.benchevolver.forms import BenchEvolverCampaignForm as BenchEvolverForm
from evolution.campaign_forms import CampaignForm
from evolution.models.campaigns import CampaignState
from evosyn.config import EvoSynSettings
from evosyn.forms import EvoSynCampaignForm
from frontiersmith.config import FrontierSettings
from frontiersmith.forms import FrontierCampaignForm
from reasoning.config import ReasoningSettings
from reasoning.forms import ReasoningCampaignForm
from tests.factories import CampaignFactory
from xcoder.config import XcoderSettings
from xcoder.forms import XcoderCampaignForm

SETTINGS = [EvolutionSettings, ReasoningSettings, XcoderSettings, EvoSynSettings, FrontierSettings]


@dataclass(frozen=True)
class Toy(AlgorithmSettings):
    LABEL = "toy"
    HELP = {"rounds": "how many rounds"}
    SOURCES = {"rounds": "Table 1"}
    rounds: int = 3
    rate: float = 0.5
    verbose: bool = False
    style: str = "plain"

    _BOUNDS = {"rounds": (1, 10), "rate": (0.0, 1.0)}

    def validate(self, errors):
        if self.style not in ("plain", "fancy"):
            errors.setdefault("style", []).append("style must be plain or fancy")


def test_the_base_names_every_bad_key_at_once():
    with pytest.raises(ValidationError) as info:
        Toy.from_dict({"rounds": 11, "rate": "lots", "verbose": "maybe", "style": "odd", "x": 1})
    assert info.value.message_dict == {
        "x": ["unknown toy setting 'x'"],
        "rounds": ["rounds must be in [1, 10]"],
        "rate": ["rate must be a number"],
        "verbose": ["verbose must be true or false"],
        "style": ["style must be plain or fancy"],
    }


def test_the_base_coerces_to_the_defaults_types_and_builds_the_page_table():
    toy = Toy.from_dict({"rounds": "4", "rate": "0.25", "verbose": "on", "style": " fancy "})
    assert (toy.rounds, toy.rate, toy.verbose, toy.style) == (4, 0.25, True, "fancy")
    assert toy.to_dict() == {"rounds": 4, "rate": 0.25, "verbose": True, "style": "fancy"}
    rows = {r["name"]: r for r in Toy.table({"rounds": 4})}
    assert rows["rounds"] == {
        "name": "rounds",
        "value": 4,
        "default": 3,
        "changed": True,
        "help": "how many rounds",
        "source": "paper (Table 1)",
        "from_paper": True,
    }
    assert rows["rate"]["changed"] is False
    # A setting without a declared source is not claimed for the paper.
    assert (rows["rate"]["source"], rows["rate"]["from_paper"]) == ("BenchForge", False)


@pytest.mark.parametrize("settings_class", SETTINGS, ids=lambda c: c.__name__)
def test_every_kind_derives_its_settings_from_the_base_and_names_an_unknown_key(settings_class):
    assert issubclass(settings_class, AlgorithmSettings)
    with pytest.raises(ValidationError) as info:
        settings_class.from_dict({"no_such_setting": 1})
    assert list(info.value.message_dict) == ["no_such_setting"]
    assert [r["name"] for r in settings_class.table({})] == settings_class.names()


@pytest.mark.parametrize(
    "form_class",
    [
        BenchEvolverForm,
        ReasoningCampaignForm,
        XcoderCampaignForm,
        EvoSynCampaignForm,
        FrontierCampaignForm,
    ],
    ids=lambda c: c.__name__,
)
@pytest.mark.django_db
def test_every_kind_form_derives_from_the_base_and_puts_a_bad_setting_on_its_field(form_class):
    assert issubclass(form_class, CampaignForm)
    name = next(
        n
        for n in form_class.setting_names()
        if n in form_class.settings_class._BOUNDS or n == "num_tasks"
    )
    form = form_class({f"setting_{name}": "-1000000"})
    assert not form.is_valid()
    assert form.errors[f"setting_{name}"]


@pytest.mark.django_db
def test_the_one_control_view_serves_a_kinds_route_and_refuses_another_kinds_campaign(personas):
    benchevolver = CampaignFactory(state=CampaignState.RUNNING)
    client = personas.admin.client
    # A BenchEvolver campaign is not an X-Coder campaign: 404 on X-Coder's route, no change.
    url = reverse("xcoder:campaign_control", args=[benchevolver.pk, "pause"])
    assert client.post(url).status_code == 404
    benchevolver.refresh_from_db()
    assert benchevolver.state == CampaignState.RUNNING
    # Its own route pauses it and returns to its page.
    url = reverse("evolution:campaign_control", args=[benchevolver.pk, "pause"])
    response = client.post(url)
    assert response.status_code == 302
    assert response["Location"] == reverse("evolution:campaign_detail", args=[benchevolver.pk])
    benchevolver.refresh_from_db()
    assert benchevolver.state == CampaignState.PAUSED
    assert personas.curator.client.post(url).status_code == 403


@pytest.mark.django_db
def test_the_controls_partial_shows_the_actions_of_the_state(personas):
    campaign = CampaignFactory(state=CampaignState.PAUSED)
    page = personas.admin.client.get(reverse("evolution:campaign_detail", args=[campaign.pk]))
    html = page.content.decode()
    assert reverse("evolution:campaign_control", args=[campaign.pk, "resume"]) in html
    assert reverse("evolution:campaign_control", args=[campaign.pk, "pause"]) not in html
    assert 'id="controls"' in html
    curator = personas.curator.client.get(reverse("evolution:campaign_detail", args=[campaign.pk]))
    assert 'id="controls"' not in curator.content.decode()


@pytest.mark.django_db
def test_a_live_poll_gets_the_shared_live_section_alone(personas):
    campaign = CampaignFactory(state=CampaignState.RUNNING)
    url = reverse("evolution:campaign_detail", args=[campaign.pk])
    page = personas.admin.client.get(url).content.decode()
    assert f'hx-get="{url}"' in page and "<h1>" in page
    poll = personas.admin.client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert poll.lstrip().startswith('<section id="live"') and "<h1>" not in poll
    assert 'id="campaign-state"' in poll
