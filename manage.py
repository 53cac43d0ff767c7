#!/usr/bin/env python
import os
import sys


def main():
    from evolution.sandbox.cli import main as judge_main
    from evolution.sandbox.cli import wants_light_start

    if wants_light_start(sys.argv[1:]):
        # The judge needs the sandbox alone: it starts without setting up Django (which would
        # import every app) and reads the same SANDBOX_* variables from the environment.
        sys.exit(judge_main(sys.argv[1:]))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchapp.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
