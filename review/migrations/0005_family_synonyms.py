"""The vocabulary's corrected synonyms (review/vocabulary.py then, evolution/vocabulary.py now): "search" no longer means
backtracking (it folded "graph search" and "meet in the middle search" into it), and phrases
naming a DP over a DAG, memoization or a DP over bitmasks mean their DP tag."""

from django.db import migrations

# key -> tag name; the keys are already normalized (evolution.vocabulary.normalize_tag_key).
ADDED = {
    "memoization": "dynamic programming",
    "memoized recursion": "dynamic programming",
    "dp on dag": "dynamic programming",
    "dp over dag": "dynamic programming",
    "dag dp": "dynamic programming",
    "dp with bitmask": "bitmask dp",
    "dp over bitmasks": "bitmask dp",
    "graph search": "graphs",
    "graph traversal": "graphs",
    "recursive search": "backtracking",
    "backtracking search": "backtracking",
}


def forward(apps, schema_editor):
    Tag = apps.get_model("review", "Tag")
    TagSynonym = apps.get_model("review", "TagSynonym")
    # Only the seeded meaning is removed: a curator who re-pointed "search" keeps theirs.
    TagSynonym.objects.filter(key="search", tag__name="backtracking").delete()
    for key, name in ADDED.items():
        tag = Tag.objects.filter(name=name).first()
        if tag is not None:
            TagSynonym.objects.get_or_create(key=key, defaults={"tag": tag})


def backward(apps, schema_editor):
    Tag = apps.get_model("review", "Tag")
    TagSynonym = apps.get_model("review", "TagSynonym")
    TagSynonym.objects.filter(key__in=list(ADDED)).delete()
    backtracking = Tag.objects.filter(name="backtracking").first()
    if backtracking is not None:
        TagSynonym.objects.get_or_create(key="search", defaults={"tag": backtracking})


class Migration(migrations.Migration):
    dependencies = [("review", "0004_reasoning_items")]
    operations = [migrations.RunPython(forward, backward)]
