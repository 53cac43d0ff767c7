from django.apps import AppConfig


class ReleasesConfig(AppConfig):
    name = "releases"
    verbose_name = "Releases and leaderboard"

    def ready(self) -> None:
        from django.db.backends.signals import connection_created

        # Releases' background jobs, under the platform's one job supervisor.
        from .jobs import register_jobs
        from .public_record import register_sqlite_function

        register_jobs()
        # SQLite's public-record triggers ask this function whether the scoring service writes.
        connection_created.connect(register_sqlite_function, dispatch_uid="releases-public-record")
