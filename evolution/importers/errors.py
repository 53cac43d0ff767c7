"""The one error every importer raises: it names where the input went wrong."""

from __future__ import annotations

from typing import NamedTuple


class SeedImportError(Exception):
    """A seed source could not be imported; nothing was written.

    ``line`` is the 1-based line of the input file (None when the error is not tied to a
    line, e.g. an unknown source); ``field`` is the offending field, dotted for nested
    values (``private_test_cases``, ``tests[2].tier``), or None.
    """

    def __init__(self, message: str, *, line: int | None = None, field: str | None = None):
        self.line = line
        self.field = field
        self.message = message
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = []
        if self.line is not None:
            where.append(f"line {self.line}")
        if self.field:
            where.append(f"field {self.field!r}")
        return f"{', '.join(where)}: {self.message}" if where else self.message


class Skipped(NamedTuple):
    """What a reader yields instead of a record for a row it leaves out by rule; counted by
    ``import_seeds`` and reported with the row's line and this reason, never silently."""

    reason: str
