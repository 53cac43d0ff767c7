"""Joins the campaign started_at trigger (written beside the stream and ledger migrations)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("evolution", "0005_campaign_started_at_kept"),
        ("evolution", "0005_merge_streams_and_ledger"),
    ]

    operations = []
