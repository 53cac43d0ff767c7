"""The platform's own prompt templates (``evolution/judging/prompts/``, loaded by the one prompt
loader) and the harness wording every method's code-writing prompts share."""

from __future__ import annotations

from pathlib import Path

from evolution.llm.prompts import PromptTemplate, prompt_load

PROMPT_DIR = Path(__file__).resolve().parent / "prompts"

CODE_CONTRACTS = {
    "stdio": "Read from standard input and print to standard output; no prompts, no extra output.",
    "function": "Define `{entry_point}` at module level (no I/O, no test code).",
    "assert": "Define `{entry_point}` at module level (no I/O, no test code).",
}


def load(name: str) -> PromptTemplate:
    return prompt_load(PROMPT_DIR, name)


def code_contract(harness: str, entry_point: str = "") -> str:
    return CODE_CONTRACTS[harness].format(entry_point=entry_point or "solve")


def starter_block(starter_code: str, entry_point: str = "") -> str:
    """The starter code a call-based (LeetCode-style) task ships, as a prompt section; empty
    when there is none. LiveCodeBench grades such tasks by calling ``Solution().<entry>``, so
    the answer must keep the class and method signature."""
    if not starter_code.strip():
        return ""
    return (
        "\n## Starter code\nComplete this code, keeping the class and method signature "
        f"(the tests call `Solution().{entry_point or 'solve'}(...)` with JSON arguments):\n"
        f"```python\n{starter_code.rstrip()}\n```\n"
    )
