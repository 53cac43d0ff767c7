from django.core.management.base import BaseCommand, CommandError

from evolution.importers import SOURCES, SeedImportError, import_seeds


class Command(BaseCommand):
    help = (
        "Import seed problems: `humaneval` (the 164 packaged problems), `lcb FILE` "
        "(LiveCodeBench JSONL) or `jsonl FILE` (BenchForge's own format). One transaction: "
        "a bad line aborts with exit status 1 and nothing is written. Re-imports update in place."
    )

    def add_arguments(self, parser):
        parser.add_argument("source", choices=SOURCES)
        parser.add_argument("file", nargs="?", help="the JSONL file (.gz accepted); lcb and jsonl")
        parser.add_argument(
            "--set",
            dest="set_name",
            help="problem set to fill (default: humaneval / livecodebench / the file's problem_set)",
        )

        parser.add_argument(
            "--solutions",
            help="lcb only: JSONL of reference solutions, one {question_id, solution} a line",
        )

    def handle(self, *args, source, file, set_name, solutions=None, **options):
        if source in ("lcb", "jsonl") and not file:
            raise CommandError(f"import_seeds {source} needs a FILE", returncode=2)
        try:
            report = import_seeds(
                source=source, path=file, set_name=set_name, solutions_path=solutions
            )
        except SeedImportError as exc:
            raise CommandError(f"import failed, nothing was written: {exc}", returncode=1)
        self.stdout.write(self.style.SUCCESS(str(report)))
