"""Lineage inherits the abstract WorkStream: it gains the ticket's tick chain (existing rows get
"", which the next tick treats as another chain and re-issues, as after a resume)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("evolution", "0003_campaign_tick_token"),
    ]

    operations = [
        migrations.AddField(
            model_name="lineage",
            name="ticket_chain",
            field=models.CharField(blank=True, max_length=40),
        ),
    ]
