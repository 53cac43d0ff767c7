from django.core.management.base import BaseCommand, CommandError

from evolution.importers import SOURCES, SeedImportError, import_seeds


class Command(BaseCommand):
    help = (
        "Import seed problems: `humaneval` (the 164 packaged problems), `lcb FILE` "
        "(LiveCodeBench JSONL), `jsonl FILE` (BenchForge's own format), or the Hub rows "
        "(JSON lines or .parquet) of `codecontests FILE`, `apps FILE`, `taco FILE`, `scicode FILE`. One "
        "transaction: a bad line aborts with exit status 1 and nothing is written. Re-imports "
        "update in place and keep each problem's reference solution unless "
        "--replace-references. A reference from a solutions file or a dataset's record is run "
        "on the record's public and private tests first; one that fails is refused (named with "
        "the failing test) and the rest is imported. The report counts the problems that carry "
        "a reference solution."
    )

    def add_arguments(self, parser):
        parser.add_argument("source", choices=SOURCES)
        parser.add_argument(
            "file", nargs="?", help="the JSONL file (.gz accepted) or .parquet; all but humaneval"
        )
        parser.add_argument(
            "--set",
            dest="set_name",
            help="problem set to fill (default: the source's name, livecodebench for lcb, the "
            "file's problem_set for jsonl)",
        )

        parser.add_argument(
            "--solutions",
            help="lcb only: JSONL of reference solutions, one {question_id, solution} a line",
        )
        parser.add_argument(
            "--replace-references",
            action="store_true",
            help="the import's references replace the ones the problems have (a problem the "
            "import gives none loses its own); each replaced or dropped one is printed. "
            "Default: a problem keeps its reference",
        )

    def handle(
        self, *args, source, file, set_name, solutions=None, replace_references=False, **options
    ):
        if source != "humaneval" and not file:
            raise CommandError(f"import_seeds {source} needs a FILE", returncode=2)
        try:
            report = import_seeds(
                source=source,
                path=file,
                set_name=set_name,
                solutions_path=solutions,
                replace_references=replace_references,
            )
        except SeedImportError as exc:
            raise CommandError(f"import failed, nothing was written: {exc}", returncode=1)
        self.stdout.write(self.style.SUCCESS(str(report)))
        for note in report.references:
            self.stdout.write(f"  {note}")
        for line, reason in report.skipped_reasons:
            self.stdout.write(f"  skipped line {line}: {reason}")
        if report.skipped > len(report.skipped_reasons):
            self.stdout.write(f"  … and {report.skipped - len(report.skipped_reasons)} more")
