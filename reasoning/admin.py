from django.contrib import admin

from .models import JudgeSeat, ReasoningCampaign, ReasoningItem, ReasoningRun, ResultLogEntry


class JudgeSeatInline(admin.TabularInline):
    model = JudgeSeat
    extra = 0


@admin.register(ReasoningCampaign)
class ReasoningCampaignAdmin(admin.ModelAdmin):
    list_display = ("campaign", "run_count", "current_difficulty", "ema", "state_saved_at")
    inlines = [JudgeSeatInline]
    readonly_fields = ("lease_token", "leased_until", "ticket", "ticket_issued_at", "ticket_chain")


@admin.register(ReasoningRun)
class ReasoningRunAdmin(admin.ModelAdmin):
    list_display = ("reasoning", "number", "status", "score", "ema_after", "finished_at")
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
