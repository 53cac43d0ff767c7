"""Model answers as the loopback provider sends them."""

from __future__ import annotations


def fenced(code: str, lead: str = "Here you go.") -> str:
    """A solver's answer: a line of prose, then the program in a fenced Python block."""
    return f"{lead}\n\n```python\n{code.rstrip()}\n```\n"
