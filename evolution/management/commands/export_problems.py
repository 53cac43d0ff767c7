import os

from django.core.management.base import BaseCommand, CommandError

from evolution.exporters.jsonl import export_problems
from evolution.models import ProblemSet


class Command(BaseCommand):
    help = "Write a problem set as benchforge-problem/1 JSONL (docs/jsonl-format.md)."

    def add_arguments(self, parser):
        parser.add_argument("--set", dest="set_name", required=True, help="problem set name")
        parser.add_argument("--out", required=True, help="output file, or - for stdout")
        parser.add_argument(
            "--with-ancestors",
            action="store_true",
            help="also write the parents and lineage roots the problems link to (not set members)",
        )

    def handle(self, *args, set_name, out, with_ancestors, **options):
        problem_set = ProblemSet.objects.filter(name=set_name).first()
        if problem_set is None:
            known = ", ".join(ProblemSet.objects.values_list("name", flat=True)) or "none"
            raise CommandError(f"no problem set named {set_name!r} (known: {known})")
        lines = export_problems(
            problem_set.problems.all(), set_name=set_name, include_ancestors=with_ancestors
        )
        if out == "-":
            for line in lines:
                self.stdout.write(line, ending="")
            return
        # Write beside the target and rename, so a failed export never leaves half a file.
        partial = f"{out}.partial"
        count = 0
        try:
            with open(partial, "w", encoding="utf-8", newline="\n") as handle:
                for line in lines:
                    handle.write(line)
                    count += 1
            os.replace(partial, out)
        except OSError as exc:
            raise CommandError(f"cannot write {out}: {exc.strerror or exc}")
        self.stderr.write(f"{count} problems from {set_name} written to {out}")
