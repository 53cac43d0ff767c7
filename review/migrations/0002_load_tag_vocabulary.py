from django.db import migrations


def load(apps, schema_editor):
    from evolution.vocabulary import VOCABULARY, normalize_tag_key

    Tag = apps.get_model("review", "Tag")
    TagSynonym = apps.get_model("review", "TagSynonym")
    for name, synonyms in VOCABULARY.items():
        tag, _ = Tag.objects.get_or_create(name=name, defaults={"status": "approved"})
        for key in {normalize_tag_key(name), *(normalize_tag_key(s) for s in synonyms)}:
            TagSynonym.objects.get_or_create(key=key, defaults={"tag": tag})


class Migration(migrations.Migration):
    dependencies = [("review", "0001_initial")]
    operations = [migrations.RunPython(load, migrations.RunPython.noop)]
