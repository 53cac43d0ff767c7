"""Proposer (Section 3.2): mutate the parent's reference solution into C', then derive the
statement S' from C' alone. Pure functions: build messages, parse answers."""

from __future__ import annotations

import difflib

from evolution.llm.parsing import ParseError, extract_code, extract_json
from evolution.sandbox import contracts

from . import families, prompts
from .types import Mutation, StageError, Written


def mutator_messages(
    *,
    parent_code: str,
    harness: str,
    entry_point: str,
    parent_level: int,
    seed_level: int,
    lineage_memory: str,
    global_memory: str,
    starter_code: str = "",
) -> tuple[list[dict], prompts.PromptTemplate]:
    """The mutator's prompt: the parent's reference and memory, and the parent's harness, which
    the evolved task keeps (one calling convention, stated as the harness runs it)."""
    template = prompts.load("mutator")
    messages = template.messages(
        harness_description=prompts.harness_description(
            harness, entry_point, starter_code, parent_code
        ),
        harness_rule=prompts.harness_rule(harness, entry_point),
        parent_level=parent_level,
        seed_level=seed_level,
        parent_code=parent_code.rstrip(),
        lineage_memory=lineage_memory or "(empty: this is the first proposal)",
        global_memory=global_memory or "(none yet)",
        code_contract=prompts.code_contract(harness, entry_point, starter_code, parent_code),
        starter_block=prompts.starter_block(starter_code, harness, parent_code, parent=True),
        family_vocabulary=", ".join(families.vocabulary_names()) or "(free text)",
    )
    return messages, template


def parse_mutation(text: str) -> Mutation:
    try:
        meta = extract_json(text)
        code = extract_code(text, language="python")
    except ParseError as exc:
        raise StageError(f"mutator answer unparsable: {exc}")
    missing = [k for k in ("idea", "family") if not str(meta.get(k, "")).strip()]
    if missing:
        raise StageError(f"mutator answer lacks {', '.join(missing)}")
    return Mutation(
        idea=str(meta["idea"]).strip(),
        parent_weakness=str(meta.get("parent_weakness", "")).strip(),
        family=normalize_family(str(meta["family"])),
        code=code.rstrip() + "\n",
    )


def normalize_family(name: str) -> str:
    """Families are compared across lineages: the controlled tag vocabulary's canonical name
    (synonyms folded), else the name with case, spacing and filler words folded."""
    return families.canonical_family(name)


def check_calling_convention(
    code: str, *, harness: str, entry_point: str, starter_code: str, parent_code: str
) -> None:
    """Raise StageError when the evolved ``code`` cannot be called the way the parent's harness
    calls it (Algorithm 1 keeps E: the harness, the entry point, the convention)."""
    if harness != "stdio" and not entry_point:
        raise StageError(f"the parent's {harness} harness names no entry point to call")
    style = prompts.convention(harness, starter_code, parent_code)
    problem = prompts.calling_convention_problem(code, entry_point, style)
    if problem:
        raise StageError(problem)


def writer_messages(
    *, code: str, harness: str, entry_point: str, time_limit: float, starter_code: str = ""
) -> tuple[list[dict], prompts.PromptTemplate]:
    template = prompts.load("writer")
    messages = template.messages(
        harness_description=prompts.harness_description(harness, entry_point, starter_code, code),
        statement_rule=prompts.statement_rule(harness, entry_point),
        contract_options=prompts.contract_options(harness),
        code=code.rstrip(),
        time_limit=time_limit,
        example_format=prompts.EXAMPLE_FORMATS[harness],
    )
    return messages, template


def parse_written(text: str) -> Written:
    try:
        meta = extract_json(text)
    except ParseError as exc:
        raise StageError(f"writer answer unparsable: {exc}")
    title = str(meta.get("title", "")).strip()
    statement = str(meta.get("statement", "")).strip()
    examples = meta.get("examples")
    if not title or not statement:
        raise StageError("writer answer lacks a title or a statement")
    if (
        not isinstance(examples, list)
        or not examples
        or not all(isinstance(e, str) for e in examples)
    ):
        raise StageError("writer answer needs 'examples': a non-empty list of input strings")
    try:
        contract = contracts.parse_contract(meta.get("output_contract"))
    except contracts.ContractError as exc:
        raise StageError(f"writer answer: {exc}")
    return Written(
        title=title[:300],
        statement=statement,
        examples=[_with_newline(e) for e in examples],
        contract=contract,
    )


def _with_newline(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


def code_diff(parent_code: str, child_code: str) -> str:
    return "".join(
        difflib.unified_diff(
            parent_code.splitlines(keepends=True),
            child_code.splitlines(keepends=True),
            fromfile="parent.py",
            tofile="evolved.py",
        )
    )


def render_statement(body: str, examples: list[tuple[str, str]]) -> str:
    """The full statement: the writer's body plus examples whose outputs came from executing C'
    (for a function-level task, the call's JSON arguments and the JSON value returned)."""
    parts = [body.rstrip(), ""]
    for index, (given, expected) in enumerate(examples, start=1):
        parts += [
            f"### Example {index}",
            "",
            "Input",
            "```",
            given.rstrip("\n"),
            "```",
            "Output",
            "```",
            expected.rstrip("\n"),
            "```",
            "",
        ]
    return "\n".join(parts).rstrip() + "\n"
