"""The EvoSyn campaign creation form: seed set, model endpoints (one default, optional per-role
overrides), budget, and one field per setting prefilled with the document's default."""

from __future__ import annotations

from django import forms

from evolution.campaign_forms import CampaignForm
from evolution.models import ModelEndpoint, Panel, ProblemSet

from .config import EvoSynSettings

# The roles a campaign asks a model for (``Ctx.chat(role, ...)`` in services); each may be
# served by its own endpoint, otherwise by the default one.
ROLES = {
    "solver": "candidate solutions",
    "test_writer": "candidate tests",
    "strategist": "mutations of the filtering strategy",
    "synthesizer": "new problem statements",
}


class EvoSynCampaignForm(CampaignForm):
    """Campaign creation. ``clean`` validates the settings with ``EvoSynSettings.from_dict`` so a
    bad value is reported on the field of the setting it names."""

    seed_set = forms.ModelChoiceField(
        queryset=ProblemSet.objects.order_by("name"),
        help_text="function-level problems with human tests (e.g. HumanEval)",
    )
    seed_limit = forms.IntegerField(
        min_value=1, required=False, help_text="use only the first N usable seeds"
    )
    endpoint = forms.ModelChoiceField(
        queryset=ModelEndpoint.objects.order_by("name"),
        help_text="the model for every role without its own endpoint below",
    )
    panel = forms.ModelChoiceField(
        queryset=Panel.objects.all(),
        required=False,
        label="Measurement panel",
        help_text="measures every kept problem (J models x K attempts) so the gate reads its "
        "pass@1; empty: not measured (measure them later from their problem set's page)",
    )
    launch = forms.BooleanField(required=False, help_text="launch as soon as it is created")

    settings_class = EvoSynSettings
    create_fields = ("seed_set", "endpoint", "panel", "seed_limit")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for role, what in ROLES.items():
            self.fields[f"{role}_endpoint"] = forms.ModelChoiceField(
                queryset=ModelEndpoint.objects.order_by("name"),
                required=False,
                label=f"{role} endpoint",
                help_text=f"{what} (empty: the default endpoint)",
            )

    def create_kwargs(self) -> dict:
        return {**super().create_kwargs(), "role_endpoints": self.role_endpoints()}

    def role_endpoints(self) -> dict[str, int]:
        """``{role: endpoint id}`` for the roles given their own endpoint."""
        return {
            role: self.cleaned_data[f"{role}_endpoint"].pk
            for role in ROLES
            if self.cleaned_data.get(f"{role}_endpoint")
        }
