from django.contrib import admin

from .models import (
    Adjudication,
    Assignment,
    GroupItem,
    Review,
    ReviewGroup,
    ReviewRound,
    ScoreOverride,
    Tag,
    TagSynonym,
)


class GroupItemInline(admin.TabularInline):
    model = GroupItem
    extra = 0
    raw_id_fields = ("problem",)


@admin.register(ReviewRound)
class ReviewRoundAdmin(admin.ModelAdmin):
    list_display = ("name", "status", "reviewers_per_group", "created_at")
    filter_horizontal = ("reviewers",)


@admin.register(ReviewGroup)
class ReviewGroupAdmin(admin.ModelAdmin):
    list_display = ("opaque_id", "round", "root_problem", "position")
    raw_id_fields = ("lineage", "root_problem")
    inlines = [GroupItemInline]


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ("opaque_id", "group", "reviewer", "certified_no_ai", "submitted_at")
    list_filter = ("group__round",)


@admin.register(Review)
class ReviewAdmin(admin.ModelAdmin):
    list_display = ("id", "item", "assignment", "clarity", "novelty", "difficulty", "quality")
    raw_id_fields = ("assignment", "item")


class TagSynonymInline(admin.TabularInline):
    model = TagSynonym
    extra = 0


@admin.register(Tag)
class TagAdmin(admin.ModelAdmin):
    list_display = ("name", "status", "merged_into")
    list_filter = ("status",)
    search_fields = ("name", "synonyms__key")
    inlines = [TagSynonymInline]


admin.site.register(Adjudication)
admin.site.register(ScoreOverride)
