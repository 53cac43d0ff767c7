from django.apps import AppConfig


class ReleasesConfig(AppConfig):
    name = "releases"
    verbose_name = "Releases and leaderboard"

    def ready(self) -> None:
        # Review (below releases) warns a curator about problems a published release shows;
        # it asks through this lookup instead of importing releases.
        from django.db.backends.signals import connection_created

        from review.selectors import register_published_lookup

        from .public_record import register_sqlite_function
        from .selectors import published_items_for_problems

        register_published_lookup(published_items_for_problems)
        # Releases' background jobs, under the platform's one job supervisor.
        from .jobs import register_jobs

        register_jobs()
        # SQLite's public-record triggers ask this function whether the scoring service writes.
        connection_created.connect(register_sqlite_function, dispatch_uid="releases-public-record")
