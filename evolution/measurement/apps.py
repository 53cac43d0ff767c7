from django.apps import AppConfig


class MeasurementConfig(AppConfig):
    name = "evolution.measurement"
    label = "measurement"
    verbose_name = "Panel measurement"

    def ready(self) -> None:
        # A curator's measurement is a re-send-only supervised job (beat's job-supervisor).
        from evolution.jobs import register

        from .jobs import MEASUREMENT_JOB

        register(MEASUREMENT_JOB)
