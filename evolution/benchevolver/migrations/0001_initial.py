"""BenchEvolver's tables become its own app's (state only: the tables, their rows, indexes and
constraints stay as the evolution app created them); the admin's content types follow."""

import django.db.models.deletion
from django.db import migrations, models

MOVED = ["lineage", "candidate", "solverattempt", "globalmemoryentry"]


def content_types_follow(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    db = schema_editor.connection.alias
    ContentType.objects.using(db).filter(app_label="evolution", model__in=MOVED).update(
        app_label="benchevolver"
    )


def content_types_go_back(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    db = schema_editor.connection.alias
    ContentType.objects.using(db).filter(app_label="benchevolver", model__in=MOVED).update(
        app_label="evolution"
    )


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("evolution", "0011_problem_reference_provenance"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            # The tables keep their names: only Django's picture of them moves.
            state_operations=[
                migrations.CreateModel(
                    name="Candidate",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        (
                            "round",
                            models.PositiveIntegerField(
                                help_text="1-based iteration within the lineage"
                            ),
                        ),
                        (
                            "stage",
                            models.CharField(
                                choices=[
                                    ("proposed", "Proposed"),
                                    ("generated", "Generated"),
                                    ("materialized", "Materialized"),
                                    ("validated", "Validated"),
                                    ("measured", "Measured"),
                                    ("judged", "Judged"),
                                    ("decided", "Decided"),
                                ],
                                default="proposed",
                                max_length=14,
                            ),
                        ),
                        ("title", models.CharField(blank=True, max_length=300)),
                        ("code", models.TextField(blank=True)),
                        ("code_diff", models.TextField(blank=True)),
                        ("statement", models.TextField(blank=True)),
                        ("idea", models.TextField(blank=True)),
                        ("parent_weakness", models.TextField(blank=True)),
                        ("family", models.CharField(blank=True, max_length=120)),
                        ("harness", models.CharField(blank=True, max_length=16)),
                        ("entry_point", models.CharField(blank=True, max_length=200)),
                        ("tests", models.JSONField(blank=True, default=list)),
                        ("generators", models.JSONField(blank=True, default=dict)),
                        ("validation_ledger", models.JSONField(blank=True, default=list)),
                        ("valid", models.BooleanField(null=True)),
                        ("repairs_used", models.PositiveIntegerField(default=0)),
                        ("spec_repairs", models.PositiveIntegerField(default=0)),
                        ("test_repairs", models.PositiveIntegerField(default=0)),
                        ("panel_results", models.JSONField(blank=True, default=dict)),
                        ("passes", models.PositiveIntegerField(blank=True, null=True)),
                        ("attempts", models.PositiveIntegerField(blank=True, null=True)),
                        ("level", models.PositiveSmallIntegerField(blank=True, null=True)),
                        ("error_pattern", models.JSONField(blank=True, default=dict)),
                        ("judge_report", models.JSONField(blank=True, default=dict)),
                        (
                            "memory_context",
                            models.TextField(blank=True, help_text="what the mutator's prompt saw"),
                        ),
                        (
                            "decision",
                            models.CharField(
                                blank=True,
                                choices=[
                                    ("accepted", "Accepted"),
                                    ("invalid", "Invalid"),
                                    ("not_harder", "Not Harder"),
                                    ("judge_rejected", "Judge Rejected"),
                                    ("duplicate", "Duplicate"),
                                    ("error", "Error"),
                                ],
                                max_length=16,
                            ),
                        ),
                        ("decision_reason", models.TextField(blank=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("decided_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "accepted_problem",
                            models.OneToOneField(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="source_candidate",
                                to="evolution.problem",
                            ),
                        ),
                        (
                            "parent",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="candidate_children",
                                to="evolution.problem",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "evolution_candidate",
                        "ordering": ["lineage_id", "round"],
                    },
                ),
                migrations.CreateModel(
                    name="GlobalMemoryEntry",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("family", models.CharField(max_length=120)),
                        ("summary", models.TextField()),
                        ("level_gain", models.IntegerField(default=0)),
                        ("accepted", models.BooleanField(default=True)),
                        ("decision", models.CharField(blank=True, max_length=20)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        (
                            "campaign",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="global_memory",
                                to="evolution.campaign",
                            ),
                        ),
                        (
                            "candidate",
                            models.OneToOneField(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="global_memory_entry",
                                to="benchevolver.candidate",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "evolution_globalmemoryentry",
                        "ordering": ["campaign_id", "created_at"],
                    },
                ),
                migrations.CreateModel(
                    name="Lineage",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("lease_token", models.CharField(blank=True, max_length=40)),
                        ("leased_until", models.DateTimeField(blank=True, null=True)),
                        ("ticket", models.CharField(blank=True, max_length=40)),
                        ("ticket_issued_at", models.DateTimeField(blank=True, null=True)),
                        ("ticket_chain", models.CharField(blank=True, max_length=40)),
                        ("steps_done", models.PositiveIntegerField(default=0)),
                        ("last_error", models.TextField(blank=True)),
                        ("consecutive_errors", models.PositiveSmallIntegerField(default=0)),
                        ("updated_at", models.DateTimeField(auto_now=True)),
                        ("position", models.PositiveIntegerField(default=0)),
                        (
                            "state",
                            models.CharField(
                                choices=[
                                    ("pending", "Pending"),
                                    ("evolving", "Evolving"),
                                    ("done", "Done"),
                                    ("skipped", "Skipped"),
                                    ("failed", "Failed"),
                                ],
                                default="pending",
                                max_length=10,
                            ),
                        ),
                        ("stop_reason", models.CharField(blank=True, max_length=300)),
                        ("seed_passes", models.PositiveIntegerField(blank=True, null=True)),
                        ("seed_attempts", models.PositiveIntegerField(blank=True, null=True)),
                        ("seed_level", models.PositiveSmallIntegerField(blank=True, null=True)),
                        ("parent_level", models.PositiveSmallIntegerField(blank=True, null=True)),
                        ("iterations", models.PositiveIntegerField(default=0)),
                        ("accepted_count", models.PositiveIntegerField(default=0)),
                        ("no_improve", models.PositiveIntegerField(default=0)),
                        ("best_level", models.PositiveSmallIntegerField(blank=True, null=True)),
                        ("memory", models.JSONField(blank=True, default=list)),
                        (
                            "campaign",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="lineages",
                                to="evolution.campaign",
                            ),
                        ),
                        (
                            "parent",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="+",
                                to="evolution.problem",
                            ),
                        ),
                        (
                            "seed",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="seeded_lineages",
                                to="evolution.problem",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "evolution_lineage",
                        "ordering": ["campaign_id", "position"],
                    },
                ),
                migrations.AddField(
                    model_name="candidate",
                    name="lineage",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="candidates",
                        to="benchevolver.lineage",
                    ),
                ),
                migrations.CreateModel(
                    name="SolverAttempt",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("attempt_index", models.PositiveIntegerField()),
                        ("code", models.TextField(blank=True)),
                        ("verdict", models.CharField(max_length=4)),
                        ("passed_tests", models.PositiveIntegerField(default=0)),
                        ("total_tests", models.PositiveIntegerField(default=0)),
                        ("details", models.JSONField(blank=True, default=dict)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        (
                            "candidate",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="solver_attempts",
                                to="benchevolver.candidate",
                            ),
                        ),
                        (
                            "endpoint",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="solver_attempts",
                                to="evolution.modelendpoint",
                            ),
                        ),
                        (
                            "lineage",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="attempts",
                                to="benchevolver.lineage",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "evolution_solverattempt",
                        "ordering": ["id"],
                    },
                ),
                migrations.AddIndex(
                    model_name="lineage",
                    index=models.Index(
                        fields=["campaign", "state"], name="evolution_l_campaig_98ceb2_idx"
                    ),
                ),
                migrations.AddConstraint(
                    model_name="lineage",
                    constraint=models.UniqueConstraint(
                        fields=("campaign", "seed"), name="lineage_unique_seed"
                    ),
                ),
                migrations.AddIndex(
                    model_name="candidate",
                    index=models.Index(fields=["decision"], name="evolution_c_decisio_b2ac0f_idx"),
                ),
                migrations.AddConstraint(
                    model_name="candidate",
                    constraint=models.UniqueConstraint(
                        fields=("lineage", "round"), name="candidate_unique_round"
                    ),
                ),
                migrations.AddConstraint(
                    model_name="candidate",
                    constraint=models.CheckConstraint(
                        condition=models.Q(
                            ("decision", ""),
                            (
                                "decision__in",
                                [
                                    "accepted",
                                    "invalid",
                                    "not_harder",
                                    "judge_rejected",
                                    "duplicate",
                                    "error",
                                ],
                            ),
                            _connector="OR",
                        ),
                        name="candidate_decision_valid",
                    ),
                ),
                migrations.AddConstraint(
                    model_name="candidate",
                    constraint=models.CheckConstraint(
                        condition=models.Q(
                            models.Q(("decision", "accepted"), _negated=True),
                            ("accepted_problem__isnull", False),
                            _connector="OR",
                        ),
                        name="candidate_accepted_has_problem",
                    ),
                ),
                migrations.AddConstraint(
                    model_name="solverattempt",
                    constraint=models.UniqueConstraint(
                        condition=models.Q(("candidate__isnull", True)),
                        fields=("lineage", "endpoint", "attempt_index"),
                        name="solverattempt_unique_seed",
                    ),
                ),
                migrations.AddConstraint(
                    model_name="solverattempt",
                    constraint=models.UniqueConstraint(
                        condition=models.Q(("candidate__isnull", False)),
                        fields=("candidate", "endpoint", "attempt_index"),
                        name="solverattempt_unique_candidate",
                    ),
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(content_types_follow, content_types_go_back),
    ]
