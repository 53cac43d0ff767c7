from __future__ import annotations

import json

from django import forms

from .campaign_forms import CampaignForm as KindCampaignForm
from .models import ModelEndpoint, Panel, ProblemSet
from .pipeline.config import EvolutionSettings


class CampaignForm(KindCampaignForm):
    """Campaign creation: the algorithm settings are one field each, prefilled with Table 5."""

    name = forms.CharField(max_length=200)
    seed_set = forms.ModelChoiceField(queryset=ProblemSet.objects.all())
    seed_limit = forms.IntegerField(
        min_value=1, required=False, help_text="use only the first N seeds"
    )
    evolver = forms.ModelChoiceField(
        queryset=ModelEndpoint.objects.all(), help_text="mutator, writer, tests, validation, judge"
    )
    panel = forms.ModelChoiceField(queryset=Panel.objects.all(), help_text="target models")
    budget_max_calls = forms.IntegerField(min_value=1, required=False)
    budget_max_tokens = forms.IntegerField(min_value=1, required=False)
    budget_max_cost = forms.DecimalField(min_value=0, required=False, decimal_places=4)

    settings_class = EvolutionSettings


def settings_json(value: dict) -> str:
    return json.dumps(value, indent=2, sort_keys=True)
