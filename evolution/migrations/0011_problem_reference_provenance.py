"""Where a problem's reference solution came from gets a column of its own
(``Problem.reference_provenance``). The provenance that imports and calibration used to keep
in ``metadata["reference_provenance"]`` moves there; a reference stored without one gets what
can still be known: a seed's came with its record (its dataset), another problem's from the
method that made it."""

from django.db import migrations, models

KEY = "reference_provenance"


def inferred(problem) -> dict:
    if not problem.reference_solution.strip():
        return {}
    if problem.kind == "seed":
        return {
            "source": "record",
            **({"dataset": problem.origin_dataset} if problem.origin_dataset else {}),
        }
    campaign = (problem.metadata or {}).get("campaign")
    return {"source": problem.method, **({"campaign": campaign} if campaign is not None else {})}


def move_provenance(apps, schema_editor):
    Problem = apps.get_model("evolution", "Problem")
    changed = []
    rows = Problem.objects.only(
        "id", "reference_solution", "kind", "method", "origin_dataset", "metadata", KEY
    )
    for problem in rows.iterator(chunk_size=500):
        metadata = dict(problem.metadata or {})
        moved = metadata.pop(KEY, None)
        provenance = moved if isinstance(moved, dict) and moved else problem.reference_provenance
        if not provenance:
            provenance = inferred(problem)
        if moved is None and provenance == problem.reference_provenance:
            continue
        problem.metadata, problem.reference_provenance = metadata, provenance
        changed.append(problem)
        if len(changed) >= 500:
            Problem.objects.bulk_update(changed, ["metadata", KEY])
            changed = []
    Problem.objects.bulk_update(changed, ["metadata", KEY])


def back_to_metadata(apps, schema_editor):
    Problem = apps.get_model("evolution", "Problem")
    for problem in Problem.objects.exclude(**{KEY: {}}).iterator(chunk_size=500):
        problem.metadata = {**(problem.metadata or {}), KEY: problem.reference_provenance}
        problem.save(update_fields=["metadata"])


class Migration(migrations.Migration):
    dependencies = [("evolution", "0010_sqlite_started_at_kept_again")]

    operations = [
        migrations.AddField(
            model_name="problem",
            name="reference_provenance",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.RunPython(move_provenance, back_to_metadata),
    ]
