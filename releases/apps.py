from django.apps import AppConfig


class ReleasesConfig(AppConfig):
    name = "releases"
    verbose_name = "Releases and leaderboard"

    def ready(self) -> None:
        # Review (below releases) warns a curator about problems a published release shows;
        # it asks through this lookup instead of importing releases.
        from review.selectors import register_published_lookup

        from .selectors import published_items_for_problems

        register_published_lookup(published_items_for_problems)
