from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("review", "0005_family_synonyms"),
    ]

    operations = [
        migrations.AddField(
            model_name="assignment",
            name="draft_version",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="assignment",
            name="draft_writer",
            field=models.CharField(blank=True, max_length=32),
        ),
        migrations.AddField(
            model_name="assignment",
            name="draft_writer_since",
            field=models.PositiveIntegerField(default=0),
        ),
    ]
