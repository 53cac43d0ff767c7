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


def parse_tests(text: str) -> list[dict]:
    """The JSON list of {"input": [args], "output": value} in the answer, as function-harness
    tests {"input": one JSON argument per line, "output": JSON}. Raises ParseError."""
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


def parse_problem(text: str) -> dict:
    data = extract_json(text)
    title = str(data.get("title", "")).strip()[:300]
    entry_point = str(data.get("entry_point", "")).strip()
    statement = str(data.get("statement", "")).strip()
    if not ENTRY_POINT.match(entry_point):
        raise ParseError(f"entry_point {entry_point!r} is not a Python function name")
    if len(statement) < 20:
        raise ParseError("the statement is missing or too short")
    return {"title": title or entry_point, "entry_point": entry_point, "statement": statement}


def parse_strategy(text: str) -> str:
    return extract_code(text, language="python").rstrip() + "\n"


def solution_messages(*, statement: str, entry_point: str):
    template = load("solution")
    return template.messages(problem=statement, entry_point=entry_point), template


def testing_messages(*, statement: str, entry_point: str, count: int):
    template = load("testing")
    return (
        template.messages(problem=statement, entry_point=entry_point, count=count),
        template,
    )


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


def synthesize_messages(*, examples: list[str]):
    template = load("synthesize")
    text = "\n\n".join(f"## Example {i + 1}\n{e.strip()}" for i, e in enumerate(examples))
    return template.messages(examples=text), template
