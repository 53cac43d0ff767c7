from django.apps import AppConfig


class XcoderConfig(AppConfig):
    name = "xcoder"
    verbose_name = "X-Coder synthesis campaigns"

    def ready(self) -> None:
        from evolution.models.campaigns import CampaignKind
        from evolution.services.kinds import register

        from .driver import XcoderDriver

        register(CampaignKind.XCODER, XcoderDriver())
