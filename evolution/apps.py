from django.apps import AppConfig


class EvolutionConfig(AppConfig):
    name = "evolution"
    verbose_name = "Evolution engine"

    def ready(self) -> None:
        # Every installed app's kind.py declares (and registers) its campaign kind.
        from .streams.kinds import discover

        discover()

        # Each kind's problem source lives in <app>/sources.py (review and releases ask it).
        from . import sources

        sources.autodiscover()
