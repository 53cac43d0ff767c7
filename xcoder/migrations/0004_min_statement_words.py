"""The statement floor's setting is named for what it counts: min_statement_tokens ->
min_statement_words in every stored X-Coder campaign's settings."""

from django.db import migrations

RENAMES = {"min_statement_tokens": "min_statement_words"}


def rename(apps, schema_editor, renames=RENAMES):
    Campaign = apps.get_model("evolution", "Campaign")
    for campaign in Campaign.objects.filter(kind="xcoder").only("pk", "settings"):
        settings = dict(campaign.settings or {})
        if not any(old in settings for old in renames):
            continue
        for old, new in renames.items():
            if old in settings:
                settings[new] = settings.pop(old)
        Campaign.objects.filter(pk=campaign.pk).update(settings=settings)


def rename_back(apps, schema_editor):
    rename(apps, schema_editor, {new: old for old, new in RENAMES.items()})


class Migration(migrations.Migration):
    dependencies = [
        ("xcoder", "0003_task_difficulty"),
        ("evolution", "0011_problem_reference_provenance"),
    ]

    operations = [migrations.RunPython(rename, rename_back)]
