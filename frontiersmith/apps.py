from django.apps import AppConfig


class FrontierSmithConfig(AppConfig):
    name = "frontiersmith"
    verbose_name = "FrontierSmith open-ended campaigns"

    def ready(self) -> None:
        from evolution.models.campaigns import CampaignKind
        from evolution.services.kinds import register

        from .driver import FrontierSmithDriver

        register(CampaignKind.FRONTIERSMITH, FrontierSmithDriver())
