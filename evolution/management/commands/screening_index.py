from django.core.management.base import BaseCommand

from evolution.screening import services as screening


class Command(BaseCommand):
    help = (
        "Show the contamination screen's index of the public corpora; with --rebuild, index "
        "every imported seed problem again first (docs/screening.md)."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--rebuild",
            action="store_true",
            help="hash every seed problem again (unchanged ones are kept) and drop rows of "
            "problems that are no longer seeds",
        )

    def handle(self, *args, rebuild, **options):
        if rebuild:

            def progress(done: int, total: int) -> None:
                self.stderr.write(f"indexed {done}/{total}")

            report = screening.rebuild(progress=progress)
            self.stdout.write(f"rebuilt: {report}")
        summary = screening.index_summary()
        self.stdout.write(f"index: {screening.corpora_text(summary)}")
        self.stdout.write(f"method: {summary['method']}")
