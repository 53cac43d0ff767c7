"""Series: the benchmark a reasoning campaign continues (design document 004, sections 6.1 and
9). Every existing campaign gets a series of its own holding its state, so nothing changes for
it; its runs keep their numbers."""

import django.db.models.deletion
from django.db import migrations, models
from django.utils.text import slugify


def _unique(model, field: str, wanted: str, limit: int) -> str:
    value, n = wanted[:limit], 1
    while model.objects.filter(**{field: value}).exists():
        n += 1
        suffix = f"-{n}" if field == "slug" else f" ({n})"
        value = wanted[: limit - len(suffix)] + suffix
    return value


def series_per_campaign(apps, schema_editor):
    Series = apps.get_model("reasoning", "ReasoningSeries")
    ReasoningCampaign = apps.get_model("reasoning", "ReasoningCampaign")
    ReasoningRun = apps.get_model("reasoning", "ReasoningRun")
    for rc in ReasoningCampaign.objects.select_related("campaign").order_by("pk"):
        name = _unique(Series, "name", rc.campaign.name, 200)
        series = Series.objects.create(
            name=name,
            slug=_unique(Series, "slug", slugify(name) or f"series-{rc.pk}", 80),
            ema=rc.ema,
            run_count=rc.run_count,
            current_difficulty=rc.current_difficulty,
            ema_by_reasoning_type=rc.ema_by_reasoning_type,
            ema_by_difficulty=rc.ema_by_difficulty,
            state_saved_at=rc.state_saved_at,
            holder=rc,
        )
        rc.series = series
        rc.series_start = {
            "ema": None,
            "run_count": 0,
            "current_difficulty": 1,
            "ema_by_reasoning_type": {},
            "ema_by_difficulty": {},
        }
        rc.save(update_fields=["series", "series_start"])
        ReasoningRun.objects.filter(reasoning=rc).update(series=series)


class Migration(migrations.Migration):
    dependencies = [
        ("reasoning", "0001_initial"),
    ]

    operations = [
        migrations.CreateModel(
            name="ReasoningSeries",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("name", models.CharField(max_length=200, unique=True)),
                ("slug", models.SlugField(max_length=80, unique=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("ema", models.FloatField(blank=True, null=True)),
                ("run_count", models.PositiveIntegerField(default=0)),
                ("current_difficulty", models.PositiveSmallIntegerField(default=1)),
                ("ema_by_reasoning_type", models.JSONField(blank=True, default=dict)),
                ("ema_by_difficulty", models.JSONField(blank=True, default=dict)),
                ("state_saved_at", models.DateTimeField(blank=True, null=True)),
                ("base_state", models.JSONField(blank=True, default=dict)),
                (
                    "holder",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="reasoning.reasoningcampaign",
                    ),
                ),
            ],
            options={
                "verbose_name_plural": "reasoning series",
                "ordering": ["name"],
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(("current_difficulty__gte", 1), ("current_difficulty__lte", 10)),
                        name="reasoningseries_current_difficulty_range",
                    )
                ],
            },
        ),
        migrations.AddField(
            model_name="reasoningcampaign",
            name="series",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="campaigns",
                to="reasoning.reasoningseries",
            ),
        ),
        migrations.AddField(
            model_name="reasoningcampaign",
            name="series_start",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.AddField(
            model_name="reasoningrun",
            name="series",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="runs",
                to="reasoning.reasoningseries",
            ),
        ),
        migrations.AlterField(
            model_name="reasoningrun",
            name="number",
            field=models.PositiveIntegerField(help_text="1-based, in series order"),
        ),
        migrations.RunPython(series_per_campaign, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="reasoningcampaign",
            name="series",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT,
                related_name="campaigns",
                to="reasoning.reasoningseries",
            ),
        ),
        migrations.AlterField(
            model_name="reasoningrun",
            name="series",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="runs",
                to="reasoning.reasoningseries",
            ),
        ),
        migrations.AddConstraint(
            model_name="reasoningrun",
            constraint=models.UniqueConstraint(
                fields=("series", "number"), name="reasoningrun_series_number"
            ),
        ),
        migrations.CreateModel(
            name="ImportedExample",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("run_number", models.PositiveIntegerField(blank=True, null=True)),
                ("reasoning_type", models.CharField(max_length=60)),
                ("difficulty", models.PositiveSmallIntegerField()),
                ("question_index", models.PositiveSmallIntegerField(default=0)),
                ("question", models.TextField()),
                ("answer", models.TextField(blank=True)),
                ("score", models.FloatField(blank=True, null=True)),
                ("rationale", models.TextField(blank=True)),
                ("created_at", models.CharField(blank=True, help_text="as the file gives it", max_length=64)),
                ("extra", models.JSONField(blank=True, default=dict)),
                (
                    "series",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="imported",
                        to="reasoning.reasoningseries",
                    ),
                ),
            ],
            options={
                "ordering": ["series_id", "id"],
                "indexes": [models.Index(fields=["series", "reasoning_type"], name="reasoning_i_series__7a7725_idx")],
            },
        ),
    ]
