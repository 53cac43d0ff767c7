from django.apps import AppConfig


class ReasoningConfig(AppConfig):
    name = "reasoning"
    verbose_name = "Reasoning campaigns"

    def ready(self) -> None:
        from evolution.models.campaigns import CampaignKind
        from evolution.services.kinds import register

        from .driver import ReasoningDriver

        register(CampaignKind.REASONING, ReasoningDriver())
