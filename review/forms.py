"""Forms: the per-problem rating form (strict on submit, lenient for drafts) and curator forms."""

from __future__ import annotations

from django import forms
from django.contrib.auth import get_user_model

from accounts.roles import REVIEWER
from evolution.models import Campaign, ProblemSet

from .models import (
    CF_MAX,
    CF_MIN,
    CF_STEP,
    RATING_DIMENSIONS,
    RATING_SCALES,
    REASONING_DIMENSIONS,
    REASONING_SCALES,
    AnswerVerdict,
    Validity,
)
from .selectors import REVIEW_STATUSES

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
    validity_reason = forms.CharField(required=False, max_length=2000, label="Validity reason")
    cf_rating = forms.IntegerField(
        min_value=CF_MIN, max_value=CF_MAX, step_size=CF_STEP, label="Codeforces rating estimate"
    )
    tags = forms.CharField(
        max_length=1000, help_text="comma-separated", label="Algorithms and data structures"
    )
    justification = forms.CharField(max_length=JUSTIFICATION_MAX)
    elapsed = forms.FloatField(required=False, min_value=0, label="Time spent")

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


class ReasoningItemReviewForm(forms.Form):
    """One reasoning item's ratings: the question's clarity and difficulty, and whether the
    given answer is correct, with a justification (required: it is what the curator reads when
    reviewers disagree). Prefixed with the item's opaque id inside a group form."""

    clarity = forms.TypedChoiceField(choices=RATING_CHOICES, coerce=int, widget=forms.RadioSelect)
    difficulty = forms.TypedChoiceField(
        choices=RATING_CHOICES, coerce=int, widget=forms.RadioSelect
    )
    answer_verdict = forms.ChoiceField(
        choices=AnswerVerdict.choices,
        widget=forms.RadioSelect,
        label="Is the given answer correct?",
    )
    justification = forms.CharField(max_length=JUSTIFICATION_MAX)
    elapsed = forms.FloatField(required=False, min_value=0, label="Time spent")


def reasoning_rating_fields() -> list[dict]:
    """The 1-5 scales of a reasoning item with the meaning of each point."""
    return [
        {"name": d, "points": [{"value": v, "meaning": m} for v, m in REASONING_SCALES[d].items()]}
        for d in REASONING_DIMENSIONS
    ]


def rating_fields() -> list[dict]:
    """The four 1-5 scales with the meaning of each point, for templates and the API."""
    return [
        {"name": d, "points": [{"value": v, "meaning": m} for v, m in RATING_SCALES[d].items()]}
        for d in RATING_DIMENSIONS
    ]


class RoundCreateForm(forms.Form):
    """A round of coding problems from any kind: BenchEvolver lineages as they are, and the
    problems of chosen campaigns (any coding kind) and problem sets, filtered by measured level
    and pass@1, a review tag and review status, grouped by the seed they share."""

    name = forms.CharField(max_length=200)
    instructions = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}))
    lineages = forms.ModelMultipleChoiceField(
        queryset=None, required=False, widget=forms.CheckboxSelectMultiple
    )
    campaigns = forms.ModelMultipleChoiceField(
        queryset=None, required=False, widget=forms.CheckboxSelectMultiple
    )
    problem_sets = forms.ModelMultipleChoiceField(
        queryset=None, required=False, widget=forms.CheckboxSelectMultiple
    )
    levels = forms.TypedMultipleChoiceField(
        choices=[(i, str(i)) for i in range(1, 6)],
        coerce=int,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label="Measured level",
    )
    min_pass_at_1 = forms.FloatField(
        min_value=0, max_value=1, required=False, label="Measured pass@1 at least"
    )
    max_pass_at_1 = forms.FloatField(
        min_value=0, max_value=1, required=False, label="Measured pass@1 at most"
    )
    tag = forms.CharField(max_length=80, required=False, label="Tag")
    review_status = forms.ChoiceField(
        choices=list(REVIEW_STATUSES.items()),
        initial="any",
        required=False,
        label="Review status",
    )
    include_seeds = forms.BooleanField(
        required=False, initial=True, label="Show each problem's seed in its group"
    )
    max_groups = forms.IntegerField(min_value=1, max_value=500, required=False)
    reviewers = forms.ModelMultipleChoiceField(queryset=None, widget=forms.CheckboxSelectMultiple)
    reviewers_per_group = forms.IntegerField(min_value=1, max_value=5, initial=2)
    exclude_creators = forms.BooleanField(required=False, initial=True)

    def __init__(
        self,
        *args,
        lineage_queryset,
        lineage_label=str,
        campaign_queryset=None,
        problem_set_queryset=None,
        **kwargs,
    ):
        super().__init__(*args, **kwargs)
        self.fields["lineages"].queryset = lineage_queryset
        self.fields["lineages"].label_from_instance = lineage_label
        self.fields["campaigns"].queryset = (
            campaign_queryset if campaign_queryset is not None else Campaign.objects.none()
        )
        self.fields["campaigns"].label_from_instance = lambda c: (
            f"{c.name} · {c.get_kind_display()}"
        )
        self.fields["problem_sets"].queryset = (
            problem_set_queryset if problem_set_queryset is not None else ProblemSet.objects.none()
        )
        self.fields["reviewers"].queryset = (
            get_user_model()
            .objects.filter(groups__name=REVIEWER, is_active=True)
            .order_by("username")
        )

    def clean(self):
        data = super().clean()
        if not (data.get("lineages") or data.get("campaigns") or data.get("problem_sets")):
            raise forms.ValidationError("Choose at least one lineage, campaign or problem set.")
        low, high = data.get("min_pass_at_1"), data.get("max_pass_at_1")
        if low is not None and high is not None and low > high:
            self.add_error("max_pass_at_1", "Must not be below the lower bound.")
        return data

    @property
    def has_filtered_sources(self) -> bool:
        data = self.cleaned_data
        return bool(data.get("campaigns") or data.get("problem_sets"))


class ReasoningRoundCreateForm(forms.Form):
    """A round of reasoning items: groups of one type across difficulties, built from a
    campaign's judged items, or from chosen item ids (grouped the same way)."""

    name = forms.CharField(max_length=200)
    instructions = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}))
    reasoning = forms.ModelChoiceField(queryset=None, label="Reasoning campaign")
    item_ids = forms.CharField(
        required=False,
        max_length=4000,
        label="Only these item ids (comma-separated; empty: every judged item)",
    )
    group_size = forms.IntegerField(min_value=2, max_value=4, initial=3)
    max_groups = forms.IntegerField(min_value=1, max_value=500, required=False)
    reviewers = forms.ModelMultipleChoiceField(queryset=None, widget=forms.CheckboxSelectMultiple)
    reviewers_per_group = forms.IntegerField(min_value=1, max_value=5, initial=2)
    exclude_creators = forms.BooleanField(required=False, initial=True)

    def __init__(self, *args, reasoning_queryset, reasoning_label, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["reasoning"].queryset = reasoning_queryset
        self.fields["reasoning"].label_from_instance = reasoning_label
        self.fields["reviewers"].queryset = (
            get_user_model()
            .objects.filter(groups__name=REVIEWER, is_active=True)
            .order_by("username")
        )

    def clean_item_ids(self) -> list[int]:
        raw = self.cleaned_data.get("item_ids") or ""
        ids = []
        for part in raw.replace(" ", ",").split(","):
            if not part.strip():
                continue
            if not part.strip().isdigit():
                raise forms.ValidationError(f"{part.strip()!r} is not an item id.")
            ids.append(int(part))
        return ids


class AnswerOverrideForm(forms.Form):
    """The curator's decision on a reasoning item's answer; it replaces the judges' score."""

    item = forms.CharField(max_length=24)
    verdict = forms.ChoiceField(
        choices=[
            ("correct", "correct (score 1.0)"),
            ("incorrect", "incorrect (score 0.0)"),
            ("clear", "remove the override (back to the judges)"),
        ]
    )
    reason = forms.CharField(max_length=4000)


class AdjudicationResolveForm(forms.Form):
    resolution = forms.CharField(max_length=4000)
    value = forms.CharField(max_length=12, required=False)


class OverrideForm(forms.Form):
    dimension = forms.ChoiceField(
        choices=[(d, d) for d in (*RATING_DIMENSIONS, "cf_rating", "validity")]
    )
    value = forms.CharField(max_length=12)
    reason = forms.CharField(max_length=4000)
