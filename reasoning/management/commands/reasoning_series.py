"""The document's files of a reasoning series (design document 004, section 9)::

    manage.py reasoning_series list
    manage.py reasoning_series export SERIES --out DIR      # DIR/state.json, DIR/runs.jsonl
    manage.py reasoning_series import SERIES [--state state.json] [--runs runs.jsonl]

``import`` brings a benchmark the document's own program made into BenchForge: the next
campaign of the series starts from its EMAs, its generator sees its questions, its run
numbers continue. ``SERIES`` is the series' name or slug."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from reasoning import selectors, series_io
from reasoning.models import ReasoningSeries
from reasoning.services import series_find
from reasoning.stages.state import next_run_number


class Command(BaseCommand):
    help = (
        "List, export or import reasoning series as the design document's state.json / runs.jsonl."
    )

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        sub.add_parser("list", help="every series with its state")
        export = sub.add_parser("export", help="write DIR/state.json and DIR/runs.jsonl")
        export.add_argument("series", help="name or slug")
        export.add_argument("--out", required=True, type=Path)
        imp = sub.add_parser("import", help="start (or fill) a series from the document's files")
        imp.add_argument("series", help="name or slug (created when missing)")
        imp.add_argument("--state", type=Path, help="state.json")
        imp.add_argument("--runs", type=Path, help="runs.jsonl")

    def handle(self, *args, action, **options):
        return getattr(self, f"_{action}")(**options)

    def _list(self, **options):
        for series in selectors.series_list():
            ema = "-" if series.ema is None else f"{series.ema:.3f}"
            self.stdout.write(
                f"{series.slug}\t{series.name}\truns {series.run_count}\tEMA {ema}\t"
                f"{series.campaign_count} campaign(s)"
            )

    def _export(self, *, series, out: Path, **options):
        found = series_find(series)
        if found is None:
            raise CommandError(f"no series {series!r}")
        out.mkdir(parents=True, exist_ok=True)
        (out / "state.json").write_text(
            json.dumps(series_io.state_json(found), indent=2) + "\n", encoding="utf-8"
        )
        text = series_io.runs_jsonl(found)
        (out / "runs.jsonl").write_text(text, encoding="utf-8")
        self.stdout.write(
            f"wrote {out / 'state.json'} and {out / 'runs.jsonl'} ({text.count(chr(10))} runs)"
        )

    def _import(self, *, series, state: Path | None, runs: Path | None, **options):
        if state is None and runs is None:
            raise CommandError("give --state, --runs or both")
        try:
            state_data = json.loads(state.read_text(encoding="utf-8")) if state else None
        except (OSError, json.JSONDecodeError) as exc:
            raise CommandError(f"cannot read {state}: {exc}") from exc
        try:
            lines = runs.read_text(encoding="utf-8").splitlines() if runs else None
        except OSError as exc:
            raise CommandError(f"cannot read {runs}: {exc}") from exc
        try:
            report = series_io.series_import(name=series, state=state_data, runs_lines=lines)
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        found: ReasoningSeries = report.series
        self.stdout.write(
            f"series {found.name!r} ({found.slug}): "
            + ("state imported, " if report.state else "")
            + f"{report.examples} prior question(s) from {report.runs} run(s); "
            + f"its next run is number {next_run_number(found)}"
        )
