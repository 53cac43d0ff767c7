from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "review"
    verbose_name = "Review and releases"

    def ready(self):
        # Mutation families (evolution) are named in the reviewers' tag vocabulary.
        from evolution.pipeline.families import register_vocabulary

        from .vocabulary import VOCABULARY

        register_vocabulary(lambda: VOCABULARY)
