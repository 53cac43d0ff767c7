"""What the public leaderboard reads of a completed run, stored apart from its summary (issue
#36): ``LeaderboardRunFigures`` holds the summary's top-level figures and the per-problem
values a date window is computed from (``releases.leaderboard.board.figures_of``), so the plain board no
longer reads every run's rows per problem (about 265 KB of JSON a run at 1,000 problems).

Every completed run gets its figures from its stored summary here (``figures_of`` as it is
when this migration runs; an unreadable summary gives none, and its row stays "result
unavailable"); from now on the scoring service writes them as it completes a run
(``leaderboard.record_completion``). They are part of the public record as the run's samples
are (0013): written only by the scoring service, never once their run completed, and not
truncated while a non-draft release exists. Going back drops the table.
"""

import importlib

from django.db import migrations, models

_0013 = importlib.import_module("releases.migrations.0013_public_record_guards")

TABLE = "releases_leaderboardrunfigures"

PG_UP = f"""
CREATE OR REPLACE FUNCTION releases_run_figures_guard() RETURNS trigger AS $$
DECLARE
  st text;
  rid bigint;
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    rid := OLD.run_id;
    SELECT state INTO st FROM releases_leaderboardrun WHERE id = rid;
    IF st = 'completed' THEN
      RAISE EXCEPTION 'run % is completed: the figures its leaderboard row shows are part of the public record and immutable', rid
        USING ERRCODE = 'integrity_constraint_violation';
    END IF;
  END IF;
  IF TG_OP IN ('UPDATE', 'INSERT') THEN
    rid := NEW.run_id;
    SELECT state INTO st FROM releases_leaderboardrun WHERE id = rid;
    IF st = 'completed' THEN
      RAISE EXCEPTION 'run % is completed: the figures its leaderboard row shows are part of the public record and immutable', rid
        USING ERRCODE = 'integrity_constraint_violation';
    END IF;
  END IF;
  IF NOT releases_public_record_writer() THEN
    RAISE EXCEPTION 'the figures of run % are written only by the scoring service', rid
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER releases_run_figures_result
  BEFORE INSERT OR UPDATE OR DELETE ON {TABLE}
  FOR EACH ROW EXECUTE FUNCTION releases_run_figures_guard();
CREATE TRIGGER {TABLE}_no_truncate BEFORE TRUNCATE ON {TABLE}
  FOR EACH STATEMENT EXECUTE FUNCTION releases_truncate_guard();
"""

PG_DOWN = f"""
DROP TRIGGER IF EXISTS {TABLE}_no_truncate ON {TABLE};
DROP TRIGGER IF EXISTS releases_run_figures_result ON {TABLE};
DROP FUNCTION IF EXISTS releases_run_figures_guard();
"""


def _completed(row: str) -> str:
    return f"(SELECT state FROM releases_leaderboardrun WHERE id = {row}.run_id) IS 'completed'"


_MESSAGE = "run figures are written only by the scoring service, never once their run completed"
_MARK = _0013.MARK
SQLITE_UP = [
    _0013._sqlite(
        "releases_run_figures_no_insert",
        "INSERT",
        TABLE,
        f"{_completed('NEW')} OR NOT {_MARK}",
        _MESSAGE,
    ),
    _0013._sqlite(
        "releases_run_figures_no_update",
        "UPDATE",
        TABLE,
        f"{_completed('OLD')} OR {_completed('NEW')} OR NOT {_MARK}",
        _MESSAGE,
    ),
    _0013._sqlite(
        "releases_run_figures_no_delete",
        "DELETE",
        TABLE,
        f"{_completed('OLD')} OR NOT {_MARK}",
        _MESSAGE,
    ),
]
SQLITE_NAMES = [
    "releases_run_figures_no_insert",
    "releases_run_figures_no_update",
    "releases_run_figures_no_delete",
]


def fill_figures(apps, schema_editor):
    """The figures of every completed run, from its stored summary."""
    from releases.leaderboard.board import figures_of

    LeaderboardRun = apps.get_model("releases", "LeaderboardRun")
    Figures = apps.get_model("releases", "LeaderboardRunFigures")
    completed = LeaderboardRun.objects.filter(state="completed").order_by("pk")
    batch = []
    for pk, summary in completed.values_list("pk", "summary").iterator(chunk_size=50):
        top, problems = figures_of(summary)
        batch.append(Figures(run_id=pk, summary=top, problems=problems))
        if len(batch) >= 50:
            Figures.objects.bulk_create(batch)
            batch.clear()
    Figures.objects.bulk_create(batch)


def create_guards(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        with schema_editor.connection.cursor() as cursor:
            cursor.execute(PG_UP)
    elif vendor == "sqlite":
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


class Migration(migrations.Migration):
    dependencies = [
        ("releases", "0014_difficulty_point_scores"),
    ]

    operations = [
        migrations.CreateModel(
            name="LeaderboardRunFigures",
            fields=[
                (
                    "run",
                    models.OneToOneField(
                        on_delete=models.deletion.CASCADE,
                        primary_key=True,
                        related_name="figures",
                        serialize=False,
                        to="releases.leaderboardrun",
                    ),
                ),
                ("summary", models.JSONField(blank=True, null=True)),
                ("problems", models.JSONField(blank=True, null=True)),
            ],
        ),
        migrations.RunPython(fill_figures, migrations.RunPython.noop),
        migrations.RunPython(create_guards, drop_guards),
    ]
