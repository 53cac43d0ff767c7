"""Prompt templates of the X-Coder stages (files under xcoder/prompts/, with a version in their
front matter stored with every call) and the parsers of their answers.

Parsers raise ParseError with a reason; the caller records it as the task's rejection reason
(or the extraction's failure), never a crash.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from evolution.llm.parsing import ParseError, extract_json
from evolution.llm.prompts import PromptTemplate, prompt_load

from .features import CATEGORIES

PROMPT_DIR = Path(__file__).resolve().parent.parent / "prompts"
INPUT_FORMATS = {
    "stdio": "the exact text given on standard input",
    "function": "the function's arguments, one JSON value per line, in parameter order",
}
CATEGORY_EXPLANATIONS = {
    "algorithm": "algorithms and algorithmic methods, grouped by family",
    "data structures": "data structures the solution maintains",
    "problem type": "the kind of problem being solved",
    "implementation logic": "how the solution is implemented (iterative, recursive, ...)",
    "complexity analysis": "time and space complexity classes",
    "optimization techniques": "optimisations applied to reach the complexity",
}


def load(name: str) -> PromptTemplate:
    return prompt_load(PROMPT_DIR, name, prefix="xcoder/")


def extraction_messages(*, statement: str, code: str):
    template = load("extraction")
    return template.messages(statement=statement.strip(), code=code.rstrip()), template


def evolution_messages(*, category: str, tree: dict):
    template = load("evolution")
    explanations = "\n".join(f"- {c}: {CATEGORY_EXPLANATIONS[c]}" for c in CATEGORIES)
    features = json.dumps({category: tree}, indent=1, ensure_ascii=False)
    return template.messages(explanations=explanations, features=features), template


def seed_evolution_messages(*, tree: dict[str, dict]):
    """Evolve-then-merge (B.1): one seed's extracted feature tree, every category, evolved as
    the document's prompt shows it (a nested JSON of categories)."""
    template = load("evolution")
    explanations = "\n".join(f"- {c}: {CATEGORY_EXPLANATIONS[c]}" for c in CATEGORIES)
    features = json.dumps(tree, indent=1, ensure_ascii=False)
    return template.messages(explanations=explanations, features=features), template


def select_messages(*, sampled_tree: dict):
    template = load("select")
    features_json = json.dumps(sampled_tree, indent=1, ensure_ascii=False)
    return template.messages(features_json=features_json), template


def write_messages(*, style: str, selected_tree: dict, strategy: str):
    template = load(f"write_{style}")
    return template.messages(
        selected_features_info=json.dumps(selected_tree, indent=1, ensure_ascii=False),
        integration_strategy=strategy,
    ), template


def tests_messages(*, statement: str, harness: str, count: int):
    template = load("tests_prompt")
    return template.messages(
        problem_statement=statement, count=count, input_format=INPUT_FORMATS[harness]
    ), template


def generator_messages(*, statement: str, harness: str):
    template = load("tests_generator")
    return template.messages(question=statement, input_format=INPUT_FORMATS[harness]), template


def difficulty_messages(*, statement: str):
    """B.3 done differently: a judge model rates the task's statement (``engine/difficulty.py``)."""
    template = load("difficulty")
    return template.messages(statement=statement.strip()), template


@dataclass(frozen=True)
class Selection:
    roles_tree: dict
    selected_tree: dict
    strategy: str


def parse_selection(text: str) -> Selection:
    data = extract_json(text)
    selected = data.get("selected_features_tree")
    strategy = data.get("integration_strategy")
    if not isinstance(selected, dict) or not selected:
        raise ParseError("stage 1 answer has no selected_features_tree object")
    if not isinstance(strategy, str) or not strategy.strip():
        raise ParseError("stage 1 answer has no integration_strategy")
    roles = data.get("feature_roles_tree")
    return Selection(
        roles_tree=roles if isinstance(roles, dict) else {},
        selected_tree=selected,
        strategy=strategy.strip(),
    )


@dataclass(frozen=True)
class WrittenTask:
    title: str
    question: str
    entry_point: str
    starter_code: str


def parse_task(text: str, *, style: str) -> WrittenTask:
    data = extract_json(text)
    question = data.get("question")
    if not isinstance(question, str) or not question.strip():
        raise ParseError('stage 2 answer has no "question" text')
    title = str(data.get("title") or "").strip()
    if not title:
        first = question.strip().splitlines()[0]
        title = first.lstrip("# ").strip()[:200]
    entry_point = str(data.get("entry_point") or "").strip()
    starter = str(data.get("starter_code") or "")
    if style == "leetcode":
        if not entry_point.isidentifier():
            raise ParseError("a LeetCode-style task needs an entry_point that is a Python name")
        if f"def {entry_point}(" not in starter:
            raise ParseError(f"the starter code does not define {entry_point}()")
    return WrittenTask(
        title=title[:300],
        question=question.strip() + "\n",
        entry_point=entry_point,
        starter_code=starter,
    )


def parse_test_cases(text: str, *, harness: str) -> list[dict]:
    """[{"input", "category", "description"}] from a D.1 answer or a generator's stdout.
    Inputs of the function harness must be one JSON value per line."""
    data = extract_json(text)
    cases = data.get("test_cases")
    if not isinstance(cases, list) or not cases:
        raise ParseError('no "test_cases" list')
    tests = []
    for number, case in enumerate(cases):
        if not isinstance(case, dict):
            raise ParseError(f"test case {number} is not an object")
        raw = case.get("input_string", case.get("input"))
        if isinstance(raw, list | dict) and harness == "function":
            raw = "\n".join(json.dumps(v) for v in (raw if isinstance(raw, list) else [raw]))
        if not isinstance(raw, str) or not raw.strip():
            raise ParseError(f"test case {number} has no input_string")
        if harness == "function":
            for line in raw.splitlines():
                if line.strip():
                    try:
                        json.loads(line)
                    except ValueError as exc:
                        raise ParseError(
                            f"test case {number}: argument line is not JSON ({exc})"
                        ) from exc
        elif not raw.endswith("\n"):
            raw += "\n"
        tests.append(
            {
                "input": raw,
                "category": str(case.get("category") or "nominal").strip().lower(),
                "description": str(case.get("description") or "")[:300],
            }
        )
    return tests
