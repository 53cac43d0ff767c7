"""Prompt templates are files under evolution/benchevolver/prompts/ with a small front matter
(version, role). The version used is stored with every model call."""

from __future__ import annotations

import ast
from pathlib import Path

from evolution.judging.prompts import CODE_CONTRACTS, code_contract, starter_block
from evolution.llm.prompts import PromptTemplate, prompt_load

__all__ = ["CODE_CONTRACTS", "PromptTemplate", "code_contract", "load", "starter_block"]

PROMPT_DIR = Path(__file__).resolve().parent.parent / "prompts"


def load(name: str) -> PromptTemplate:
    return prompt_load(PROMPT_DIR, name)


HARNESS_DESCRIPTIONS = {
    "stdio": "a complete Python 3 program that reads the input from stdin and writes the answer to stdout.",
    "function": "a Python 3 module defining the function `{entry_point}`; each test calls it with JSON arguments and compares the JSON-encoded return value.",
    "assert": "a Python 3 module defining the function `{entry_point}`; tests are assertion programs calling it.",
}

EXAMPLE_FORMATS = {
    "stdio": "the exact stdin text",
    "function": "the call's arguments, one JSON value per line",
    "assert": "the call's arguments, one JSON value per line",
}


def harness_description(harness: str, entry_point: str = "") -> str:
    return HARNESS_DESCRIPTIONS[harness].format(entry_point=entry_point or "solve")


def starter_from_solution(code: str, entry_point: str) -> str:
    """LiveCodeBench-style starter code for an evolved call-based task: ``class Solution`` with
    the entry method's signature taken from the reference, body left to the solver. Empty when
    the reference defines no such method (module-level functions need no starter)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return ""
    for node in tree.body:
        if not (isinstance(node, ast.ClassDef) and node.name == "Solution"):
            continue
        for item in node.body:
            if isinstance(item, ast.FunctionDef) and item.name == entry_point:
                stub = ast.FunctionDef(
                    name=item.name,
                    args=item.args,
                    body=[ast.Pass()],
                    decorator_list=[],
                    returns=item.returns,
                    type_params=[],
                )
                signature = ast.unparse(ast.fix_missing_locations(stub)).splitlines()[0]
                return f"class Solution:\n    {signature}\n        "
    return ""
