from django.apps import AppConfig


class EvoSynConfig(AppConfig):
    name = "evosyn"
    verbose_name = "EvoSyn synthesis campaigns"

    def ready(self) -> None:
        from evolution.models.campaigns import CampaignKind
        from evolution.services.kinds import register

        from .driver import EvoSynDriver

        register(CampaignKind.EVOSYN, EvoSynDriver())
