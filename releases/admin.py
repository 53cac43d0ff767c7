"""The Django admin of releases: curation records stay editable; what a published release
shows does not.

A frozen or published release, its items, its leaderboard runs and its errata are read-only
here (they can be viewed, never added, changed or deleted): releases are made by freezing,
results by the scoring service, errata on the curator's release page (signed, append-only; a
correction is a new erratum). The database refuses the same writes from any other path
(migrations 0002, 0004, 0013; ``releases.public_record``).
"""

from django.contrib import admin

from .models import (
    Benchmark,
    CurationDecision,
    Erratum,
    GateRun,
    LeaderboardRun,
    Release,
    ReleaseItem,
    ReleaseState,
)


class ReadOnlyAdmin(admin.ModelAdmin):
    """Viewable, never written through the admin."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Benchmark)
class BenchmarkAdmin(admin.ModelAdmin):
    list_display = ("name", "slug", "license", "created_at")


@admin.register(Release)
class ReleaseAdmin(admin.ModelAdmin):
    list_display = ("benchmark", "version", "state", "item_count", "content_hash", "published_at")
    list_filter = ("state", "benchmark")
    # Frozen releases are immutable (the database refuses); edits go through the pages.
    readonly_fields = ("content_hash", "item_count", "test_count", "frozen_at", "published_at")

    def has_change_permission(self, request, obj=None):
        if obj is not None and obj.state != ReleaseState.DRAFT:
            return False
        return super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        if obj is not None and obj.state != ReleaseState.DRAFT:
            return False
        return super().has_delete_permission(request, obj)


@admin.register(ReleaseItem)
class ReleaseItemAdmin(ReadOnlyAdmin):
    """Items are snapshots taken by freezing their release."""

    list_display = ("public_id", "release", "origin", "difficulty", "content_hash")
    list_filter = ("origin", "release")


@admin.register(Erratum)
class ErratumAdmin(ReadOnlyAdmin):
    """Errata are recorded on the curator's release page, signed; a correction is a new one."""

    list_display = (
        "item_public_id",
        "release",
        "kind",
        "signed_by",
        "created_at",
        "fixed_in",
        "resolution",
    )


@admin.register(LeaderboardRun)
class LeaderboardRunAdmin(ReadOnlyAdmin):
    """Runs are created on the curator's pages and scored by the scoring service only."""

    list_display = ("label", "release", "source", "state", "finished_at")
    list_filter = ("state", "release")


admin.site.register(GateRun)
admin.site.register(CurationDecision)
