from django.apps import AppConfig


class FrontierSmithConfig(AppConfig):
    name = "frontiersmith"
    verbose_name = "FrontierSmith open-ended campaigns"
