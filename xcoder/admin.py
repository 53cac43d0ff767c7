from django.contrib import admin

from .models import CandidateSolution, FeatureNode, SynthTask, XcoderCampaign


@admin.register(XcoderCampaign)
class XcoderCampaignAdmin(admin.ModelAdmin):
    list_display = ("campaign", "generator_endpoint", "tree_merged", "steps_done")
    readonly_fields = ("lease_token", "leased_until", "ticket", "ticket_issued_at")


@admin.register(FeatureNode)
class FeatureNodeAdmin(admin.ModelAdmin):
    list_display = ("path", "category", "origin", "evolution_round", "xcoder")
    list_filter = ("origin", "category")
    search_fields = ("path",)


@admin.register(SynthTask)
class SynthTaskAdmin(admin.ModelAdmin):
    list_display = ("xcoder", "index", "style", "status", "reason_code", "problem")
    list_filter = ("status", "style", "reason_code")


@admin.register(CandidateSolution)
class CandidateSolutionAdmin(admin.ModelAdmin):
    list_display = ("task", "endpoint", "sample", "passed_gates", "reason")
    list_filter = ("passed_gates",)
