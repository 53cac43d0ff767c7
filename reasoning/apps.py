from django.apps import AppConfig


class ReasoningConfig(AppConfig):
    name = "reasoning"
    verbose_name = "Reasoning campaigns"
