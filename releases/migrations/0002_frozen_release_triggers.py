"""Immutability of frozen releases, enforced by the database itself.

Model ``save()`` guards stop ordinary code; these triggers also stop ``QuerySet.update()``,
bulk deletes, raw SQL and other clients. Rules:

- a release item or test may be inserted, updated or deleted only while its release is a
  draft (checked on the old and the new release, so rows cannot be moved out either);
- a release that left "draft" may only go frozen -> published (state and published_at);
  every other column, and deletion, is refused.

Both PostgreSQL (production, tests) and SQLite (the embedded demo) get the triggers.
"""

from django.db import migrations

PG_UP = r"""
CREATE OR REPLACE FUNCTION releases_draft_or_raise(rid bigint, what text) RETURNS void AS $$
DECLARE st varchar;
BEGIN
  IF rid IS NULL THEN RETURN; END IF;
  SELECT state INTO st FROM releases_release WHERE id = rid;
  IF st IS NOT NULL AND st <> 'draft' THEN
    RAISE EXCEPTION 'release % is %: its % are immutable', rid, st, what
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
END;
$$ LANGUAGE plpgsql;

CREATE OR REPLACE FUNCTION releases_item_guard() RETURNS trigger AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN PERFORM releases_draft_or_raise(OLD.release_id, 'items'); END IF;
  IF TG_OP IN ('UPDATE', 'INSERT') THEN PERFORM releases_draft_or_raise(NEW.release_id, 'items'); END IF;
  IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE OR REPLACE FUNCTION releases_test_guard() RETURNS trigger AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    PERFORM releases_draft_or_raise(
      (SELECT release_id FROM releases_releaseitem WHERE id = OLD.item_id), 'tests');
  END IF;
  IF TG_OP IN ('UPDATE', 'INSERT') THEN
    PERFORM releases_draft_or_raise(
      (SELECT release_id FROM releases_releaseitem WHERE id = NEW.item_id), 'tests');
  END IF;
  IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;

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

CREATE TRIGGER releases_item_immutable
  BEFORE INSERT OR UPDATE OR DELETE ON releases_releaseitem
  FOR EACH ROW EXECUTE FUNCTION releases_item_guard();
CREATE TRIGGER releases_test_immutable
  BEFORE INSERT OR UPDATE OR DELETE ON releases_releasetest
  FOR EACH ROW EXECUTE FUNCTION releases_test_guard();
CREATE TRIGGER releases_release_immutable
  BEFORE UPDATE OR DELETE ON releases_release
  FOR EACH ROW EXECUTE FUNCTION releases_release_guard();
"""

PG_DOWN = r"""
DROP TRIGGER IF EXISTS releases_item_immutable ON releases_releaseitem;
DROP TRIGGER IF EXISTS releases_test_immutable ON releases_releasetest;
DROP TRIGGER IF EXISTS releases_release_immutable ON releases_release;
DROP FUNCTION IF EXISTS releases_item_guard();
DROP FUNCTION IF EXISTS releases_test_guard();
DROP FUNCTION IF EXISTS releases_release_guard();
DROP FUNCTION IF EXISTS releases_draft_or_raise(bigint, text);
"""

_ITEM_FROZEN = "(SELECT state FROM releases_release WHERE id = {row}.release_id) <> 'draft'"
_TEST_FROZEN = (
    "(SELECT r.state FROM releases_release r JOIN releases_releaseitem i ON i.release_id = r.id"
    " WHERE i.id = {row}.item_id) <> 'draft'"
)


def _sqlite_trigger(name: str, event: str, table: str, condition: str, message: str) -> str:
    return (
        f"CREATE TRIGGER {name} BEFORE {event} ON {table} FOR EACH ROW WHEN {condition} "
        f"BEGIN SELECT RAISE(ABORT, '{message}'); END;"
    )


SQLITE_UP = [
    _sqlite_trigger(
        "releases_item_no_insert",
        "INSERT",
        "releases_releaseitem",
        _ITEM_FROZEN.format(row="NEW"),
        "items of a frozen release are immutable",
    ),
    _sqlite_trigger(
        "releases_item_no_update",
        "UPDATE",
        "releases_releaseitem",
        f"{_ITEM_FROZEN.format(row='OLD')} OR {_ITEM_FROZEN.format(row='NEW')}",
        "items of a frozen release are immutable",
    ),
    _sqlite_trigger(
        "releases_item_no_delete",
        "DELETE",
        "releases_releaseitem",
        _ITEM_FROZEN.format(row="OLD"),
        "items of a frozen release are immutable",
    ),
    _sqlite_trigger(
        "releases_test_no_insert",
        "INSERT",
        "releases_releasetest",
        _TEST_FROZEN.format(row="NEW"),
        "tests of a frozen release are immutable",
    ),
    _sqlite_trigger(
        "releases_test_no_update",
        "UPDATE",
        "releases_releasetest",
        f"{_TEST_FROZEN.format(row='OLD')} OR {_TEST_FROZEN.format(row='NEW')}",
        "tests of a frozen release are immutable",
    ),
    _sqlite_trigger(
        "releases_test_no_delete",
        "DELETE",
        "releases_releasetest",
        _TEST_FROZEN.format(row="OLD"),
        "tests of a frozen release are immutable",
    ),
    _sqlite_trigger(
        "releases_release_no_delete",
        "DELETE",
        "releases_release",
        "OLD.state <> 'draft'",
        "a frozen release cannot be deleted",
    ),
    _sqlite_trigger(
        "releases_release_no_update",
        "UPDATE",
        "releases_release",
        "OLD.state <> 'draft' AND ("
        "NOT (NEW.state = OLD.state OR (OLD.state = 'frozen' AND NEW.state = 'published'))"
        " OR NEW.benchmark_id IS NOT OLD.benchmark_id OR NEW.major IS NOT OLD.major"
        " OR NEW.minor IS NOT OLD.minor OR NEW.patch IS NOT OLD.patch"
        " OR NEW.notes IS NOT OLD.notes OR NEW.gate_rules IS NOT OLD.gate_rules"
        " OR NEW.previous_id IS NOT OLD.previous_id OR NEW.content_hash IS NOT OLD.content_hash"
        " OR NEW.item_count IS NOT OLD.item_count OR NEW.test_count IS NOT OLD.test_count"
        " OR NEW.frozen_at IS NOT OLD.frozen_at"
        " OR (OLD.state = 'published' AND NEW.published_at IS NOT OLD.published_at))",
        "only frozen -> published may change a frozen release",
    ),
]
SQLITE_NAMES = [sql.split()[2] for sql in SQLITE_UP]


def create_triggers(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        # A plain cursor: no parameter parsing, so RAISE's "%" placeholders stay intact.
        with schema_editor.connection.cursor() as cursor:
            cursor.execute(PG_UP)
    elif vendor == "sqlite":
        for sql in SQLITE_UP:
            schema_editor.execute(sql)


def drop_triggers(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        with schema_editor.connection.cursor() as cursor:
            cursor.execute(PG_DOWN)
    elif vendor == "sqlite":
        for name in SQLITE_NAMES:
            schema_editor.execute(f"DROP TRIGGER IF EXISTS {name}")


class Migration(migrations.Migration):
    dependencies = [("releases", "0001_initial")]

    operations = [migrations.RunPython(create_triggers, drop_triggers)]
