from __future__ import annotations

import json

from django import forms
from django.core.exceptions import ValidationError

from evolution.models import ModelEndpoint

from .config import SETTING_HELP, ReasoningSettings

SCALAR_SETTINGS = [n for n in ReasoningSettings.names() if n != "reasoning_types"]


class ReasoningCampaignForm(forms.Form):
    """Campaign creation: one field per setting, prefilled with the document's defaults."""

    name = forms.CharField(max_length=200)
    generation_endpoint = forms.ModelChoiceField(queryset=ModelEndpoint.objects.all())
    answering_endpoint = forms.ModelChoiceField(queryset=ModelEndpoint.objects.all())
    judge_endpoints = forms.ModelMultipleChoiceField(
        queryset=ModelEndpoint.objects.all(),
        help_text="one judge, or several for an ensemble",
    )
    quality_endpoint = forms.ModelChoiceField(
        queryset=ModelEndpoint.objects.all(),
        required=False,
        help_text="quality filter model (default: the first judge)",
    )
    reasoning_types = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 9}),
        required=False,
        help_text="one type per line: name: description (empty: the 8 default types)",
    )
    budget_max_calls = forms.IntegerField(min_value=1, required=False)
    budget_max_tokens = forms.IntegerField(min_value=1, required=False)
    budget_max_cost = forms.DecimalField(min_value=0, required=False, decimal_places=4)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        defaults = ReasoningSettings()
        self.fields["reasoning_types"].initial = "\n".join(
            f"{t['name']}: {t['description']}" for t in defaults.reasoning_types
        )
        for name in SCALAR_SETTINGS:
            default = getattr(defaults, name)
            field_class = forms.BooleanField if isinstance(default, bool) else forms.CharField
            self.fields[f"setting_{name}"] = field_class(
                label=name, initial=default, required=False, help_text=SETTING_HELP.get(name, "")
            )

    def setting_fields(self):
        return [self[name] for name in self.fields if name.startswith("setting_")]

    def clean_reasoning_types(self):
        text = self.cleaned_data.get("reasoning_types", "").strip()
        if not text:
            return None
        types = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            name, sep, description = line.partition(":")
            if not sep:
                raise ValidationError(f"line {number}: write 'name: description'")
            types.append({"name": name.strip(), "description": description.strip()})
        return types

    def settings_dict(self) -> dict:
        data = {}
        for name in SCALAR_SETTINGS:
            value = self.cleaned_data.get(f"setting_{name}")
            if value in (None, ""):
                continue
            data[name] = value
        if self.cleaned_data.get("reasoning_types"):
            data["reasoning_types"] = self.cleaned_data["reasoning_types"]
        return data

    @staticmethod
    def settings_json(data: dict) -> str:
        return json.dumps(data, indent=2)


class OverrideForm(forms.Form):
    score = forms.ChoiceField(
        choices=[("1", "correct (1.0)"), ("0", "incorrect (0.0)"), ("clear", "remove override")]
    )
    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), max_length=2000)

    def score_value(self) -> float | None:
        value = self.cleaned_data["score"]
        return None if value == "clear" else float(value)
