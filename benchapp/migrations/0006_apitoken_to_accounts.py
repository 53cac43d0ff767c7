"""The API token model moves to accounts (accounts 0001); its table stays: state only."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("benchapp", "0005_seed_import_job_replace_references"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[migrations.DeleteModel(name="APIToken")],
        ),
    ]
