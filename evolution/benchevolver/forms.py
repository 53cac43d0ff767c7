"""BenchEvolver's campaign creation form: the algorithm settings are one field each, prefilled
with Table 5 (``engine.config.EvolutionSettings``)."""

from __future__ import annotations

from django import forms

from evolution.campaign_forms import CampaignForm
from evolution.models import ModelEndpoint, Panel, ProblemSet

from .engine.config import EvolutionSettings


class BenchEvolverCampaignForm(CampaignForm):
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
