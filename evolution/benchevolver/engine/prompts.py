"""Prompt templates are files under evolution/benchevolver/prompts/ with a small front matter
(version, role). The version used is stored with every model call.

Every prompt that asks for code states the task's one calling convention (the harness's,
``evolution.judging.prompts.convention``): the same for a seed and for every task evolved from
it, since the harness E is fixed along a lineage."""

from __future__ import annotations

import ast
from pathlib import Path

from evolution.judging.prompts import (
    ASSERTION,
    CODE_CONTRACTS,
    FUNCTION,
    METHOD,
    PROGRAM,
    code_contract,
    convention,
    starter_block,
)
from evolution.llm.prompts import PromptTemplate, prompt_load

__all__ = [
    "ASSERTION",
    "CODE_CONTRACTS",
    "FUNCTION",
    "METHOD",
    "PROGRAM",
    "PromptTemplate",
    "code_contract",
    "convention",
    "load",
    "starter_block",
]

PROMPT_DIR = Path(__file__).resolve().parent.parent / "prompts"


def load(name: str) -> PromptTemplate:
    return prompt_load(PROMPT_DIR, name)


HARNESS_DESCRIPTIONS = {
    PROGRAM: "a complete Python 3 program that reads the input from stdin and writes the answer to stdout.",
    METHOD: (
        "a Python 3 module defining `class Solution` with the method `{entry_point}`; each test "
        "calls `Solution().{entry_point}(...)` with JSON arguments and compares the JSON-encoded "
        "return value."
    ),
    FUNCTION: (
        "a Python 3 module defining the function `{entry_point}` at module level; each test calls "
        "it with JSON arguments and compares the JSON-encoded return value."
    ),
    ASSERTION: (
        "a Python 3 module defining the function `{entry_point}` at module level; each test is an "
        "assertion program that calls it with the test's arguments and checks the value it returns."
    ),
}

# How one test input is written (the writer's examples, the test generator's output).
EXAMPLE_FORMATS = {
    "stdio": "the exact stdin text",
    "function": "the call's arguments, one JSON value per line",
    "assert": "the call's arguments, one JSON value per line",
}


def harness_description(
    harness: str, entry_point: str = "", starter_code: str = "", code: str = ""
) -> str:
    return HARNESS_DESCRIPTIONS[convention(harness, starter_code, code)].format(
        entry_point=entry_point or "solve"
    )


def harness_rule(harness: str, entry_point: str = "") -> str:
    """What an evolved task keeps of its parent (Algorithm 1 keeps E): the harness and, for a
    function-level task, the entry point's name."""
    if harness == "stdio":
        return "The evolved task keeps this harness."
    return (
        f"The evolved task keeps this harness and calling convention, and the name "
        f"`{entry_point or 'solve'}`; its parameters may change with the task."
    )


def statement_rule(harness: str, entry_point: str = "") -> str:
    """What the writer's statement must say about the interface besides the task."""
    if harness == "stdio":
        return ""
    return (
        f" The statement must name `{entry_point or 'solve'}` and describe its parameters and "
        "its return value."
    )


# The output contracts a writer may declare (evolution/sandbox/contracts.py). A function-level
# answer is a JSON value: token layout means nothing there, and its contract is exact,
# unordered or float (a tokens or checker contract is judged exact, stages/propose.py).
CONTRACT_OPTIONS = {
    "stdio": (
        'Give "output_contract": "exact" (the output is unique, compared line by line), "tokens" '
        '(unique, compared token by token whatever the line breaks), "unordered" (a set of answers '
        'in any order), {"kind": "float", "tolerance": 1e-6} (real numbers; the statement must '
        'state the tolerance), or, when several different outputs are correct, {"kind": '
        '"checker", "checker": "<Python program>"}: it reads {"input", "expected", "actual"} as '
        'JSON on stdin ("expected" is the reference program\'s output) and prints AC or WA.'
    ),
    "function": (
        'Give "output_contract": "exact" (the return value is unique, compared as a JSON value), '
        '"unordered" (a list whose order does not matter), or {"kind": "float", "tolerance": '
        "1e-6} (real numbers; the statement must state the tolerance)."
    ),
}


def contract_options(harness: str) -> str:
    return CONTRACT_OPTIONS["stdio" if harness == "stdio" else "function"]


def output_format(harness: str, entry_point: str = "") -> str:
    """How an expected output is written: the printed text, or the JSON return value."""
    if harness == "stdio":
        return "the exact text the program prints"
    return f"the JSON value `{entry_point or 'solve'}` returns"


def starter_from_solution(code: str, entry_point: str, harness: str, parent_starter: str) -> str:
    """The starter code of an evolved function-level task, in its parent's convention (empty
    when the parent shipped none, or the reference does not define the entry point):

    - ``class Solution`` with the entry method's signature taken from the reference, body left
      to the solver (LiveCodeBench's call-based starter);
    - for a module-level function (HumanEval, SciCode), the reference's ``typing`` imports and
      the function's signature (the reference's other imports would give its approach away).
    """
    if harness == "stdio" or not parent_starter.strip():
        return ""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return ""
    if convention(harness, parent_starter) == METHOD:
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name == "Solution":
                method = _function(node.body, entry_point)
                if method is not None:
                    return f"class Solution:\n    {_signature(method)}\n        "
        return ""
    function = _function(tree.body, entry_point)
    if function is None:
        return ""
    imports = [
        ast.unparse(node)
        for node in tree.body
        if (isinstance(node, ast.ImportFrom) and node.module == "typing")
        or (isinstance(node, ast.Import) and all(a.name == "typing" for a in node.names))
    ]
    head = "\n".join(imports) + "\n\n\n" if imports else ""
    return f"{head}{_signature(function)}\n    "


def _function(body, name: str):
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
            return node
    return None


def _signature(node) -> str:
    stub = ast.FunctionDef(
        name=node.name,
        args=node.args,
        body=[ast.Pass()],
        decorator_list=[],
        returns=node.returns,
        type_params=[],
    )
    return ast.unparse(ast.fix_missing_locations(stub)).splitlines()[0]


def calling_convention_problem(code: str, entry_point: str, style: str) -> str:
    """Why ``code`` cannot be run the way the harness calls it ("" when it can): the entry
    point must be the class method or module-level function the convention names. Code that
    does not parse is left to execution to report."""
    if style == PROGRAM:
        return ""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return ""
    if style == METHOD:
        if any(
            isinstance(node, ast.ClassDef)
            and node.name == "Solution"
            and _function(node.body, entry_point) is not None
            for node in tree.body
        ):
            return ""
        return (
            f"the evolved solution does not define `Solution.{entry_point}`, which the harness "
            "calls (an evolved task keeps its parent's calling convention)"
        )
    defined = _function(tree.body, entry_point) is not None or any(
        isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == entry_point for t in node.targets)
        for node in tree.body
    )
    if not defined:
        return (
            f"the evolved solution does not define `{entry_point}` at module level, which the "
            "harness calls (an evolved task keeps its parent's calling convention)"
        )
    if style == FUNCTION and "class Solution" in code:
        return (
            f"the evolved solution defines `class Solution`, so the harness would call "
            f"`Solution().{entry_point}` instead of the module-level `{entry_point}`"
        )
    return ""
