"""Forms: the per-problem rating form (strict on submit, lenient for drafts) and curator forms."""

from __future__ import annotations

from django import forms
from django.contrib.auth import get_user_model

from benchapp.roles import REVIEWER

from .models import CF_MAX, CF_MIN, CF_STEP, RATING_DIMENSIONS, RATING_SCALES, Validity

RATING_CHOICES = [(i, str(i)) for i in range(1, 6)]
JUSTIFICATION_MAX = 2000


class ItemReviewForm(forms.Form):
    """One problem's ratings. Prefixed with the item's opaque id inside a group form."""

    clarity = forms.TypedChoiceField(choices=RATING_CHOICES, coerce=int, widget=forms.RadioSelect)
    novelty = forms.TypedChoiceField(choices=RATING_CHOICES, coerce=int, widget=forms.RadioSelect)
    difficulty = forms.TypedChoiceField(
        choices=RATING_CHOICES, coerce=int, widget=forms.RadioSelect
    )
    quality = forms.TypedChoiceField(choices=RATING_CHOICES, coerce=int, widget=forms.RadioSelect)
    validity = forms.ChoiceField(choices=Validity.choices, widget=forms.RadioSelect)
    validity_reason = forms.CharField(required=False, max_length=2000)
    cf_rating = forms.IntegerField(min_value=CF_MIN, max_value=CF_MAX, step_size=CF_STEP)
    tags = forms.CharField(max_length=1000, help_text="comma-separated")
    justification = forms.CharField(max_length=JUSTIFICATION_MAX)
    elapsed = forms.FloatField(required=False, min_value=0)

    def clean(self):
        data = super().clean()
        if (
            data.get("validity") in (Validity.INVALID, Validity.UNSURE)
            and not (data.get("validity_reason") or "").strip()
        ):
            self.add_error("validity_reason", "Say why the problem is not valid.")
        tags = [t for t in (data.get("tags") or "").split(",") if t.strip()]
        if "tags" in data and not tags:
            self.add_error("tags", "Give at least one algorithm or data-structure tag.")
        return data


def rating_fields() -> list[dict]:
    """The four 1-5 scales with the meaning of each point, for templates and the API."""
    return [
        {"name": d, "points": [{"value": v, "meaning": m} for v, m in RATING_SCALES[d].items()]}
        for d in RATING_DIMENSIONS
    ]


class RoundCreateForm(forms.Form):
    name = forms.CharField(max_length=200)
    instructions = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}))
    lineages = forms.ModelMultipleChoiceField(
        queryset=None, required=False, widget=forms.CheckboxSelectMultiple
    )
    reviewers = forms.ModelMultipleChoiceField(queryset=None, widget=forms.CheckboxSelectMultiple)
    reviewers_per_group = forms.IntegerField(min_value=1, max_value=5, initial=2)
    exclude_creators = forms.BooleanField(required=False, initial=True)

    def __init__(self, *args, lineage_queryset, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["lineages"].queryset = lineage_queryset
        self.fields["lineages"].label_from_instance = lambda lin: (
            f"{lin.campaign.name} · {lin.seed.title} ({lin.n_accepted} accepted)"
        )
        self.fields["reviewers"].queryset = (
            get_user_model()
            .objects.filter(groups__name=REVIEWER, is_active=True)
            .order_by("username")
        )

    def clean(self):
        data = super().clean()
        if not data.get("lineages"):
            raise forms.ValidationError("Choose at least one lineage.")
        return data


class AdjudicationResolveForm(forms.Form):
    resolution = forms.CharField(max_length=4000)
    value = forms.CharField(max_length=12, required=False)


class OverrideForm(forms.Form):
    dimension = forms.ChoiceField(
        choices=[(d, d) for d in (*RATING_DIMENSIONS, "cf_rating", "validity")]
    )
    value = forms.CharField(max_length=12)
    reason = forms.CharField(max_length=4000)
