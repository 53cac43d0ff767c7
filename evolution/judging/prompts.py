"""The platform's own prompt templates (``evolution/judging/prompts/``, loaded by the one prompt
loader) and the harness wording every method's code-writing prompts share.

A harness runs code by one calling convention, and a prompt states that one, never two:

- ``program`` (harness stdio): a whole program, reading stdin and printing to stdout;
- ``method`` (harness function, LiveCodeBench's call-based tasks, whose starter code is
  ``class Solution``): each test calls ``Solution().<entry>(*args)``, the arguments one JSON
  value per line, and compares the JSON-encoded return value;
- ``function`` (harness function without that starter): the same call on the module-level
  function ``<entry>``;
- ``assertion`` (harness assert: HumanEval, SciCode): each test is an assertion program whose
  ``check(candidate)`` the harness calls with the module-level function ``<entry>``.
"""

from __future__ import annotations

from pathlib import Path

from evolution.llm.prompts import PromptTemplate, prompt_load

PROMPT_DIR = Path(__file__).resolve().parent / "prompts"

PROGRAM = "program"
METHOD = "method"
FUNCTION = "function"
ASSERTION = "assertion"

CODE_CONTRACTS = {
    PROGRAM: "Read from standard input and print to standard output; no prompts, no extra output.",
    METHOD: (
        "Keep `class Solution` with its method `{entry_point}`: each test calls "
        "`Solution().{entry_point}(...)` with the test's arguments (one JSON value per line) and "
        "compares the JSON-encoded return value (no I/O, no test code)."
    ),
    FUNCTION: (
        "Define `{entry_point}` at module level: each test calls it with the test's arguments "
        "(one JSON value per line) and compares the JSON-encoded return value (no I/O, no test "
        "code)."
    ),
    ASSERTION: (
        "Define `{entry_point}` at module level: each test is an assertion program that calls "
        "it and checks what it returns (no I/O, no test code)."
    ),
}

# What a starter code block asks to keep, per convention.
STARTER_KEEPS = {
    PROGRAM: "",
    METHOD: ", keeping the class and the method's signature",
    FUNCTION: ", keeping the function's signature",
    ASSERTION: ", keeping the function's signature",
}


def load(name: str) -> PromptTemplate:
    return prompt_load(PROMPT_DIR, name)


def convention(harness: str, starter_code: str = "", code: str = "") -> str:
    """The calling convention ``harness`` runs a task's code by. For the function harness it is
    the starter code's (``class Solution``: the method), else the code's, else the module's
    function (the harness calls ``Solution().<entry>`` exactly when the code defines that
    class)."""
    if harness == "stdio":
        return PROGRAM
    if harness == "assert":
        return ASSERTION
    shown = starter_code if starter_code.strip() else code
    return METHOD if "class Solution" in shown else FUNCTION


def code_contract(
    harness: str, entry_point: str = "", starter_code: str = "", code: str = ""
) -> str:
    """The one sentence saying how the harness runs the answer (its calling convention)."""
    return CODE_CONTRACTS[convention(harness, starter_code, code)].format(
        entry_point=entry_point or "solve"
    )


def starter_block(
    starter_code: str, harness: str = "function", code: str = "", *, parent: bool = False
) -> str:
    """The starter code a task ships, as a prompt section; empty when there is none. It does
    not restate how the code is called: the prompt's code contract says that, once.
    ``parent``: shown to the mutator as the parent task's (the evolved task gets its own)."""
    if not starter_code.strip():
        return ""
    if parent:
        intro = "## The parent task's starter code"
    else:
        intro = f"## Starter code\nComplete this code{STARTER_KEEPS[convention(harness, starter_code, code)]}:"
    return f"\n{intro}\n```python\n{starter_code.rstrip()}\n```\n"
