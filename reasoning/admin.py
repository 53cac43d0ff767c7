from django.contrib import admin

from .models import (
    ImportedExample,
    JudgeSeat,
    ReasoningCampaign,
    ReasoningItem,
    ReasoningRun,
    ReasoningSeries,
    ResultLogEntry,
)


@admin.register(ReasoningSeries)
class ReasoningSeriesAdmin(admin.ModelAdmin):
    list_display = ("name", "slug", "run_count", "ema", "holder", "state_saved_at")
    search_fields = ("name", "slug")
    readonly_fields = ("holder", "base_state")


@admin.register(ImportedExample)
class ImportedExampleAdmin(admin.ModelAdmin):
    list_display = ("series", "run_number", "reasoning_type", "difficulty", "score")
    list_filter = ("reasoning_type", "difficulty")
    search_fields = ("question",)


class JudgeSeatInline(admin.TabularInline):
    model = JudgeSeat
    extra = 0


@admin.register(ReasoningCampaign)
class ReasoningCampaignAdmin(admin.ModelAdmin):
    list_display = (
        "campaign",
        "series",
        "run_count",
        "current_difficulty",
        "ema",
        "state_saved_at",
    )
    inlines = [JudgeSeatInline]
    readonly_fields = ("lease_token", "leased_until", "ticket", "ticket_issued_at", "ticket_chain")


@admin.register(ReasoningRun)
class ReasoningRunAdmin(admin.ModelAdmin):
    list_display = ("reasoning", "series", "number", "status", "score", "ema_after", "finished_at")
    list_filter = ("status",)


@admin.register(ReasoningItem)
class ReasoningItemAdmin(admin.ModelAdmin):
    list_display = (
        "run",
        "reasoning_type",
        "difficulty",
        "question_index",
        "status",
        "judge_score",
    )
    list_filter = ("status", "reasoning_type", "difficulty")
    search_fields = ("question",)


@admin.register(ResultLogEntry)
class ResultLogEntryAdmin(admin.ModelAdmin):
    list_display = ("reasoning", "run", "event", "created_at")
    list_filter = ("event",)

    # Append-only: the admin may read the log, never change it.
    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
