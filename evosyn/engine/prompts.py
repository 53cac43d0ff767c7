"""Prompt templates (files under evosyn/prompts/, front matter with a version stored with every
call) and the parsing of the answers. An answer that cannot be parsed raises ParseError with
the reason; the caller records it and goes on."""

from __future__ import annotations

import ast
import contextlib
import json
import re
from pathlib import Path

from evolution.llm.parsing import ParseError, extract_code, extract_json, fenced_blocks
from evolution.llm.prompts import PromptTemplate, prompt_load

from . import strategy as S

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


# Figure 6: "Sometimes the input of unit test may be very long, you can use a simple python code
# to generate the input like Problem 3, the python code must can be process by the eval()
# function in python." An input written that way computes something: an operator, a call or a
# comprehension somewhere in it (a bare literal or name is data as it stands).
GENERATING = (
    ast.BinOp,
    ast.Call,
    ast.ListComp,
    ast.GeneratorExp,
    ast.SetComp,
    ast.DictComp,
)
MAX_EXPRESSION_CHARS = 2000


def input_expression(value) -> str:
    """The Python expression an input string is written as (Figure 6's eval() inputs), or "".
    It is only parsed here, as data; it is evaluated in the sandbox (``EVALUATE_INPUT``), never
    in this process."""
    if not isinstance(value, str) or len(value) > MAX_EXPRESSION_CHARS:
        return ""
    text = value.strip()
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError):
        return ""
    return text if any(isinstance(node, GENERATING) for node in ast.walk(tree)) else ""


# The program the sandbox runs on one expression (its standard input): the value as JSON, or
# {"literal": why} when the text names what does not exist (it was data after all, e.g. a
# standard input such as "f(x)"). Any other error (memory, recursion, ...) ends the program
# with it, as do the sandbox's limits: the unit test has no input.
EVALUATE_INPUT = """import json, sys
source = sys.stdin.read()
try:
    value = eval(compile(source, "<input>", "eval"), {})
except NameError as exc:
    print(json.dumps({"literal": f"{type(exc).__name__}: {exc}"[:300]}))
else:
    print(json.dumps({"value": value}))
"""


def evaluated_input(stdout: str, *, harness: str) -> str | None:
    """The sandbox test input an evaluated expression gives: standard input (the value must be a
    string) or the call's arguments one JSON value per line (the value must be the argument
    list, as a JSON "input" is). None: the text stays the literal input it also reads as (it
    did not evaluate, or to a value of another kind: "2+3" on standard input is that text)."""
    try:
        data = json.loads(stdout)
    except ValueError:
        return None
    if not isinstance(data, dict) or "value" not in data:
        return None
    value = data["value"]
    if harness == "stdio":
        if not isinstance(value, str):
            return None
        return value if value.endswith("\n") else value + "\n"
    if not isinstance(value, list):
        return None
    return "\n".join(json.dumps(a) for a in value) + "\n"


def parse_tests(text: str, *, harness: str = "function") -> list[dict]:
    """One testing: the JSON list of {"input", "output"} unit tests in the answer (the
    document's Figure 6 format), as sandbox tests. Function harness: "input" is the list of
    arguments (one JSON argument per line), "output" JSON. Stdio harness: both are strings
    (standard input, expected standard output). An input written as Python code for eval()
    (``input_expression``) keeps its literal reading as "input" and the code as "input_expr",
    evaluated later in the sandbox. Raises ParseError."""
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
            expression = input_expression(stdin)
            stdin = stdin if stdin.endswith("\n") else stdin + "\n"
            tests.append({"input": stdin, "output": str(stdout), "input_expr": expression})
            continue
        args = entry["input"] if isinstance(entry["input"], list) else [entry["input"]]
        tests.append(
            {
                "input": "\n".join(json.dumps(a) for a in args) + "\n",
                "output": json.dumps(entry["output"]),
                "input_expr": input_expression(entry["input"]),
            }
        )
    if not tests:
        raise ParseError("the answer's list holds no {input, output} test")
    return tests


def parse_test_program(text: str) -> str:
    """Section 4.3's variant: the test writer's program that constructs the unit tests."""
    return extract_code(text, language="python").rstrip() + "\n"


def program_tests(stdout: str, *, harness: str) -> list[dict]:
    """The unit tests a test program printed, read as a Figure 6 answer is (``parse_tests``).
    Its values are the program's own, already computed: none is code for eval(). Raises
    ParseError."""
    tests = parse_tests(stdout, harness=harness)
    for test in tests:
        test["input_expr"] = ""
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
    """The strategy program in the answer. A fragment in the document's manner (Figure 3,
    Appendix A.3: code over the matrix's names that reads and prints nothing) comes back
    wrapped into a program that does (``strategy.program_of``)."""
    return S.program_of(extract_code(text, language="python").rstrip() + "\n")


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


def criterion2_text(k: int) -> str:
    """Criterion-2 as the strategist reads it, at the campaign's K (``consistency_k``)."""
    if k == 1:
        return "the best and the worst ranked solutions behave"
    return f"each of the {k} best and the {k} worst ranked solutions behaves"


def testing_code_messages(*, statement: str, entry_point: str):
    """Section 4.3's variant of Figure 6: a program that prints the unit-test list (our
    wording; the document does not print this prompt)."""
    template = load("testing_code")
    note = FUNCTION_FORMAT.format(entry_point=entry_point) if entry_point else STDIO_FORMAT
    return template.messages(problem=statement, format=note), template


def strategy_messages(*, parent: dict, inspirations: list[dict], k: int = 1):
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
            criterion2_rule=criterion2_text(k),
        ),
        template,
    )


def synthesize_messages(*, examples: list[str], stdio: bool = False):
    template = load("synthesize_stdio" if stdio else "synthesize")
    text = "\n\n".join(f"## Example {i + 1}\n{e.strip()}" for i, e in enumerate(examples))
    return template.messages(examples=text), template
