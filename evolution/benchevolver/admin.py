"""The admin's pages of BenchEvolver's tables."""

from django.contrib import admin

from . import models


@admin.register(models.Lineage)
class LineageAdmin(admin.ModelAdmin):
    list_display = ("campaign", "seed", "state", "seed_level", "iterations", "accepted_count")
    list_filter = ("state",)
    raw_id_fields = ("seed", "parent")


@admin.register(models.Candidate)
class CandidateAdmin(admin.ModelAdmin):
    list_display = ("id", "lineage", "round", "stage", "decision", "level", "family")
    list_filter = ("stage", "decision")
    raw_id_fields = ("lineage", "parent", "accepted_problem")


@admin.register(models.SolverAttempt)
class SolverAttemptAdmin(admin.ModelAdmin):
    list_display = ("lineage", "candidate", "endpoint", "attempt_index", "verdict")
    raw_id_fields = ("lineage", "candidate")


@admin.register(models.GlobalMemoryEntry)
class GlobalMemoryEntryAdmin(admin.ModelAdmin):
    list_display = ("campaign", "family", "level_gain", "created_at")
