from django.core.management.base import BaseCommand

from review.services import tag_vocabulary_load


class Command(BaseCommand):
    help = "Load the starting algorithm/data-structure tag vocabulary (idempotent)."

    def handle(self, *args, **options):
        created = tag_vocabulary_load()
        self.stdout.write(f"{created} tag(s) added to the vocabulary.")
