from __future__ import annotations

import json

from django import forms

from .benchevolver.engine.config import EvolutionSettings
from .campaign_forms import CampaignForm as KindCampaignForm
from .models import ModelEndpoint, Panel, ProblemSet


class CampaignForm(KindCampaignForm):
    """Campaign creation: the algorithm settings are one field each, prefilled with Table 5."""

    seed_set = forms.ModelChoiceField(queryset=ProblemSet.objects.all())
    seed_limit = forms.IntegerField(
        min_value=1, required=False, help_text="use only the first N seeds"
    )
    evolver = forms.ModelChoiceField(
        queryset=ModelEndpoint.objects.all(), help_text="mutator, writer, tests, validation, judge"
    )
    panel = forms.ModelChoiceField(queryset=Panel.objects.all(), help_text="target models")

    settings_class = EvolutionSettings
    create_fields = ("seed_set", "evolver", "panel", "seed_limit")


def settings_json(value: dict) -> str:
    return json.dumps(value, indent=2, sort_keys=True)
