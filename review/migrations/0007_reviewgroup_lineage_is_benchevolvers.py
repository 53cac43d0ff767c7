"""A review group's lineage is BenchEvolver's table now (state only)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("benchevolver", "0001_initial"),
        ("review", "0006_assignment_draft_version"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            # The tables keep their names: only Django's picture of them moves.
            state_operations=[
                migrations.AlterField(
                    model_name="reviewgroup",
                    name="lineage",
                    field=models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="benchevolver.lineage",
                    ),
                ),
            ],
            database_operations=[],
        ),
    ]
