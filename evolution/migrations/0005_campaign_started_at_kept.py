"""A campaign's started_at is when it first ran: resuming must not reset it.

Every kind's tick (and in-process runner) marks a queued campaign running with
``started_at=now``, and a resumed campaign passes through "queued" again, so elapsed time
and the ETA restarted at every resume. The rule lives in the database, where every kind's
update passes: once set, started_at keeps its first value.
"""

from django.db import migrations

PG_UP = r"""
CREATE OR REPLACE FUNCTION evolution_campaign_keep_started_at() RETURNS trigger AS $$
BEGIN
  IF OLD.started_at IS NOT NULL THEN
    NEW.started_at := OLD.started_at;
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER evolution_campaign_started_at_kept
  BEFORE UPDATE OF started_at ON evolution_campaign
  FOR EACH ROW EXECUTE FUNCTION evolution_campaign_keep_started_at();
"""

PG_DOWN = r"""
DROP TRIGGER IF EXISTS evolution_campaign_started_at_kept ON evolution_campaign;
DROP FUNCTION IF EXISTS evolution_campaign_keep_started_at();
"""

# SQLite cannot assign NEW in a trigger: put the first value back right after the update.
SQLITE_UP = (
    "CREATE TRIGGER evolution_campaign_started_at_kept AFTER UPDATE OF started_at "
    "ON evolution_campaign FOR EACH ROW "
    "WHEN OLD.started_at IS NOT NULL AND NEW.started_at IS NOT OLD.started_at "
    "BEGIN UPDATE evolution_campaign SET started_at = OLD.started_at WHERE id = NEW.id; END;"
)


def create(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        with schema_editor.connection.cursor() as cursor:
            cursor.execute(PG_UP)
    elif vendor == "sqlite":
        schema_editor.execute(SQLITE_UP)


def drop(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        with schema_editor.connection.cursor() as cursor:
            cursor.execute(PG_DOWN)
    elif vendor == "sqlite":
        schema_editor.execute("DROP TRIGGER IF EXISTS evolution_campaign_started_at_kept")


class Migration(migrations.Migration):
    dependencies = [("evolution", "0004_llmcall_sent_status")]

    operations = [migrations.RunPython(create, drop)]
