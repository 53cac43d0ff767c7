"""Model endpoints (OpenAI-compatible) and target panels. API keys never enter the database:
an endpoint stores the NAME of the environment variable that holds its key."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models
from django.db.models import Q

ENV_NAME = RegexValidator(
    r"^[A-Z_][A-Z0-9_]*$", "Use an environment variable name such as OPENAI_API_KEY."
)


# Bounds beyond what the columns hold: a retry count of 99999 or a 1e308-second timeout would
# pin a worker for good. Checked in clean() (admin, API) rather than as field validators so
# the schema stays as migrated.
ENDPOINT_BOUNDS = {
    "max_retries": (0, 20),
    "timeout_s": (1.0, 3600.0),
    "concurrency_limit": (1, 1024),
    "max_tokens": (1, 1_000_000),
    "temperature": (0.0, 2.0),
}


class Provider(models.TextChoices):
    OPENAI = "openai", "OpenAI-compatible HTTP"
    REPLAY = "replay", "replayed responses (cassette)"


class ReasoningEffort(models.TextChoices):
    MINIMAL = "minimal", "minimal"
    LOW = "low", "low"
    MEDIUM = "medium", "medium"
    HIGH = "high", "high"


class ModelEndpoint(models.Model):
    """An OpenAI-compatible endpoint and its own sampling parameters.

    Sampling: ``temperature`` None takes the campaign's ``temperature`` (Table 5: 0.8);
    ``omit_temperature`` sends none at all (APIs that reject any temperature but their
    default answer 400 otherwise); ``top_p`` / ``max_tokens`` / ``reasoning_effort`` are sent
    only when set; ``extra_params`` are extra body fields. A campaign's ``timeout`` caps
    ``timeout_s`` for its calls (``evolution/llm/sampling.py`` resolves what is sent)."""

    name = models.CharField(max_length=100, unique=True)
    provider = models.CharField(max_length=10, choices=Provider.choices, default=Provider.OPENAI)
    base_url = models.URLField(
        max_length=300, blank=True, help_text="e.g. http://127.0.0.1:8001/v1"
    )
    model = models.CharField(max_length=200)
    api_key_env = models.CharField(max_length=100, blank=True, validators=[ENV_NAME])
    temperature = models.FloatField(
        null=True, blank=True, help_text="empty: the campaign's temperature"
    )
    omit_temperature = models.BooleanField(
        default=False, help_text="send no temperature (the API accepts only its default)"
    )
    top_p = models.FloatField(null=True, blank=True)
    max_tokens = models.PositiveIntegerField(null=True, blank=True)
    reasoning_effort = models.CharField(
        max_length=10, blank=True, choices=ReasoningEffort.choices, help_text="empty: not sent"
    )
    extra_params = models.JSONField(default=dict, blank=True, help_text="extra request body fields")
    concurrency_limit = models.PositiveIntegerField(default=4)
    timeout_s = models.FloatField(default=600.0)
    max_retries = models.PositiveIntegerField(default=5)
    price_in_per_1k = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    price_out_per_1k = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    cassette = models.CharField(
        max_length=300, blank=True, help_text="replay provider: cassette file"
    )
    release_date = models.DateField(null=True, blank=True, help_text="for contamination flags")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(concurrency_limit__gte=1), name="endpoint_concurrency_positive"
            ),
            models.CheckConstraint(
                condition=Q(temperature__gte=0) & Q(temperature__lte=2),
                name="endpoint_temperature_range",
            ),
            models.CheckConstraint(condition=Q(timeout_s__gt=0), name="endpoint_timeout_positive"),
            models.CheckConstraint(
                condition=Q(price_in_per_1k__gte=0) & Q(price_out_per_1k__gte=0),
                name="endpoint_prices_non_negative",
            ),
            models.CheckConstraint(
                condition=Q(provider="replay") | ~Q(base_url=""), name="endpoint_remote_needs_url"
            ),
        ]

    def __str__(self):
        return self.name

    @property
    def is_replay(self) -> bool:
        return self.provider == Provider.REPLAY

    def clean(self):
        # The platform's policy (evolution.policy.secrets, evolution.policy.urlpolicy): which
        # key variables, which cassette files and which destinations a worker may be pointed at.
        from evolution.policy import secrets, urlpolicy

        errors = {}
        for field, (low, high) in ENDPOINT_BOUNDS.items():
            value = getattr(self, field)
            # NaN and infinities fail both comparisons' complements, so test the range directly.
            if value is not None and not (low <= value <= high):
                errors[field] = f"must be between {low} and {high}, got {value}"
        if problem := secrets.key_env_problem(self.api_key_env):
            errors["api_key_env"] = problem
        if problem := secrets.cassette_problem(self.cassette):
            errors["cassette"] = problem
        if problem := urlpolicy.url_problem(self.base_url):
            errors["base_url"] = problem
        # The table's constraints said in words, on their fields (the database refuses the row
        # anyway; a form would otherwise show the constraint's name).
        if self.provider != Provider.REPLAY and not (self.base_url or "").strip():
            errors.setdefault(
                "base_url", "a remote endpoint needs its base URL (only a replayed one has none)"
            )
        for field in ("price_in_per_1k", "price_out_per_1k"):
            value = getattr(self, field)
            if value is not None and value < 0:
                errors.setdefault(field, "a price cannot be negative")
        if errors:
            raise ValidationError(errors)


class Panel(models.Model):
    """The target models whose failures define difficulty."""

    name = models.CharField(max_length=100, unique=True)
    description = models.TextField(blank=True)
    endpoints = models.ManyToManyField(ModelEndpoint, through="PanelMember", related_name="panels")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name


class PanelMember(models.Model):
    panel = models.ForeignKey(Panel, on_delete=models.CASCADE, related_name="members")
    endpoint = models.ForeignKey(
        ModelEndpoint, on_delete=models.PROTECT, related_name="panel_memberships"
    )
    attempts = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="K attempts per problem for this model; empty: the campaign's target_eval_k",
    )

    class Meta:
        ordering = ["panel_id", "endpoint__name"]
        constraints = [
            models.UniqueConstraint(fields=["panel", "endpoint"], name="panelmember_unique"),
            models.CheckConstraint(
                condition=Q(attempts__gte=1), name="panelmember_attempts_positive"
            ),
        ]

    def __str__(self):
        return f"{self.panel} / {self.endpoint} x{self.attempts or 'K'}"

    def k(self, default: int) -> int:
        """Attempts this member makes per problem: its own K, else the campaign's."""
        return self.attempts or default
