"""Split the database roles for production: the owner migrates, the application runs as a
role that can read and write rows but cannot disable the immutability triggers.

Run it as the owner (DATABASE_URL naming the role that ran ``migrate``)::

    python manage.py db_roles --app-role benchforge_app --password-env BENCHFORGE_APP_DB_PASSWORD

then point the web and worker processes' DATABASE_URL at ``benchforge_app``. Re-run it after
every ``migrate`` that adds tables (it is idempotent); ``--check`` only verifies.
"""

from __future__ import annotations

import os
import re

from django.core.management.base import BaseCommand, CommandError
from django.db import connection, transaction

ROLE_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


def _problems(cursor, role: str) -> list[str]:
    """What would let ``role`` get past the triggers; empty when it cannot."""
    problems = []
    cursor.execute(
        "SELECT rolsuper, rolbypassrls, rolreplication, rolcreaterole FROM pg_roles WHERE rolname = %s",
        [role],
    )
    row = cursor.fetchone()
    if row is None:
        return [f"role {role} does not exist"]
    for flag, name in zip(
        row, ("SUPERUSER", "BYPASSRLS", "REPLICATION", "CREATEROLE"), strict=True
    ):
        if flag:
            problems.append(f"role {role} has {name}")
    tables = (
        "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND "
    )
    cursor.execute(tables + "pg_has_role(%s, c.relowner, 'USAGE')", [role])
    if owned := cursor.fetchone()[0]:
        problems.append(f"role {role} owns (or inherits the owner of) {owned} tables")
    cursor.execute(tables + "has_table_privilege(%s, c.oid, 'TRUNCATE')", [role])
    if truncatable := cursor.fetchone()[0]:
        problems.append(f"role {role} may TRUNCATE {truncatable} tables")
    return problems


class Command(BaseCommand):
    help = (
        "Create or update the application's database role: rows only (SELECT, INSERT, UPDATE, "
        "DELETE), no ownership, no TRUNCATE, so it cannot disable the release guards."
    )

    def add_arguments(self, parser):
        parser.add_argument("--app-role", required=True, help="e.g. benchforge_app")
        parser.add_argument(
            "--password-env",
            default="",
            help="environment variable holding the role's login password (never a flag)",
        )
        parser.add_argument("--check", action="store_true", help="only verify the role")

    def handle(self, *args, app_role, password_env, check, **options):
        if connection.vendor != "postgresql":
            raise CommandError("db_roles needs PostgreSQL (the embedded SQLite has no roles)")
        if not ROLE_NAME.match(app_role):
            raise CommandError("--app-role must be a lower-case SQL identifier")
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_user")
            owner = cursor.fetchone()[0]
        if app_role == owner:
            raise CommandError("--app-role must differ from the owner role running this command")
        if not check:
            password = os.environ.get(password_env, "") if password_env else ""
            if password_env and not password:
                raise CommandError(f"{password_env} is not set")
            self._apply(app_role, owner, password)
        with connection.cursor() as cursor:
            problems = _problems(cursor, app_role)
        if problems:
            raise CommandError("; ".join(problems))
        self.stdout.write(
            self.style.SUCCESS(
                f"{app_role}: rows only; cannot own, truncate or disable triggers on any table."
            )
        )

    def _apply(self, role: str, owner: str, password: str) -> None:
        db = connection.settings_dict["NAME"]
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [role])
            verb = "ALTER" if cursor.fetchone() else "CREATE"
            # Only a superuser may change the superuser-class attributes (SUPERUSER,
            # REPLICATION, BYPASSRLS), even to switch them off: a re-run by an owner with
            # CREATEROLE leaves them as they are, and the check below refuses a role that has
            # any of them.
            attrs = "LOGIN NOCREATEDB NOCREATEROLE"
            if verb == "CREATE":
                attrs += " NOSUPERUSER NOREPLICATION NOBYPASSRLS"
            if password:
                cursor.execute(f'{verb} ROLE "{role}" {attrs} PASSWORD %s', [password])
            else:
                cursor.execute(f'{verb} ROLE "{role}" {attrs}')
            statements = [
                f'GRANT CONNECT ON DATABASE "{db}" TO "{role}"',
                f'GRANT USAGE ON SCHEMA public TO "{role}"',
                f'REVOKE CREATE ON SCHEMA public FROM "{role}"',
                f'REVOKE ALL ON ALL TABLES IN SCHEMA public FROM "{role}"',
                f'GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO "{role}"',
                f'GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO "{role}"',
                f'ALTER DEFAULT PRIVILEGES FOR ROLE "{owner}" IN SCHEMA public '
                f'GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO "{role}"',
                f'ALTER DEFAULT PRIVILEGES FOR ROLE "{owner}" IN SCHEMA public '
                f'GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO "{role}"',
            ]
            for sql in statements:
                cursor.execute(sql)
