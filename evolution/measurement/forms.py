"""The curator's "measure with a panel" form (a problem set's page, a problem's page)."""

from __future__ import annotations

from django import forms

from evolution.models import Panel


class MeasureForm(forms.Form):
    panel = forms.ModelChoiceField(queryset=Panel.objects.all(), help_text="J models")
    target_eval_k = forms.IntegerField(
        min_value=1,
        max_value=64,
        initial=4,
        label="K attempts per model",
        help_text="unless a panel member sets its own (Table 5: 4)",
    )
