from django.apps import AppConfig


class ScreeningConfig(AppConfig):
    name = "evolution.screening"
    label = "screening"
    verbose_name = "Contamination screen"
