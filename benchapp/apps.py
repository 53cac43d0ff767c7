from django.apps import AppConfig


class BenchappConfig(AppConfig):
    name = "benchapp"
    verbose_name = "BenchForge"

    def ready(self):
        # Seed imports are supervised jobs (evolution.jobs; beat's job-supervisor pass).
        from evolution import jobs

        from .staff.imports import SEED_IMPORT

        jobs.register(SEED_IMPORT)
