"""The campaign creation form: endpoints, seed set and one field per setting (JSON for the
style mix), prefilled with the document's defaults."""

from __future__ import annotations

import json

from django import forms
from django.core.exceptions import ValidationError

from evolution.campaign_forms import CampaignForm
from evolution.models import ModelEndpoint, Panel, ProblemSet

from .config import XcoderSettings


class XcoderCampaignForm(CampaignForm):
    seed_set = forms.ModelChoiceField(queryset=ProblemSet.objects.all())
    seed_limit = forms.IntegerField(min_value=1, required=False, help_text="first N seeds only")
    generator_endpoint = forms.ModelChoiceField(
        queryset=ModelEndpoint.objects.all(),
        help_text="extraction, evolution, both task stages and the test inputs",
    )
    solver_endpoints = forms.ModelMultipleChoiceField(
        queryset=ModelEndpoint.objects.all(), help_text="candidate solutions come from each"
    )
    panel = forms.ModelChoiceField(
        queryset=Panel.objects.all(),
        required=False,
        label="Measurement panel",
        help_text="measures every kept problem (J models x K attempts) so the gate reads its "
        "pass@1; empty: not measured (measure them later from their problem set's page)",
    )

    settings_class = XcoderSettings
    create_fields = ("seed_set", "seed_limit", "generator_endpoint", "solver_endpoints", "panel")

    def extra_settings(self) -> dict:
        # The style mix is edited as a JSON object; the settings read a mapping.
        value = self.cleaned_data.get("setting_style_mix")
        if value in ("", None):
            return {}
        try:
            return {"style_mix": json.loads(value)}
        except ValueError as exc:
            raise ValidationError({"setting_style_mix": f"not JSON: {exc}"}) from exc
