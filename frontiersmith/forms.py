"""The FrontierSmith campaign creation form: seed set, the two model endpoints, the optional
labelled calibration sets, budget, and one field per setting prefilled with the paper's
default."""

from __future__ import annotations

from django import forms

from evolution.campaign_forms import CampaignForm
from evolution.models import ModelEndpoint, ProblemSet

from .config import FrontierSettings


class FrontierCampaignForm(CampaignForm):
    """Campaign creation. ``clean`` validates the settings with ``FrontierSettings.from_dict`` so
    a bad value (or a broken relation such as n_final > n_div) is reported on the field of the
    setting it names."""

    seed_set = forms.ModelChoiceField(
        queryset=ProblemSet.objects.order_by("name"),
        help_text="closed-ended seed problems; copied into the campaign's own seed pool",
    )
    seed_limit = forms.IntegerField(
        min_value=1, required=False, help_text="use only the first N seeds"
    )
    mutator_endpoint = forms.ModelChoiceField(
        queryset=ModelEndpoint.objects.order_by("name"),
        help_text="formulation extraction, mutation, coarse filter, pairwise divergence judge",
    )
    solver_endpoint = forms.ModelChoiceField(
        queryset=ModelEndpoint.objects.order_by("name"),
        help_text="sampled solutions; test-case generator, verifier, baseline and weak "
        "solution (four separate calls)",
    )
    calibration_closed = forms.ModelChoiceField(
        queryset=ProblemSet.objects.order_by("name"),
        required=False,
        help_text="labelled closed-ended problems: measures the filter's false-positive rate",
    )
    calibration_open = forms.ModelChoiceField(
        queryset=ProblemSet.objects.order_by("name"),
        required=False,
        help_text="labelled open-ended problems: measures the filter's false-negative rate",
    )
    launch = forms.BooleanField(required=False, help_text="launch as soon as it is created")

    settings_class = FrontierSettings
    create_fields = (
        "seed_set",
        "mutator_endpoint",
        "solver_endpoint",
        "seed_limit",
        "calibration_closed",
        "calibration_open",
    )
