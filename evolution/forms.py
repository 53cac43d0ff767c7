from __future__ import annotations

import json

from django import forms
from django.core.exceptions import ValidationError

from .models import ModelEndpoint, Panel, ProblemSet
from .pipeline.config import SETTING_HELP, EvolutionSettings


class CampaignForm(forms.Form):
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

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name, default in EvolutionSettings.defaults().items():
            initial = ", ".join(str(v) for v in default) if isinstance(default, list) else default
            field_class = forms.BooleanField if isinstance(default, bool) else forms.CharField
            self.fields[f"setting_{name}"] = field_class(
                label=name, initial=initial, required=False, help_text=SETTING_HELP.get(name, "")
            )

    def setting_fields(self):
        return [self[name] for name in self.fields if name.startswith("setting_")]

    def settings_dict(self) -> dict:
        data = {}
        for name in EvolutionSettings.field_names():
            value = self.cleaned_data.get(f"setting_{name}")
            if value is None or value == "":
                continue
            data[name] = value
        return data

    def clean(self):
        cleaned = super().clean()
        try:
            EvolutionSettings.from_dict(self.settings_dict())
        except ValidationError as exc:
            for key, messages in exc.message_dict.items():
                self.add_error(
                    f"setting_{key}" if f"setting_{key}" in self.fields else None, messages
                )
        return cleaned


def settings_json(value: dict) -> str:
    return json.dumps(value, indent=2, sort_keys=True)
