"""The campaign creation form: endpoints, seed set and one field per setting (JSON for the
style mix), prefilled with the document's defaults."""

from __future__ import annotations

import json

from django import forms
from django.core.exceptions import ValidationError

from evolution.models import ModelEndpoint, ProblemSet

from .config import XcoderSettings


class XcoderCampaignForm(forms.Form):
    name = forms.CharField(max_length=200)
    seed_set = forms.ModelChoiceField(queryset=ProblemSet.objects.all())
    seed_limit = forms.IntegerField(min_value=1, required=False, help_text="first N seeds only")
    generator_endpoint = forms.ModelChoiceField(
        queryset=ModelEndpoint.objects.all(),
        help_text="extraction, evolution, both task stages and the test inputs",
    )
    solver_endpoints = forms.ModelMultipleChoiceField(
        queryset=ModelEndpoint.objects.all(), help_text="candidate solutions come from each"
    )
    budget_max_calls = forms.IntegerField(min_value=1, required=False)
    budget_max_tokens = forms.IntegerField(min_value=1, required=False)
    budget_max_cost = forms.DecimalField(min_value=0, required=False, decimal_places=4)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for key, value, help_text in XcoderSettings().rows():
            initial = json.dumps(value) if isinstance(value, dict) else value
            self.fields[f"setting_{key}"] = forms.CharField(
                label=key, initial=initial, required=False, help_text=help_text
            )

    def setting_fields(self):
        return [self[name] for name in self.fields if name.startswith("setting_")]

    def settings_dict(self) -> dict:
        """Only the settings the admin filled in; the service validates them."""
        result = {}
        for name, value in self.cleaned_data.items():
            if not name.startswith("setting_") or value in ("", None):
                continue
            key = name.removeprefix("setting_")
            if key == "style_mix":
                try:
                    value = json.loads(value)
                except ValueError as exc:
                    raise ValidationError({name: f"not JSON: {exc}"}) from exc
            result[key] = value
        return result
