from django.contrib import admin
from django.db import models as django_models

from . import models


class TestCaseInline(admin.TabularInline):
    model = models.TestCase
    extra = 0
    fields = ("tier", "ordinal", "hidden", "input_text", "output_text")
    show_change_link = True


@admin.register(models.Problem)
class ProblemAdmin(admin.ModelAdmin):
    list_display = (
        "title",
        "public_id",
        "harness",
        "kind",
        "method",
        "origin_dataset",
        "origin_id",
        "origin_difficulty",
    )
    list_filter = ("harness", "kind", "method", "origin_dataset", "problem_sets")
    search_fields = ("title", "public_id", "origin_id")
    raw_id_fields = ("parent", "lineage_root")
    readonly_fields = ("reference_origin",)
    inlines = [TestCaseInline]

    @admin.display(description="Reference provenance (where the reference came from)")
    def reference_origin(self, problem):
        return problem.reference_origin or "no reference"


@admin.register(models.TestCase)
class TestCaseAdmin(admin.ModelAdmin):
    list_display = ("problem", "tier", "ordinal", "hidden")
    list_filter = ("tier", "hidden")
    raw_id_fields = ("problem",)


@admin.register(models.ProblemSet)
class ProblemSetAdmin(admin.ModelAdmin):
    list_display = ("name", "source", "created_at")
    filter_horizontal = ("problems",)


@admin.register(models.ModelEndpoint)
class ModelEndpointAdmin(admin.ModelAdmin):
    list_display = ("name", "provider", "model", "base_url", "concurrency_limit", "api_key_env")
    # A base URL typed without a scheme is https, as on the staff endpoint form (and as Django
    # 6 will assume).
    formfield_overrides = {django_models.URLField: {"assume_scheme": "https"}}


class PanelMemberInline(admin.TabularInline):
    model = models.PanelMember
    extra = 1


@admin.register(models.Panel)
class PanelAdmin(admin.ModelAdmin):
    list_display = ("name",)
    inlines = [PanelMemberInline]


@admin.register(models.Campaign)
class CampaignAdmin(admin.ModelAdmin):
    list_display = ("name", "kind", "state", "calls_made", "cost", "replayed", "created_at")
    list_filter = ("kind", "state", "replayed")


@admin.register(models.LLMCall)
class LLMCallAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "campaign",
        "role",
        "endpoint_name",
        "status",
        "tokens_in",
        "tokens_out",
        "latency_ms",
    )
    list_filter = ("status", "role")
    exclude = ("request_z", "response_z")
    readonly_fields = ("request_text", "response_text")


@admin.register(models.StepFailure)
class StepFailureAdmin(admin.ModelAdmin):
    list_display = ("created_at", "campaign", "kind", "stream_id", "action", "consequence")
    list_filter = ("kind", "consequence", "infrastructure")
    raw_id_fields = ("campaign",)
    readonly_fields = ("traceback",)
