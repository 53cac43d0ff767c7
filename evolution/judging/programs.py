"""The program a model's answer holds (a test generator, an input validator, a solution), for
every method that runs what a model wrote."""

from __future__ import annotations

from evolution.llm.parsing import ParseError, extract_code


class ProgramMissing(ValueError):
    """The answer holds no Python program."""


def parse_program(text: str, what: str) -> str:
    """The answer's Python code block, with one final newline; ``ProgramMissing`` naming
    ``what`` ("test generator answer unparsable: ...") when it has none."""
    try:
        return extract_code(text, language="python").rstrip() + "\n"
    except ParseError as exc:
        raise ProgramMissing(f"{what} answer unparsable: {exc}") from None
