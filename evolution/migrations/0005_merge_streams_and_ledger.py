"""Joins two migrations written side by side: the work-stream ticket chain and the call
ledger's sent status. Neither touches the other's tables."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("evolution", "0004_lineage_ticket_chain"),
        ("evolution", "0004_llmcall_sent_status"),
    ]

    operations = []
