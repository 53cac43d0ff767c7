"""Content hash format 2 (releases/content.py): the release records which format its hash
uses. Releases frozen before keep NULL (format 1) and their stored hashes stay verifiable. The
frozen-release guard now covers the new column too."""

import importlib

from django.db import migrations, models

_0002 = importlib.import_module("releases.migrations.0002_frozen_release_triggers")

GUARD = r"""
CREATE OR REPLACE FUNCTION releases_release_guard() RETURNS trigger AS $$
BEGIN
  IF OLD.state = 'draft' THEN
    IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
    RETURN NEW;
  END IF;
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'release % is %: it cannot be deleted', OLD.id, OLD.state
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  IF NOT (NEW.state = OLD.state OR (OLD.state = 'frozen' AND NEW.state = 'published'))
     OR NEW.benchmark_id IS DISTINCT FROM OLD.benchmark_id
     OR NEW.major IS DISTINCT FROM OLD.major
     OR NEW.minor IS DISTINCT FROM OLD.minor
     OR NEW.patch IS DISTINCT FROM OLD.patch
     OR NEW.notes IS DISTINCT FROM OLD.notes
     OR NEW.gate_rules::text IS DISTINCT FROM OLD.gate_rules::text
     OR NEW.previous_id IS DISTINCT FROM OLD.previous_id
     OR NEW.content_hash IS DISTINCT FROM OLD.content_hash
     OR NEW.hash_format IS DISTINCT FROM OLD.hash_format
     OR NEW.item_count IS DISTINCT FROM OLD.item_count
     OR NEW.test_count IS DISTINCT FROM OLD.test_count
     OR NEW.frozen_at IS DISTINCT FROM OLD.frozen_at
     OR (OLD.state = 'published' AND NEW.published_at IS DISTINCT FROM OLD.published_at) THEN
    RAISE EXCEPTION 'release % is %: only frozen -> published may change it', OLD.id, OLD.state
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
"""

_SQLITE_CONDITION = (
    "OLD.state <> 'draft' AND ("
    "NOT (NEW.state = OLD.state OR (OLD.state = 'frozen' AND NEW.state = 'published'))"
    " OR NEW.benchmark_id IS NOT OLD.benchmark_id OR NEW.major IS NOT OLD.major"
    " OR NEW.minor IS NOT OLD.minor OR NEW.patch IS NOT OLD.patch"
    " OR NEW.notes IS NOT OLD.notes OR NEW.gate_rules IS NOT OLD.gate_rules"
    " OR NEW.previous_id IS NOT OLD.previous_id OR NEW.content_hash IS NOT OLD.content_hash"
    " OR NEW.hash_format IS NOT OLD.hash_format"
    " OR NEW.item_count IS NOT OLD.item_count OR NEW.test_count IS NOT OLD.test_count"
    " OR NEW.frozen_at IS NOT OLD.frozen_at"
    " OR (OLD.state = 'published' AND NEW.published_at IS NOT OLD.published_at))"
)
SQLITE_UP = _0002._sqlite_trigger(
    "releases_release_no_update",
    "UPDATE",
    "releases_release",
    _SQLITE_CONDITION,
    "only frozen -> published may change a frozen release",
)
SQLITE_DOWN = next(s for s in _0002.SQLITE_UP if "releases_release_no_update" in s)


def _guard(new: bool):
    def run(apps, schema_editor):
        vendor = schema_editor.connection.vendor
        if vendor == "postgresql":
            # The previous guard is 0002's function; replacing it keeps its trigger.
            sql = GUARD if new else _previous_pg_guard()
            with schema_editor.connection.cursor() as cursor:
                cursor.execute(sql)
        elif vendor == "sqlite":
            schema_editor.execute("DROP TRIGGER IF EXISTS releases_release_no_update")
            schema_editor.execute(SQLITE_UP if new else SQLITE_DOWN)

    return run


def _previous_pg_guard() -> str:
    text = _0002.PG_UP
    start = text.index("CREATE OR REPLACE FUNCTION releases_release_guard()")
    end = text.index("LANGUAGE plpgsql;", start) + len("LANGUAGE plpgsql;")
    return text[start:end]


class Migration(migrations.Migration):
    dependencies = [
        ("releases", "0007_merge_independent_and_withdrawal"),
    ]

    operations = [
        migrations.AddField(
            model_name="release",
            name="hash_format",
            field=models.CharField(blank=True, max_length=40, null=True),
        ),
        migrations.RunPython(_guard(True), _guard(False)),
    ]
