from django.apps import AppConfig


class EvoSynConfig(AppConfig):
    name = "evosyn"
    verbose_name = "EvoSyn synthesis campaigns"
