"""On SQLite, 0008 and 0009 added columns to evolution_campaign by rebuilding the table, which
dropped 0005's trigger that keeps a campaign's first ``started_at``: make it again there
(PostgreSQL adds columns in place and kept it). tests/deploy/test_sqlite_migrations.py checks
that every SQLite trigger survives the migrations."""

import importlib

from django.db import migrations

_started_at = importlib.import_module("evolution.migrations.0005_campaign_started_at_kept")


def create(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        schema_editor.execute(
            _started_at.SQLITE_UP.replace("CREATE TRIGGER ", "CREATE TRIGGER IF NOT EXISTS ", 1)
        )


class Migration(migrations.Migration):
    dependencies = [("evolution", "0009_campaign_pauses_and_step_failures")]

    operations = [migrations.RunPython(create, migrations.RunPython.noop)]
