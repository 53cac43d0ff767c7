"""What a published release shows cannot change, enforced by the database.

- A benchmark's identity (name, slug, licence, description: its public URL, card and exports)
  is frozen once one of its releases leaves "draft"; it cannot be deleted then either.
- A release's source lists (campaigns, problem sets) change only while it is a draft.
- A completed leaderboard run on a published release, and its samples, cannot be changed
  or deleted.
- TRUNCATE (which fires no row trigger) of any of these tables is refused while a non-draft
  release exists. Only a role that may disable triggers (the owner, see
  ``python manage.py db_roles``) can get past these rules, and only by disabling them.

PostgreSQL only for TRUNCATE (SQLite has none); the row rules get SQLite triggers too.
"""

from django.db import migrations

TRUNCATE_TABLES = [
    "releases_benchmark",
    "releases_release",
    "releases_releaseitem",
    "releases_releasetest",
    "releases_releasequestion",
    "releases_release_campaigns",
    "releases_release_problem_sets",
    "releases_leaderboardrun",
    "releases_leaderboardsample",
]

PG_UP = r"""
CREATE OR REPLACE FUNCTION releases_benchmark_guard() RETURNS trigger AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM releases_release WHERE benchmark_id = OLD.id AND state <> 'draft') THEN
    IF TG_OP = 'DELETE' THEN
      RAISE EXCEPTION 'benchmark % has a frozen release: it cannot be deleted', OLD.slug
        USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF NEW.name IS DISTINCT FROM OLD.name OR NEW.slug IS DISTINCT FROM OLD.slug
       OR NEW.license IS DISTINCT FROM OLD.license
       OR NEW.description IS DISTINCT FROM OLD.description THEN
      RAISE EXCEPTION 'benchmark % has a frozen release: its name, slug, licence and description are frozen', OLD.slug
        USING ERRCODE = 'integrity_constraint_violation';
    END IF;
  END IF;
  IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE OR REPLACE FUNCTION releases_sources_guard() RETURNS trigger AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN PERFORM releases_draft_or_raise(OLD.release_id, 'source lists'); END IF;
  IF TG_OP IN ('UPDATE', 'INSERT') THEN PERFORM releases_draft_or_raise(NEW.release_id, 'source lists'); END IF;
  IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE OR REPLACE FUNCTION releases_run_is_published(rid bigint) RETURNS boolean AS $$
  SELECT EXISTS (
    SELECT 1 FROM releases_leaderboardrun r JOIN releases_release rel ON rel.id = r.release_id
    WHERE r.id = rid AND r.state = 'completed' AND rel.state = 'published');
$$ LANGUAGE sql STABLE;

CREATE OR REPLACE FUNCTION releases_run_guard() RETURNS trigger AS $$
BEGIN
  IF releases_run_is_published(OLD.id) THEN
    RAISE EXCEPTION 'leaderboard run % is published: it cannot be changed or deleted', OLD.id
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE OR REPLACE FUNCTION releases_sample_guard() RETURNS trigger AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') AND releases_run_is_published(OLD.run_id) THEN
    RAISE EXCEPTION 'leaderboard run % is published: its samples are immutable', OLD.run_id
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  IF TG_OP IN ('UPDATE', 'INSERT') AND releases_run_is_published(NEW.run_id) THEN
    RAISE EXCEPTION 'leaderboard run % is published: its samples are immutable', NEW.run_id
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE OR REPLACE FUNCTION releases_truncate_guard() RETURNS trigger AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM releases_release WHERE state <> 'draft') THEN
    RAISE EXCEPTION 'TRUNCATE % refused: frozen or published releases exist', TG_TABLE_NAME
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER releases_benchmark_identity
  BEFORE UPDATE OR DELETE ON releases_benchmark
  FOR EACH ROW EXECUTE FUNCTION releases_benchmark_guard();
CREATE TRIGGER releases_campaigns_immutable
  BEFORE INSERT OR UPDATE OR DELETE ON releases_release_campaigns
  FOR EACH ROW EXECUTE FUNCTION releases_sources_guard();
CREATE TRIGGER releases_problem_sets_immutable
  BEFORE INSERT OR UPDATE OR DELETE ON releases_release_problem_sets
  FOR EACH ROW EXECUTE FUNCTION releases_sources_guard();
CREATE TRIGGER releases_run_immutable
  BEFORE UPDATE OR DELETE ON releases_leaderboardrun
  FOR EACH ROW EXECUTE FUNCTION releases_run_guard();
CREATE TRIGGER releases_sample_immutable
  BEFORE INSERT OR UPDATE OR DELETE ON releases_leaderboardsample
  FOR EACH ROW EXECUTE FUNCTION releases_sample_guard();
""" + "".join(
    f"CREATE TRIGGER {t}_no_truncate BEFORE TRUNCATE ON {t} "
    "FOR EACH STATEMENT EXECUTE FUNCTION releases_truncate_guard();\n"
    for t in TRUNCATE_TABLES
)

PG_DOWN = (
    "".join(f"DROP TRIGGER IF EXISTS {t}_no_truncate ON {t};\n" for t in TRUNCATE_TABLES)
    + r"""
DROP TRIGGER IF EXISTS releases_benchmark_identity ON releases_benchmark;
DROP TRIGGER IF EXISTS releases_campaigns_immutable ON releases_release_campaigns;
DROP TRIGGER IF EXISTS releases_problem_sets_immutable ON releases_release_problem_sets;
DROP TRIGGER IF EXISTS releases_run_immutable ON releases_leaderboardrun;
DROP TRIGGER IF EXISTS releases_sample_immutable ON releases_leaderboardsample;
DROP FUNCTION IF EXISTS releases_truncate_guard();
DROP FUNCTION IF EXISTS releases_sample_guard();
DROP FUNCTION IF EXISTS releases_run_guard();
DROP FUNCTION IF EXISTS releases_run_is_published(bigint);
DROP FUNCTION IF EXISTS releases_sources_guard();
DROP FUNCTION IF EXISTS releases_benchmark_guard();
"""
)

_BENCH_FROZEN = "EXISTS (SELECT 1 FROM releases_release WHERE benchmark_id = OLD.id AND state <> 'draft')"
_SOURCE_FROZEN = "(SELECT state FROM releases_release WHERE id = {row}.release_id) <> 'draft'"
_RUN_PUBLISHED = (
    "EXISTS (SELECT 1 FROM releases_leaderboardrun r JOIN releases_release rel"
    " ON rel.id = r.release_id WHERE r.id = {rid} AND r.state = 'completed'"
    " AND rel.state = 'published')"
)


def _sqlite(name: str, event: str, table: str, condition: str, message: str) -> str:
    return (
        f"CREATE TRIGGER {name} BEFORE {event} ON {table} FOR EACH ROW WHEN {condition} "
        f"BEGIN SELECT RAISE(ABORT, '{message}'); END;"
    )


SQLITE_UP = [
    _sqlite(
        "releases_benchmark_no_update",
        "UPDATE",
        "releases_benchmark",
        f"{_BENCH_FROZEN} AND (NEW.name IS NOT OLD.name OR NEW.slug IS NOT OLD.slug"
        " OR NEW.license IS NOT OLD.license OR NEW.description IS NOT OLD.description)",
        "a benchmark with a frozen release keeps its name, slug, licence and description",
    ),
    _sqlite(
        "releases_benchmark_no_delete",
        "DELETE",
        "releases_benchmark",
        _BENCH_FROZEN,
        "a benchmark with a frozen release cannot be deleted",
    ),
]
for _table in ("releases_release_campaigns", "releases_release_problem_sets"):
    SQLITE_UP += [
        _sqlite(
            f"{_table}_no_insert",
            "INSERT",
            _table,
            _SOURCE_FROZEN.format(row="NEW"),
            "source lists of a frozen release are immutable",
        ),
        _sqlite(
            f"{_table}_no_update",
            "UPDATE",
            _table,
            f"{_SOURCE_FROZEN.format(row='OLD')} OR {_SOURCE_FROZEN.format(row='NEW')}",
            "source lists of a frozen release are immutable",
        ),
        _sqlite(
            f"{_table}_no_delete",
            "DELETE",
            _table,
            _SOURCE_FROZEN.format(row="OLD"),
            "source lists of a frozen release are immutable",
        ),
    ]
SQLITE_UP += [
    _sqlite(
        "releases_run_no_update",
        "UPDATE",
        "releases_leaderboardrun",
        _RUN_PUBLISHED.format(rid="OLD.id"),
        "a published leaderboard run cannot be changed",
    ),
    _sqlite(
        "releases_run_no_delete",
        "DELETE",
        "releases_leaderboardrun",
        _RUN_PUBLISHED.format(rid="OLD.id"),
        "a published leaderboard run cannot be deleted",
    ),
    _sqlite(
        "releases_sample_no_insert",
        "INSERT",
        "releases_leaderboardsample",
        _RUN_PUBLISHED.format(rid="NEW.run_id"),
        "samples of a published leaderboard run are immutable",
    ),
    _sqlite(
        "releases_sample_no_update",
        "UPDATE",
        "releases_leaderboardsample",
        f"{_RUN_PUBLISHED.format(rid='OLD.run_id')} OR {_RUN_PUBLISHED.format(rid='NEW.run_id')}",
        "samples of a published leaderboard run are immutable",
    ),
    _sqlite(
        "releases_sample_no_delete",
        "DELETE",
        "releases_leaderboardsample",
        _RUN_PUBLISHED.format(rid="OLD.run_id"),
        "samples of a published leaderboard run are immutable",
    ),
]
SQLITE_NAMES = [sql.split()[2] for sql in SQLITE_UP]


def create_triggers(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
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
    dependencies = [("releases", "0003_release_questions")]

    operations = [migrations.RunPython(create_triggers, drop_triggers)]
