from django.contrib import admin

from accounts.models import APIToken

from .models import SeedImportJob


@admin.register(APIToken)
class APITokenAdmin(admin.ModelAdmin):
    list_display = ("user", "name", "prefix", "created_at", "last_used_at")
    readonly_fields = ("token_hash", "prefix")


@admin.register(SeedImportJob)
class SeedImportJobAdmin(admin.ModelAdmin):
    list_display = ("id", "source", "file_name", "state", "created_at", "created_by")
    list_filter = ("source", "state")
    exclude = ("content", "solutions")  # the upload itself is not shown (and is dropped once read)
