from django.apps import AppConfig


class MeasurementConfig(AppConfig):
    name = "evolution.measurement"
    label = "measurement"
    verbose_name = "Panel measurement"
