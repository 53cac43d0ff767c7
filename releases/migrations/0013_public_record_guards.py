"""The public record of a release is append-only, enforced by the database (issue #34).

Leaderboard runs and question runs, with their samples:

- a run is created queued, without a result; what it evaluates (release, model, label,
  sample count, seed, source) never changes afterwards;
- only the scoring service completes a run (``releases.public_record.writing()``), from
  running, holding its claim: a failed run is never edited into a completed one (the service
  runs it again: queued, running, completed), and a result (summary, finished_at) is written
  only by that step;
- a completed run, and every sample of it, is immutable and cannot be deleted (run the model
  again for a new result);
- samples of any run are written only by the scoring service;
- a question run's judges change only while it is queued.

The job machinery (``releases.jobs``: claim, heartbeat, re-send, re-queue, fail, run again)
still moves a run that is not completed between queued, running and failed. On PostgreSQL
the "what it evaluates" rule compares every column but the job machinery's own, so a column
added later is fixed unless it is listed in ``releases_result_guard``'s ``working``.

Errata are append-only: inserted open and signed (``signed_by``, the curator's username,
kept when the account goes) on a release that is not a draft; never edited or deleted (a
correction is a new erratum); their "fixed in" is recorded once, by the scoring service of
``release_freeze`` (``_mark_fixed_errata``), naming a later non-draft version of the same
benchmark. An account's deletion may still clear ``created_by`` of runs and errata.

TRUNCATE of the new tables is refused while a non-draft release exists (0004's guard).
SQLite (``make demo``) gets the same rules as row triggers; the scoring service's mark is the
SQL function ``benchforge_public_record()`` that ``releases.public_record`` registers on every
Django connection. A later migration that adds a column to one of these tables must, on
SQLite, drop these triggers first and create them again afterwards (see 0011).
"""

import importlib

from django.db import migrations, models

_0004 = importlib.import_module("releases.migrations.0004_published_identity_runs_truncate_guards")

GUARDED = [
    "releases_erratum",
    "releases_questionrun",
    "releases_questionsample",
    "releases_questionrun_judges",
]

PG_UP = r"""
CREATE OR REPLACE FUNCTION releases_public_record_writer() RETURNS boolean AS $$
  SELECT coalesce(current_setting('benchforge.public_record', true), '') = 'on';
$$ LANGUAGE sql STABLE;

CREATE OR REPLACE FUNCTION releases_result_guard() RETURNS trigger AS $$
DECLARE
  -- What the job machinery (releases.jobs) and the scoring service change on a run that is
  -- not completed; every other column is fixed when the run is created.
  working text[] := ARRAY['state', 'error', 'claim', 'heartbeat_at', 'sent_at', 'created_at',
                          'lost_workers', 'recovery', 'summary', 'finished_at', 'created_by_id'];
BEGIN
  IF TG_OP = 'INSERT' THEN
    IF NEW.state <> 'queued' OR NEW.summary <> '{}'::jsonb OR NEW.finished_at IS NOT NULL THEN
      RAISE EXCEPTION '%: a run is created queued, without a result: only the scoring service completes it', TG_TABLE_NAME
        USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
  END IF;
  IF OLD.state = 'completed' THEN
    IF TG_OP = 'DELETE' THEN
      RAISE EXCEPTION '% %: a completed run is part of the public record: it cannot be deleted', TG_TABLE_NAME, OLD.id
        USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF (to_jsonb(NEW) - 'created_by_id') IS DISTINCT FROM (to_jsonb(OLD) - 'created_by_id')
       OR (NEW.created_by_id IS NOT NULL AND NEW.created_by_id IS DISTINCT FROM OLD.created_by_id) THEN
      RAISE EXCEPTION '% %: a completed run is part of the public record: it cannot be changed (evaluate the model again for a new result)', TG_TABLE_NAME, OLD.id
        USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
  END IF;
  IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
  IF (to_jsonb(NEW) - working) IS DISTINCT FROM (to_jsonb(OLD) - working)
     OR (NEW.created_by_id IS NOT NULL AND NEW.created_by_id IS DISTINCT FROM OLD.created_by_id) THEN
    RAISE EXCEPTION '% %: what a run evaluates (release, model, label, samples, seed) is fixed when it is created', TG_TABLE_NAME, OLD.id
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  IF NEW.state = 'completed' THEN
    IF OLD.state <> 'running' OR NOT releases_public_record_writer()
       OR NEW.claim IS DISTINCT FROM OLD.claim OR NEW.claim = ''
       OR NEW.finished_at IS NULL OR jsonb_typeof(NEW.summary) <> 'object' THEN
      RAISE EXCEPTION '% %: only the scoring service completes a run, from running (a failed run is run again, never edited)', TG_TABLE_NAME, OLD.id
        USING ERRCODE = 'integrity_constraint_violation';
    END IF;
  ELSIF NEW.summary IS DISTINCT FROM OLD.summary OR NEW.finished_at IS DISTINCT FROM OLD.finished_at THEN
    RAISE EXCEPTION '% %: a run''s result is written once, by the scoring service, as it completes', TG_TABLE_NAME, OLD.id
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;

-- Samples of a run (TG_ARGV[0]: the runs' table): written only by the scoring service, and
-- never once their run completed.
CREATE OR REPLACE FUNCTION releases_result_sample_guard() RETURNS trigger AS $$
DECLARE
  st text;
  rid bigint;
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    rid := OLD.run_id;
    EXECUTE format('SELECT state FROM %I WHERE id = $1', TG_ARGV[0]) INTO st USING rid;
    IF st = 'completed' THEN
      RAISE EXCEPTION 'run % is completed: its samples are part of the public record and immutable', rid
        USING ERRCODE = 'integrity_constraint_violation';
    END IF;
  END IF;
  IF TG_OP IN ('UPDATE', 'INSERT') THEN
    rid := NEW.run_id;
    EXECUTE format('SELECT state FROM %I WHERE id = $1', TG_ARGV[0]) INTO st USING rid;
    IF st = 'completed' THEN
      RAISE EXCEPTION 'run % is completed: its samples are part of the public record and immutable', rid
        USING ERRCODE = 'integrity_constraint_violation';
    END IF;
  END IF;
  IF NOT releases_public_record_writer() THEN
    RAISE EXCEPTION 'samples of run % are written only by the scoring service', rid
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE OR REPLACE FUNCTION releases_judges_guard() RETURNS trigger AS $$
DECLARE st text;
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    SELECT state INTO st FROM releases_questionrun WHERE id = OLD.questionrun_id;
    IF st = 'completed' OR (TG_OP = 'UPDATE' AND st <> 'queued') THEN
      RAISE EXCEPTION 'question run %: its judges change only while it is queued', OLD.questionrun_id
        USING ERRCODE = 'integrity_constraint_violation';
    END IF;
  END IF;
  IF TG_OP IN ('UPDATE', 'INSERT') THEN
    SELECT state INTO st FROM releases_questionrun WHERE id = NEW.questionrun_id;
    IF st <> 'queued' THEN
      RAISE EXCEPTION 'question run %: its judges change only while it is queued', NEW.questionrun_id
        USING ERRCODE = 'integrity_constraint_violation';
    END IF;
  END IF;
  IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE OR REPLACE FUNCTION releases_erratum_guard() RETURNS trigger AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    IF NEW.fixed_in_id IS NOT NULL OR NEW.resolution <> '' THEN
      RAISE EXCEPTION 'an erratum is recorded open: only freezing the version that fixes it records it as fixed'
        USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF coalesce(NEW.signed_by, '') = '' THEN
      RAISE EXCEPTION 'an erratum is signed by the curator who records it'
        USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF coalesce((SELECT state FROM releases_release WHERE id = NEW.release_id), 'draft') = 'draft' THEN
      RAISE EXCEPTION 'a draft has no errata: fix the problem before freezing'
        USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
  END IF;
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'erratum %: errata are append-only: it cannot be deleted (record a correction as a new erratum)', OLD.id
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  IF (to_jsonb(NEW) - ARRAY['fixed_in_id', 'resolution', 'created_by_id'])
       IS DISTINCT FROM (to_jsonb(OLD) - ARRAY['fixed_in_id', 'resolution', 'created_by_id'])
     OR (NEW.created_by_id IS NOT NULL AND NEW.created_by_id IS DISTINCT FROM OLD.created_by_id) THEN
    RAISE EXCEPTION 'erratum %: errata are append-only: it cannot be edited (record a correction as a new erratum)', OLD.id
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  IF (NEW.fixed_in_id IS DISTINCT FROM OLD.fixed_in_id OR NEW.resolution IS DISTINCT FROM OLD.resolution)
     AND (OLD.fixed_in_id IS NOT NULL OR OLD.resolution <> '' OR NEW.fixed_in_id IS NULL
          OR NEW.resolution NOT IN ('changed', 'removed') OR NOT releases_public_record_writer()
          OR NOT EXISTS (
            SELECT 1 FROM releases_release fix JOIN releases_release rel ON rel.id = NEW.release_id
            WHERE fix.id = NEW.fixed_in_id AND fix.state <> 'draft'
              AND fix.benchmark_id = rel.benchmark_id
              AND (fix.major, fix.minor, fix.patch) > (rel.major, rel.minor, rel.patch))) THEN
    RAISE EXCEPTION 'erratum %: "fixed in" is recorded once, by freezing a later version that fixes it', OLD.id
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;

DROP TRIGGER IF EXISTS releases_run_immutable ON releases_leaderboardrun;
DROP TRIGGER IF EXISTS releases_sample_immutable ON releases_leaderboardsample;
CREATE TRIGGER releases_run_result
  BEFORE INSERT OR UPDATE OR DELETE ON releases_leaderboardrun
  FOR EACH ROW EXECUTE FUNCTION releases_result_guard();
CREATE TRIGGER releases_sample_result
  BEFORE INSERT OR UPDATE OR DELETE ON releases_leaderboardsample
  FOR EACH ROW EXECUTE FUNCTION releases_result_sample_guard('releases_leaderboardrun');
CREATE TRIGGER releases_question_run_result
  BEFORE INSERT OR UPDATE OR DELETE ON releases_questionrun
  FOR EACH ROW EXECUTE FUNCTION releases_result_guard();
CREATE TRIGGER releases_question_sample_result
  BEFORE INSERT OR UPDATE OR DELETE ON releases_questionsample
  FOR EACH ROW EXECUTE FUNCTION releases_result_sample_guard('releases_questionrun');
CREATE TRIGGER releases_question_judges_fixed
  BEFORE INSERT OR UPDATE OR DELETE ON releases_questionrun_judges
  FOR EACH ROW EXECUTE FUNCTION releases_judges_guard();
CREATE TRIGGER releases_erratum_append_only
  BEFORE INSERT OR UPDATE OR DELETE ON releases_erratum
  FOR EACH ROW EXECUTE FUNCTION releases_erratum_guard();
""" + "".join(
    f"CREATE TRIGGER {t}_no_truncate BEFORE TRUNCATE ON {t} "
    "FOR EACH STATEMENT EXECUTE FUNCTION releases_truncate_guard();\n"
    for t in GUARDED
)

PG_DOWN = (
    "".join(f"DROP TRIGGER IF EXISTS {t}_no_truncate ON {t};\n" for t in GUARDED)
    + r"""
DROP TRIGGER IF EXISTS releases_erratum_append_only ON releases_erratum;
DROP TRIGGER IF EXISTS releases_question_judges_fixed ON releases_questionrun_judges;
DROP TRIGGER IF EXISTS releases_question_sample_result ON releases_questionsample;
DROP TRIGGER IF EXISTS releases_question_run_result ON releases_questionrun;
DROP TRIGGER IF EXISTS releases_sample_result ON releases_leaderboardsample;
DROP TRIGGER IF EXISTS releases_run_result ON releases_leaderboardrun;
DROP FUNCTION IF EXISTS releases_erratum_guard();
DROP FUNCTION IF EXISTS releases_judges_guard();
DROP FUNCTION IF EXISTS releases_result_sample_guard();
DROP FUNCTION IF EXISTS releases_result_guard();
DROP FUNCTION IF EXISTS releases_public_record_writer();
CREATE TRIGGER releases_run_immutable
  BEFORE UPDATE OR DELETE ON releases_leaderboardrun
  FOR EACH ROW EXECUTE FUNCTION releases_run_guard();
CREATE TRIGGER releases_sample_immutable
  BEFORE INSERT OR UPDATE OR DELETE ON releases_leaderboardsample
  FOR EACH ROW EXECUTE FUNCTION releases_sample_guard();
"""
)


# --- SQLite ------------------------------------------------------------------------------------

MARK = "benchforge_public_record()"


def _sqlite(name: str, event: str, table: str, condition: str, message: str) -> str:
    return (
        f"CREATE TRIGGER {name} BEFORE {event} ON {table} FOR EACH ROW WHEN {condition} "
        f"BEGIN SELECT RAISE(ABORT, '{message}'); END;"
    )


def _changed(columns: list[str]) -> str:
    return "(" + " OR ".join(f"NEW.{c} IS NOT OLD.{c}" for c in columns) + ")"


_CREATOR_CHANGED = "(NEW.created_by_id IS NOT NULL AND NEW.created_by_id IS NOT OLD.created_by_id)"
_WORKING = ["state", "error", "claim", "heartbeat_at", "sent_at", "created_at"]
_WORKING += ["lost_workers", "recovery"]
_RESULT = ["summary", "finished_at"]
_RUNS = {
    # table: (trigger prefix, the columns fixed when the run is created)
    "releases_leaderboardrun": (
        "releases_run",
        [
            "id",
            "release_id",
            "endpoint_id",
            "source",
            "label",
            "model_release_date",
            "samples_per_problem",
            "bootstrap_seed",
        ],
    ),
    "releases_questionrun": (
        "releases_qrun",
        [
            "id",
            "release_id",
            "endpoint_id",
            "label",
            "samples_per_question",
            "bootstrap_seed",
        ],
    ),
}
_SAMPLES = {
    "releases_leaderboardsample": ("releases_sample", "releases_leaderboardrun"),
    "releases_questionsample": ("releases_qsample", "releases_questionrun"),
}


def _run_triggers(table: str, prefix: str, fixed: list[str]) -> list[str]:
    every = fixed + _WORKING + _RESULT
    return [
        _sqlite(
            f"{prefix}_no_insert",
            "INSERT",
            table,
            "NEW.state <> 'queued' OR NEW.summary <> '{}' OR NEW.finished_at IS NOT NULL",
            "a run is created queued, without a result: only the scoring service completes it",
        ),
        _sqlite(
            f"{prefix}_no_delete",
            "DELETE",
            table,
            "OLD.state = 'completed'",
            "a completed run is part of the public record: it cannot be deleted",
        ),
        _sqlite(
            f"{prefix}_no_update",
            "UPDATE",
            table,
            f"OLD.state = 'completed' AND ({_changed(every)} OR {_CREATOR_CHANGED})",
            "a completed run is part of the public record: it cannot be changed",
        ),
        _sqlite(
            f"{prefix}_fixed",
            "UPDATE",
            table,
            f"OLD.state <> 'completed' AND ({_changed(fixed)} OR {_CREATOR_CHANGED})",
            "what a run evaluates is fixed when it is created",
        ),
        _sqlite(
            f"{prefix}_completion",
            "UPDATE",
            table,
            "OLD.state <> 'completed' AND NEW.state = 'completed' AND (OLD.state <> 'running'"
            f" OR NOT {MARK} OR NEW.claim IS NOT OLD.claim OR NEW.claim = ''"
            " OR NEW.finished_at IS NULL OR json_type(NEW.summary) IS NOT 'object')",
            "only the scoring service completes a run, from running",
        ),
        _sqlite(
            f"{prefix}_result_once",
            "UPDATE",
            table,
            f"OLD.state <> 'completed' AND NEW.state <> 'completed' AND {_changed(_RESULT)}",
            "a run result is written once, by the scoring service, as it completes",
        ),
    ]


def _sample_triggers(table: str, prefix: str, runs: str) -> list[str]:
    def completed(row: str) -> str:
        return f"(SELECT state FROM {runs} WHERE id = {row}.run_id) IS 'completed'"

    message = "samples are written only by the scoring service, never once their run completed"
    return [
        _sqlite(
            f"{prefix}_no_insert", "INSERT", table, f"{completed('NEW')} OR NOT {MARK}", message
        ),
        _sqlite(
            f"{prefix}_no_update",
            "UPDATE",
            table,
            f"{completed('OLD')} OR {completed('NEW')} OR NOT {MARK}",
            message,
        ),
        _sqlite(
            f"{prefix}_no_delete", "DELETE", table, f"{completed('OLD')} OR NOT {MARK}", message
        ),
    ]


_JUDGES_STATE = "(SELECT state FROM releases_questionrun WHERE id = {row}.questionrun_id)"
_ERRATUM_FIXED = ["id", "release_id", "item_public_id", "kind", "description", "signed_by"]
_ERRATUM_FIXED += ["created_at"]
_LATER_VERSION = (
    "EXISTS (SELECT 1 FROM releases_release fix, releases_release rel"
    " WHERE fix.id = NEW.fixed_in_id AND rel.id = NEW.release_id AND fix.state <> 'draft'"
    " AND fix.benchmark_id = rel.benchmark_id"
    " AND (fix.major, fix.minor, fix.patch) > (rel.major, rel.minor, rel.patch))"
)

SQLITE_UP = [
    *(sql for table, (prefix, fixed) in _RUNS.items() for sql in _run_triggers(table, prefix, fixed)),
    *(
        sql
        for table, (prefix, runs) in _SAMPLES.items()
        for sql in _sample_triggers(table, prefix, runs)
    ),
    _sqlite(
        "releases_qjudges_no_insert",
        "INSERT",
        "releases_questionrun_judges",
        f"{_JUDGES_STATE.format(row='NEW')} IS NOT 'queued'",
        "a question run judges change only while it is queued",
    ),
    _sqlite(
        "releases_qjudges_no_update",
        "UPDATE",
        "releases_questionrun_judges",
        f"{_JUDGES_STATE.format(row='OLD')} IS NOT 'queued'"
        f" OR {_JUDGES_STATE.format(row='NEW')} IS NOT 'queued'",
        "a question run judges change only while it is queued",
    ),
    _sqlite(
        "releases_qjudges_no_delete",
        "DELETE",
        "releases_questionrun_judges",
        f"{_JUDGES_STATE.format(row='OLD')} IS 'completed'",
        "a question run judges change only while it is queued",
    ),
    _sqlite(
        "releases_erratum_no_insert",
        "INSERT",
        "releases_erratum",
        "NEW.fixed_in_id IS NOT NULL OR NEW.resolution <> '' OR coalesce(NEW.signed_by, '') = ''"
        " OR coalesce((SELECT state FROM releases_release WHERE id = NEW.release_id), 'draft')"
        " = 'draft'",
        "an erratum is recorded open and signed, on a release that is not a draft",
    ),
    _sqlite(
        "releases_erratum_no_delete",
        "DELETE",
        "releases_erratum",
        "1",
        "errata are append-only: record a correction as a new erratum",
    ),
    _sqlite(
        "releases_erratum_no_edit",
        "UPDATE",
        "releases_erratum",
        f"{_changed(_ERRATUM_FIXED)} OR {_CREATOR_CHANGED}",
        "errata are append-only: record a correction as a new erratum",
    ),
    _sqlite(
        "releases_erratum_fixed_once",
        "UPDATE",
        "releases_erratum",
        "(NEW.fixed_in_id IS NOT OLD.fixed_in_id OR NEW.resolution IS NOT OLD.resolution)"
        " AND (OLD.fixed_in_id IS NOT NULL OR OLD.resolution <> '' OR NEW.fixed_in_id IS NULL"
        f" OR NEW.resolution NOT IN ('changed', 'removed') OR NOT {MARK}"
        f" OR NOT {_LATER_VERSION})",
        "fixed in is recorded once, by freezing a later version that fixes it",
    ),
]
SQLITE_NAMES = [sql.split()[2] for sql in SQLITE_UP]
# 0004's triggers on runs and samples, replaced by the ones above (some keep their names).
_SQLITE_0004 = [
    sql
    for sql in _0004.SQLITE_UP
    if "releases_leaderboardrun" in sql.split(" WHEN ")[0]
    or "releases_leaderboardsample" in sql.split(" WHEN ")[0]
]


def create_guards(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        # A plain cursor: no parameter parsing, so RAISE's "%" placeholders stay intact.
        with schema_editor.connection.cursor() as cursor:
            cursor.execute(PG_UP)
    elif vendor == "sqlite":
        for sql in _SQLITE_0004:
            schema_editor.execute(f"DROP TRIGGER IF EXISTS {sql.split()[2]}")
        for sql in SQLITE_UP:
            schema_editor.execute(sql)


def drop_guards(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        with schema_editor.connection.cursor() as cursor:
            cursor.execute(PG_DOWN)
    elif vendor == "sqlite":
        for name in SQLITE_NAMES:
            schema_editor.execute(f"DROP TRIGGER IF EXISTS {name}")
        for sql in _SQLITE_0004:
            schema_editor.execute(sql)


def sign_existing_errata(apps, schema_editor):
    """Errata recorded before signatures: signed with their recorder's username, when known."""
    Erratum = apps.get_model("releases", "Erratum")
    signed = Erratum.objects.filter(created_by__isnull=False)
    for pk, username in signed.values_list("pk", "created_by__username"):
        Erratum.objects.filter(pk=pk).update(signed_by=username[:150])


class Migration(migrations.Migration):
    dependencies = [
        ("releases", "0012_independent_panel_includes_selection_models"),
    ]

    operations = [
        migrations.AddField(
            model_name="erratum",
            name="signed_by",
            field=models.CharField(
                blank=True,
                help_text="the username of the curator who recorded it",
                max_length=150,
            ),
        ),
        migrations.RunPython(sign_existing_errata, migrations.RunPython.noop),
        migrations.RunPython(create_guards, drop_guards),
    ]
