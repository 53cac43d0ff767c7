"""Prompt templates (files under evosyn/prompts/, front matter with a version stored with every
call) and the parsing of the answers. An answer that cannot be parsed raises ParseError with
the reason; the caller records it and goes on."""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path

from evolution.llm.parsing import ParseError, extract_code, extract_json, fenced_blocks
from evolution.llm.prompts import PromptTemplate, prompt_load

PROMPT_DIR = Path(__file__).resolve().parent.parent / "prompts"
ENTRY_POINT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,79}$")


def load(name: str) -> PromptTemplate:
    return prompt_load(PROMPT_DIR, name, prefix="evosyn/")


def parse_solution(text: str) -> str:
    return extract_code(text, language="python").rstrip() + "\n"


FUNCTION_FORMAT = (
    "**Note**: the problem has a start code block (the function `{entry_point}`): provide "
    "\"input\" as the list of the call's arguments in order, strictly following the function's "
    'signature, and "output" as the value it must return, both as JSON.'
)
STDIO_FORMAT = (
    "**Note**: the problem has no start code block: the program reads standard input and "
    'prints its answer, so the unit tests must not contain any input parameters: "input" is '
    'the whole standard input and "output" the whole expected standard output, both strings.'
)


def parse_tests(text: str, *, harness: str = "function") -> list[dict]:
    """One testing: the JSON list of {"input", "output"} unit tests in the answer (the
    document's Figure 6 format), as sandbox tests. Function harness: "input" is the list of
    arguments (one JSON argument per line), "output" JSON. Stdio harness: both are strings
    (standard input, expected standard output). Raises ParseError."""
    candidates: list[str] = []
    with contextlib.suppress(ParseError):
        candidates = [b.text for b in fenced_blocks(text or "")]
    candidates.append((text or "").strip())
    data = None
    for chunk in candidates:
        start = chunk.find("[")
        if start < 0:
            continue
        try:
            value, _ = json.JSONDecoder().raw_decode(chunk[start:])
        except ValueError:
            continue
        if isinstance(value, list):
            data = value
            break
    if data is None:
        raise ParseError("no JSON list of tests found in the answer")
    tests = []
    for entry in data:
        if not isinstance(entry, dict) or "input" not in entry or "output" not in entry:
            continue  # one malformed entry does not spoil the others
        if harness == "stdio":
            stdin, stdout = entry["input"], entry["output"]
            if not isinstance(stdin, str) or not isinstance(stdout, str | int | float):
                continue
            stdin = stdin if stdin.endswith("\n") else stdin + "\n"
            tests.append({"input": stdin, "output": str(stdout)})
            continue
        args = entry["input"] if isinstance(entry["input"], list) else [entry["input"]]
        tests.append(
            {
                "input": "\n".join(json.dumps(a) for a in args) + "\n",
                "output": json.dumps(entry["output"]),
            }
        )
    if not tests:
        raise ParseError("the answer's list holds no {input, output} test")
    return tests


def parse_problem(text: str, *, stdio: bool = False) -> dict:
    """A synthesized problem: title, statement and (function-level) entry point; a stdin/stdout
    problem has no entry point."""
    data = extract_json(text)
    title = str(data.get("title", "")).strip()[:300]
    entry_point = "" if stdio else str(data.get("entry_point", "")).strip()
    statement = str(data.get("statement", "")).strip()
    if not stdio and not ENTRY_POINT.match(entry_point):
        raise ParseError(f"entry_point {entry_point!r} is not a Python function name")
    if len(statement) < 20:
        raise ParseError("the statement is missing or too short")
    return {
        "title": title or entry_point or statement.splitlines()[0][:80],
        "entry_point": entry_point,
        "statement": statement,
    }


def parse_strategy(text: str) -> str:
    return extract_code(text, language="python").rstrip() + "\n"


def solution_messages(*, statement: str, entry_point: str):
    """The solver's prompt: a function to define, or (no entry point) a stdin/stdout program."""
    if not entry_point:
        template = load("solution_stdio")
        return template.messages(problem=statement), template
    template = load("solution")
    return template.messages(problem=statement, entry_point=entry_point), template


def testing_messages(*, statement: str, entry_point: str):
    """The document's Figure 6 prompt: one answer is one testing (a unit-test list). Its note
    on the format follows the problem: function arguments, or standard input and output."""
    template = load("testing")
    note = FUNCTION_FORMAT.format(entry_point=entry_point) if entry_point else STDIO_FORMAT
    return template.messages(problem=statement, format=note), template


def strategy_messages(*, parent: dict, inspirations: list[dict]):
    template = load("strategy")
    inspiration_text = "\n\n".join(
        f"## Another strategy (score {i['score']:.3f})\n```python\n{i['code'].rstrip()}\n```"
        for i in inspirations
    )
    return (
        template.messages(
            parent=parent["code"].rstrip(),
            score=f"{parent['score']:.3f}",
            criterion1=f"{parent['criterion1']:.3f}",
            criterion2=f"{parent['criterion2']:.3f}",
            inspirations=inspiration_text,
        ),
        template,
    )


def synthesize_messages(*, examples: list[str], stdio: bool = False):
    template = load("synthesize_stdio" if stdio else "synthesize")
    text = "\n\n".join(f"## Example {i + 1}\n{e.strip()}" for i, e in enumerate(examples))
    return template.messages(examples=text), template
