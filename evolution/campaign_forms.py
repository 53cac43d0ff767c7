"""The one base of every campaign kind's creation form.

A kind's form declares its own fields (seed set, endpoints, ...) and names its settings class;
the base gives every kind the campaign's name and budget fields and adds one optional field per
algorithm setting (prefilled with the
default, help text from the settings' ``HELP``), collects the filled-in ones, validates them
with the settings class in ``clean`` and puts each error on the field of the setting it names.
"""

from __future__ import annotations

import json
from typing import ClassVar

from django import forms
from django.core.exceptions import ValidationError
from django.db.models import QuerySet

from .algorithm_settings import AlgorithmSettings

BUDGET_FIELDS = ("budget_max_calls", "budget_max_tokens", "budget_max_cost")


class CampaignForm(forms.Form):
    #: the kind's settings (a frozen dataclass deriving from AlgorithmSettings)
    settings_class: ClassVar[type[AlgorithmSettings]]
    #: settings the kind edits with a field of its own (``extra_settings`` returns them)
    settings_omitted: ClassVar[tuple[str, ...]] = ()
    #: the kind's own fields its create service takes under the same names
    create_fields: ClassVar[tuple[str, ...]] = ()

    name = forms.CharField(max_length=200)
    budget_max_calls = forms.IntegerField(min_value=1, required=False)
    budget_max_tokens = forms.IntegerField(min_value=1, required=False)
    budget_max_cost = forms.DecimalField(min_value=0, required=False, decimal_places=4)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # The name comes first, the kind's own fields next, then the budget (and the launch
        # box of kinds that have one), then the settings.
        for name in (*BUDGET_FIELDS, "launch"):
            if name in self.fields:
                self.fields[name] = self.fields.pop(name)
        defaults = self.settings_class()
        for name in self.setting_names():
            default = getattr(defaults, name)
            field_class = forms.BooleanField if isinstance(default, bool) else forms.CharField
            self.fields[f"setting_{name}"] = field_class(
                label=name,
                initial=self.setting_initial(default),
                required=False,
                help_text=self.settings_class.HELP.get(name, ""),
            )

    @classmethod
    def setting_names(cls) -> list[str]:
        return [n for n in cls.settings_class.names() if n not in cls.settings_omitted]

    @staticmethod
    def setting_initial(default):
        """A default as the admin edits it: lists comma-separated, mappings as JSON."""
        if isinstance(default, list):
            return ", ".join(str(v) for v in default)
        if isinstance(default, dict):
            return json.dumps(default)
        return default

    def budget(self) -> dict:
        """The budget limits filled in (None: no limit), as the create services take them."""
        return {name: self.cleaned_data.get(name) for name in BUDGET_FIELDS}

    def create_kwargs(self) -> dict:
        """The keyword arguments of the kind's create service (all but ``created_by``): the
        name, the filled-in settings, the budget and the kind's ``create_fields`` (a multiple
        choice as a list)."""
        data = self.cleaned_data
        kwargs = {"name": data["name"], "settings": self.settings_dict(), **self.budget()}
        for name in self.create_fields:
            value = data[name]
            kwargs[name] = list(value) if isinstance(value, QuerySet) else value
        return kwargs

    def setting_fields(self):
        return [self[name] for name in self.fields if name.startswith("setting_")]

    def setting_rows(self) -> list[dict]:
        """Each setting's field with where its default comes from: ``source`` ("paper (Table
        5)" or "BenchForge") and ``from_paper`` (``AlgorithmSettings.source``)."""
        settings = self.settings_class
        return [
            {
                "field": self[f"setting_{name}"],
                "source": settings.source(name),
                "from_paper": settings.from_paper(name),
            }
            for name in self.setting_names()
        ]

    def settings_dict(self) -> dict:
        """Only the settings filled in (an empty field takes the default), plus the kind's
        own (``extra_settings``)."""
        data = {}
        for name in self.setting_names():
            value = self.cleaned_data.get(f"setting_{name}")
            if value in (None, ""):
                continue
            data[name] = value.strip() if isinstance(value, str) else value
        data.update(self.extra_settings())
        return data

    def extra_settings(self) -> dict:
        """Settings the kind reads from fields of its own; ValidationError({field: message})
        when one cannot be read."""
        return {}

    def add_settings_errors(self, exc: ValidationError) -> None:
        """Put each error on the field it names: ``setting_<key>``, else the field ``<key>``,
        else the form as a whole."""
        if not hasattr(exc, "error_dict"):
            self.add_error(None, exc.messages)
            return
        for key, messages in exc.message_dict.items():
            field = f"setting_{key}" if f"setting_{key}" in self.fields else key
            self.add_error(field if field in self.fields else None, messages)

    def clean(self):
        cleaned = super().clean()
        try:
            self.settings_class.from_dict(self.settings_dict())
        except ValidationError as exc:
            self.add_settings_errors(exc)
        return cleaned
