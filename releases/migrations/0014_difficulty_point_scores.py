"""An open-ended (scored) problem's difficulty point holds the panel's mean verifier score,
never a pass@1 (issue #34).

Re-measurements before this recorded such a problem as "pass@1 0.00 (0/n)": its samples are
scored, none of them "passes". Each of those points is rewritten from the samples of the
re-measurement's completed runs: the mean score of the answers (an answer without code scores
0), their count, and each model's mean; pass@1, its interval and the pass count are cleared.
A point whose runs gave the problem no answer is deleted (no evidence, no point). Going back
restores a pass@1 of 0 with the Wilson interval of 0 passes.
"""

from django.db import migrations, models

SCORED = "SC"
NOT_A_SAMPLE = ("", "IE")  # unjudged, or a failed model call


def _scored_items(apps) -> dict:
    ReleaseItem = apps.get_model("releases", "ReleaseItem")
    return {
        (release_id, public_id): item_id
        for item_id, release_id, public_id in ReleaseItem.objects.filter(
            record__comparison__mode="score"
        ).values_list("id", "release_id", "public_id")
    }


def set_scores_apart(apps, schema_editor):
    DifficultyPoint = apps.get_model("releases", "DifficultyPoint")
    LeaderboardSample = apps.get_model("releases", "LeaderboardSample")
    scored = _scored_items(apps)
    if not scored:
        return
    points = DifficultyPoint.objects.filter(
        public_id__in={public_id for _, public_id in scored}
    ).select_related("remeasurement")
    for point in points:
        item_id = scored.get((point.release_id, point.public_id))
        if item_id is None:
            continue
        detail, total, answers = [], 0.0, 0
        for run in point.remeasurement.runs.filter(state="completed").order_by("id"):
            values = [
                (details or {}).get("score", 0.0) if verdict == SCORED else 0.0
                for verdict, details in LeaderboardSample.objects.filter(run=run, item_id=item_id)
                .exclude(verdict__in=NOT_A_SAMPLE)
                .values_list("verdict", "details")
            ]
            if values:
                detail.append(
                    {"label": run.label, "n": len(values), "score": sum(values) / len(values)}
                )
            total += sum(values)
            answers += len(values)
        if not answers:
            point.delete()
            continue
        DifficultyPoint.objects.filter(pk=point.pk).update(
            mean_score=total / answers,
            pass_at_1=None,
            low=None,
            high=None,
            passes=None,
            samples=answers,
            models_detail=detail,
        )


def restore_pass_rates(apps, schema_editor):
    DifficultyPoint = apps.get_model("releases", "DifficultyPoint")
    z = 1.959963984540054
    for point in DifficultyPoint.objects.filter(mean_score__isnull=False):
        n = point.samples
        high = (z * z / n) / (1 + z * z / n) if n else 1.0  # Wilson upper bound of 0/n
        DifficultyPoint.objects.filter(pk=point.pk).update(
            mean_score=None,
            pass_at_1=0.0,
            low=0.0,
            high=min(1.0, high),
            passes=0,
            models_detail=[
                {"label": m["label"], "n": m["n"], "c": 0, "pass_at_1": 0.0}
                for m in point.models_detail or []
            ],
        )


class Migration(migrations.Migration):
    dependencies = [
        ("releases", "0013_public_record_guards"),
    ]

    operations = [
        migrations.AddField(
            model_name="difficultypoint",
            name="mean_score",
            field=models.FloatField(blank=True, null=True),
        ),
        migrations.AlterField(
            model_name="difficultypoint",
            name="high",
            field=models.FloatField(blank=True, null=True),
        ),
        migrations.AlterField(
            model_name="difficultypoint",
            name="low",
            field=models.FloatField(blank=True, null=True),
        ),
        migrations.AlterField(
            model_name="difficultypoint",
            name="pass_at_1",
            field=models.FloatField(blank=True, null=True),
        ),
        migrations.AlterField(
            model_name="difficultypoint",
            name="passes",
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
        migrations.RunPython(set_scores_apart, restore_pass_rates),
        migrations.AddConstraint(
            model_name="difficultypoint",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(
                        ("high__isnull", False),
                        ("low__isnull", False),
                        ("mean_score__isnull", True),
                        ("pass_at_1__isnull", False),
                        ("passes__isnull", False),
                    ),
                    models.Q(
                        ("high__isnull", True),
                        ("low__isnull", True),
                        ("mean_score__isnull", False),
                        ("pass_at_1__isnull", True),
                        ("passes__isnull", True),
                    ),
                    _connector="OR",
                ),
                name="difficultypoint_pass_rate_or_score",
            ),
        ),
    ]
