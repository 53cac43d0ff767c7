"""Forms of the admin pages. Endpoints are validated by the model itself (``clean()``: the
bounds and the API key / cassette policy the HTTP API applies too)."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model, password_validation

from accounts.roles import ROLES
from evolution.importers import SOURCES
from evolution.models import ModelEndpoint

# How each importer is named on the page; a source added to evolution.importers.SOURCES
# appears under its own name until it is given a label here.
SOURCE_LABELS = {
    "humaneval": "HumanEval (JSON lines; no file: the 164 packaged problems)",
    "lcb": "LiveCodeBench code_generation_lite (JSON lines)",
    "jsonl": "BenchForge JSON lines (this project's export)",
    "codecontests": "CodeContests (JSON lines or Parquet)",
    "apps": "APPS (JSON lines or Parquet)",
    "taco": "TACO (JSON lines or Parquet)",
    "scicode": "SciCode (JSON lines or Parquet)",
}

ROLE_HELP = {
    "admin": "everything: endpoints, panels, imports, users, campaigns (also a curator)",
    "curator": "lineages, review rounds, gate, releases, leaderboard runs",
    "reviewer": "their own blinded review queue",
}


class EndpointForm(forms.ModelForm):
    base_url = forms.URLField(
        max_length=300,
        required=False,
        assume_scheme="https",
        help_text="e.g. http://127.0.0.1:8001/v1 (empty for a replayed endpoint)",
        label="Base URL",
    )

    class Meta:
        model = ModelEndpoint
        fields = [
            "name",
            "provider",
            "base_url",
            "model",
            "api_key_env",
            "temperature",
            "omit_temperature",
            "top_p",
            "max_tokens",
            "reasoning_effort",
            "extra_params",
            "concurrency_limit",
            "timeout_s",
            "max_retries",
            "price_in_per_1k",
            "price_out_per_1k",
            "cassette",
            "release_date",
        ]
        widgets = {"release_date": forms.DateInput(attrs={"type": "date"})}
        labels = {
            "api_key_env": "API key variable",
            "timeout_s": "Timeout (s)",
            "price_in_per_1k": "Price per 1k input tokens",
            "price_out_per_1k": "Price per 1k output tokens",
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        prefix = settings.LLM_KEY_ENV_PREFIX
        self.fields["api_key_env"].help_text = (
            f"The name of the environment variable holding the key on the workers, never the "
            f"key itself: it must start with <code>{prefix}</code> (or be listed in "
            "LLM_KEY_ENV_ALLOW). Empty: no key is sent."
        )
        self.fields[
            "extra_params"
        ].help_text = (
            "A JSON object of extra request body fields, e.g. {}; the call's own fields win."
        )


class PanelForm(forms.Form):
    """A panel's name and, per endpoint, whether it is a member and its K."""

    name = forms.CharField(max_length=100)
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))

    def __init__(self, *args, endpoints, panel=None, **kwargs):
        if panel is not None and "initial" not in kwargs:
            initial = {"name": panel.name, "description": panel.description}
            for m in panel.members.all():
                initial[f"member_{m.endpoint_id}"] = True
                initial[f"attempts_{m.endpoint_id}"] = m.attempts
            kwargs["initial"] = initial
        super().__init__(*args, **kwargs)
        self.panel = panel
        self.endpoints = list(endpoints)
        for endpoint in self.endpoints:
            self.fields[f"member_{endpoint.pk}"] = forms.BooleanField(
                required=False, label=endpoint.name
            )
            self.fields[f"attempts_{endpoint.pk}"] = forms.IntegerField(
                required=False,
                min_value=1,
                max_value=1000,
                label=f"K for {endpoint.name}",
                help_text="empty: the campaign's target_eval_k",
                widget=forms.NumberInput(
                    attrs={"aria-label": f"K for {endpoint.name}", "placeholder": "target_eval_k"}
                ),
            )

    def rows(self):
        return [(e, self[f"member_{e.pk}"], self[f"attempts_{e.pk}"]) for e in self.endpoints]

    def clean_name(self):
        from evolution.models import Panel

        name = self.cleaned_data["name"].strip()
        others = Panel.objects.exclude(pk=self.panel.pk) if self.panel else Panel.objects
        if others.filter(name=name).exists():
            raise forms.ValidationError("a panel with this name exists")
        return name

    def clean(self):
        data = super().clean()
        if not self.members():
            raise forms.ValidationError("A panel needs at least one target endpoint: tick one.")
        return data

    def members(self) -> list[tuple]:
        data = getattr(self, "cleaned_data", {})
        return [
            (e, data.get(f"attempts_{e.pk}")) for e in self.endpoints if data.get(f"member_{e.pk}")
        ]


class SeedImportForm(forms.Form):
    source = forms.ChoiceField(
        choices=[(s, SOURCE_LABELS.get(s, s)) for s in SOURCES], label="Importer"
    )
    file = forms.FileField(
        required=False,
        label="File",
        help_text="JSON lines (.jsonl, .jsonl.gz) or Parquet (.parquet) as the importer reads.",
    )
    solutions = forms.FileField(
        required=False,
        label="Solutions file (LiveCodeBench only, optional)",
        help_text="JSON lines of {question_id, solution}: the reference solutions "
        "LiveCodeBench does not publish.",
    )
    replace_references = forms.BooleanField(
        required=False,
        label="Replace reference solutions",
        help_text="off: a problem keeps the reference it has (from a solutions file, its "
        "record or a calibration attempt). On: the file's references replace them, and a "
        "problem the file gives none loses its own; each is listed on the import's page.",
    )
    set_name = forms.CharField(
        required=False,
        max_length=200,
        label="Problem set",
        help_text="empty: the source's own set (livecodebench for lcb, the file's "
        "problem_set for BenchForge JSON lines)",
    )

    def _bounded(self, upload, field: str):
        limit = settings.MAX_UPLOAD_BYTES
        if upload is not None and upload.size > limit:
            self.add_error(
                field,
                f"the file is {upload.size} bytes; uploads are limited to {limit} bytes "
                "(MAX_UPLOAD_BYTES); import larger files with `manage.py import_seeds`",
            )

    def clean(self):
        data = super().clean()
        source = data.get("source")
        upload = data.get("file")
        if source and source != "humaneval" and upload is None:
            self.add_error("file", f"the {source} importer needs a file")
        if data.get("solutions") is not None and source != "lcb":
            self.add_error("solutions", "a solutions file goes with the LiveCodeBench importer")
        self._bounded(upload, "file")
        self._bounded(data.get("solutions"), "solutions")
        if data.get("set_name") is not None:
            data["set_name"] = data["set_name"].strip()
        return data


def _role_field() -> forms.MultipleChoiceField:
    return forms.MultipleChoiceField(
        choices=[(r, f"{r}: {ROLE_HELP[r]}") for r in ROLES],
        widget=forms.CheckboxSelectMultiple,
        required=False,
        label="Roles",
    )


class UserCreateForm(forms.Form):
    username = forms.CharField(max_length=150)
    email = forms.EmailField(required=False)
    password = forms.CharField(
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
        help_text="the user can change it after logging in",
    )
    roles = _role_field()

    def clean_username(self):
        username = self.cleaned_data["username"].strip()
        field = get_user_model()._meta.get_field("username")
        for validator in field.validators:
            validator(username)
        if get_user_model().objects.filter(username=username).exists():
            raise forms.ValidationError("a user with this name exists")
        return username

    def clean(self):
        data = super().clean()
        if data.get("password"):
            try:
                password_validation.validate_password(
                    data["password"],
                    get_user_model()(username=data.get("username", ""), email=data.get("email")),
                )
            except forms.ValidationError as exc:
                self.add_error("password", exc)
        return data


class UserRolesForm(forms.Form):
    roles = _role_field()
