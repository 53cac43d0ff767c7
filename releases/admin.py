from django.contrib import admin

from .models import (
    Benchmark,
    CurationDecision,
    Erratum,
    GateRun,
    LeaderboardRun,
    Release,
    ReleaseItem,
)


@admin.register(Benchmark)
class BenchmarkAdmin(admin.ModelAdmin):
    list_display = ("name", "slug", "license", "created_at")


@admin.register(Release)
class ReleaseAdmin(admin.ModelAdmin):
    list_display = ("benchmark", "version", "state", "item_count", "content_hash", "published_at")
    list_filter = ("state", "benchmark")
    # Frozen releases are immutable (the database refuses); edits go through the pages.
    readonly_fields = ("content_hash", "item_count", "test_count", "frozen_at", "published_at")


@admin.register(ReleaseItem)
class ReleaseItemAdmin(admin.ModelAdmin):
    list_display = ("public_id", "release", "origin", "difficulty", "content_hash")
    list_filter = ("origin", "release")
    raw_id_fields = ("problem",)


@admin.register(Erratum)
class ErratumAdmin(admin.ModelAdmin):
    list_display = ("item_public_id", "release", "kind", "fixed_in", "resolution")


admin.site.register(GateRun)
admin.site.register(CurationDecision)
admin.site.register(LeaderboardRun)
