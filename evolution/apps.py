from django.apps import AppConfig


class EvolutionConfig(AppConfig):
    name = "evolution"
    verbose_name = "Evolution engine"
