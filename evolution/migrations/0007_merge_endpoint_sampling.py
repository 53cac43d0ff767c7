"""Joins the per-endpoint sampling and family memory migration, written beside the others."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("evolution", "0004_endpoint_sampling_and_family_memory"),
        ("evolution", "0006_merge_started_at"),
    ]

    operations = []
