#!/usr/bin/env python
"""Management commands in a checkout; an installed copy has the same as `benchforge`."""

from benchapp.cli import main

if __name__ == "__main__":
    main()
