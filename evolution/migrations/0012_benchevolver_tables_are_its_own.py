"""Lineage, Candidate, SolverAttempt and GlobalMemoryEntry leave the evolution app's state for
BenchEvolver's (``benchevolver`` 0001); no table changes."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("benchevolver", "0001_initial"),
        ("evolution", "0011_problem_reference_provenance"),
        ("review", "0007_reviewgroup_lineage_is_benchevolvers"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            # The tables keep their names: only Django's picture of them moves.
            state_operations=[
                migrations.RemoveField(
                    model_name="globalmemoryentry",
                    name="candidate",
                ),
                migrations.RemoveField(
                    model_name="solverattempt",
                    name="candidate",
                ),
                migrations.AlterField(
                    model_name="llmcall",
                    name="candidate",
                    field=models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="llm_calls",
                        to="benchevolver.candidate",
                    ),
                ),
                migrations.RemoveField(
                    model_name="globalmemoryentry",
                    name="campaign",
                ),
                migrations.RemoveField(
                    model_name="lineage",
                    name="campaign",
                ),
                migrations.RemoveField(
                    model_name="lineage",
                    name="parent",
                ),
                migrations.RemoveField(
                    model_name="lineage",
                    name="seed",
                ),
                migrations.AlterField(
                    model_name="llmcall",
                    name="lineage",
                    field=models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="llm_calls",
                        to="benchevolver.lineage",
                    ),
                ),
                migrations.RemoveField(
                    model_name="solverattempt",
                    name="lineage",
                ),
                migrations.RemoveField(
                    model_name="solverattempt",
                    name="endpoint",
                ),
                migrations.DeleteModel(
                    name="Candidate",
                ),
                migrations.DeleteModel(
                    name="GlobalMemoryEntry",
                ),
                migrations.DeleteModel(
                    name="Lineage",
                ),
                migrations.DeleteModel(
                    name="SolverAttempt",
                ),
            ],
            database_operations=[],
        ),
    ]
