"""``judge_batch``: see evolution/sandbox/cli.py (``manage.py`` runs it without setting up Django;
this command serves ``call_command`` and ``django-admin``)."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from evolution.sandbox import cli


class Command(BaseCommand):
    help = cli.BATCH_HELP
    # The judge touches neither URLs nor models: the system checks would only cost start-up.
    requires_system_checks: list = []

    def add_arguments(self, parser):
        cli.add_batch_arguments(parser)

    def handle(self, *args, **opts):
        try:
            cli.run_judge_batch(opts, self.stderr)
        except cli.UsageError as exc:
            raise CommandError(str(exc)) from exc
