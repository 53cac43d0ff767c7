from django.apps import AppConfig


class EvolutionConfig(AppConfig):
    name = "evolution"
    verbose_name = "Evolution engine"

    def ready(self) -> None:
        from .models.campaigns import CampaignKind
        from .services.kinds import BenchEvolverDriver, register

        register(CampaignKind.BENCHEVOLVER, BenchEvolverDriver())

        # Each kind's problem source lives in <app>/sources.py (review and releases ask it).
        from . import sources

        sources.autodiscover()
