"""Reading a code-writing prompt the way a model that follows it would: which calling
conventions its instructions state, and code written the way a convention says.

Independent of the prompts' own wording tables on purpose: a prompt passes when a reader of its
instructions (its statement and its code blocks left out) finds exactly one convention, and code
written that way passes the harness.
"""

from __future__ import annotations

import re

PROGRAM = ("program", "")


def conventions_in(prompt: str, hide: list[str] = ()) -> set[tuple[str, str]]:
    """The calling conventions a prompt states: ("program", ""), ("method", name) for
    ``Solution().name(...)``, ("function", name) for a module-level ``name``. ``hide``: text the
    prompt quotes (a statement) whose words are not instructions; code blocks are left out too."""
    text = prompt
    for part in hide:
        if part.strip():
            text = text.replace(part.strip(), "")
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    found = set()
    if re.search(r"standard input|\bstdin\b", text, re.I):
        found.add(PROGRAM)
    found |= {("method", name) for name in re.findall(r"Solution\(\)\.(\w+)\(", text)}
    found |= {("function", name) for name in re.findall(r"`(\w+)` at module level", text)}
    return found


def written_as(convention: tuple[str, str], core: str) -> str:
    """``core`` (a whole program, or a module defining ``_solve``) written the way
    ``convention`` says the harness calls it."""
    kind, entry = convention
    if kind == "program":
        return core
    if kind == "method":
        call = f"class Solution:\n    def {entry}(self, *args):\n        return _solve(*args)\n"
    else:
        call = f"def {entry}(*args):\n    return _solve(*args)\n"
    return core.strip() + "\n\n\n" + call
