"""`benchforge`: the installed copy's `manage.py`.

An installed BenchForge has no source tree; this entry point (``benchforge <command>`` or
``python -m benchapp <command>``) runs every management command as ``manage.py`` does in a
checkout.
"""

from __future__ import annotations

import os
import sys


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv if argv is None else argv)
    from evolution.sandbox.cli import run as judge_run
    from evolution.sandbox.cli import wants_light_start

    if wants_light_start(argv[1:]):
        # The judge needs the sandbox alone: no Django set-up (see evolution/sandbox/cli.py).
        judge_run(argv[1:])
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchapp.settings")
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        settings.INSTALLED_APPS  # noqa: B018 (reading it loads the settings module)
    except ImproperlyConfigured as exc:
        # A configuration error is the operator's to fix: one line naming it, no traceback.
        sys.stderr.write(f"benchforge: configuration error: {exc}\n")
        raise SystemExit(2) from None

    argv[0] = "benchforge"
    execute_from_command_line(argv)
