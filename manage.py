#!/usr/bin/env python
"""Management commands in a checkout; an installed copy has the same as `benchforge`."""

import sys

if __name__ == "__main__":
    # The judge's commands start without Django or the app packages (evolution/sandbox/cli.py).
    from evolution.sandbox.cli import run as judge_run
    from evolution.sandbox.cli import wants_light_start

    if wants_light_start(sys.argv[1:]):
        judge_run(sys.argv[1:])
    from benchapp.cli import main

    main()
