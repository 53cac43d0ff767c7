from __future__ import annotations

import json

from django import forms
from django.core.exceptions import ValidationError

from evolution.campaign_forms import CampaignForm
from evolution.models import ModelEndpoint

from .config import ReasoningSettings


class ReasoningCampaignForm(CampaignForm):
    """Campaign creation: one field per setting, prefilled with the document's defaults."""

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
    series = forms.CharField(
        max_length=200,
        required=False,
        help_text="the benchmark this campaign continues (design document §9): a series' name "
        "continues it (its EMAs, prior questions and run numbers), a new name starts it; "
        "empty: a new series named after the campaign",
    )
    reasoning_types = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 9}),
        required=False,
        help_text="one type per line: name: description (empty: the 8 default types of "
        "the design document (§10))",
    )

    settings_class = ReasoningSettings
    create_fields = (
        "generation_endpoint",
        "answering_endpoint",
        "judge_endpoints",
        "quality_endpoint",
        "series",
    )
    # The types are edited one per line in their own field.
    settings_omitted = ("reasoning_types",)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["reasoning_types"].initial = "\n".join(
            f"{t['name']}: {t['description']}" for t in ReasoningSettings().reasoning_types
        )

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

    def extra_settings(self) -> dict:
        types = self.cleaned_data.get("reasoning_types")
        return {"reasoning_types": types} if types else {}

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
