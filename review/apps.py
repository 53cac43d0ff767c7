from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "review"
    verbose_name = "Review and releases"

    def ready(self) -> None:
        # The engine's review-based charts read review data through this provider: the engine
        # sits below review and never imports it.
        from evolution.benchevolver.analytics.reviews import (
            ReviewProvider,
            review_provider_register,
        )

        from .analytics import problem_review_aggregates, review_fingerprint_annotations

        review_provider_register(
            ReviewProvider(
                aggregates=problem_review_aggregates, fingerprint=review_fingerprint_annotations
            )
        )
