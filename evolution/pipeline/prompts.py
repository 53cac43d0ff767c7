"""Prompt templates are files under evolution/prompts/ with a small front matter (version, role).
The version used is stored with every model call."""

from __future__ import annotations

from pathlib import Path

from evolution.llm.prompts import PromptTemplate, prompt_load

__all__ = ["PromptTemplate", "load"]

PROMPT_DIR = Path(__file__).resolve().parent.parent / "prompts"


def load(name: str) -> PromptTemplate:
    return prompt_load(PROMPT_DIR, name)


HARNESS_DESCRIPTIONS = {
    "stdio": "a complete Python 3 program that reads the input from stdin and writes the answer to stdout.",
    "function": "a Python 3 module defining the function `{entry_point}`; each test calls it with JSON arguments and compares the JSON-encoded return value.",
    "assert": "a Python 3 module defining the function `{entry_point}`; tests are assertion programs calling it.",
}

CODE_CONTRACTS = {
    "stdio": "Read from standard input and print to standard output; no prompts, no extra output.",
    "function": "Define `{entry_point}` at module level (no I/O, no test code).",
    "assert": "Define `{entry_point}` at module level (no I/O, no test code).",
}

EXAMPLE_FORMATS = {
    "stdio": "the exact stdin text",
    "function": "the call's arguments, one JSON value per line",
    "assert": "the call's arguments, one JSON value per line",
}


def harness_description(harness: str, entry_point: str = "") -> str:
    return HARNESS_DESCRIPTIONS[harness].format(entry_point=entry_point or "solve")


def code_contract(harness: str, entry_point: str = "") -> str:
    return CODE_CONTRACTS[harness].format(entry_point=entry_point or "solve")
