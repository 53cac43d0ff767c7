"""Reference solutions for seed sets that publish none (LiveCodeBench).

A solutions file is JSONL, one object per line::

    {"question_id": "1873_A", "solution": "t = int(input())\\n..."}

``question_id`` is the record's id in the seed file (LiveCodeBench's ``question_id``);
``solution`` is the complete program (stdin/stdout problems) or module / ``class Solution``
(call-based problems). An id given twice, an empty solution, or an id that no record of the
import carries is an error naming the solutions line: a typo must not silently leave a seed
without its reference.
"""

from __future__ import annotations

from .errors import SeedImportError
from .reading import iter_jsonl

SOLUTIONS_FIELD = "solutions"


def read_solutions(*, path: str | None = None, content: str | None = None) -> dict[str, dict]:
    """{question_id: {"solution": code, "line": n}} from a solutions file."""
    found: dict[str, dict] = {}
    try:
        lines = list(iter_jsonl(path=path, content=content))
    except SeedImportError as exc:
        raise SeedImportError(
            f"solutions line {exc.line}: {exc.message}"
            if exc.line is not None
            else f"solutions file: {exc.message}",
            field=SOLUTIONS_FIELD,
        )
    for line, obj in lines:
        question_id = obj.get("question_id")
        solution = obj.get("solution")
        if not isinstance(question_id, str) or not question_id.strip():
            _fail(line, "question_id", "must be a non-empty string")
        if not isinstance(solution, str) or not solution.strip():
            _fail(line, "solution", "must be the solution's non-empty source code")
        unknown = sorted(set(obj) - {"question_id", "solution"})
        if unknown:
            _fail(line, unknown[0], "is not a field of a solutions line (question_id, solution)")
        if question_id in found:
            _fail(
                line,
                "question_id",
                f"repeats {question_id!r} already given on line {found[question_id]['line']}",
            )
        found[question_id] = {"solution": solution, "line": line}
    return found


def attach_solutions(records: list[tuple[int, dict]], solutions: dict[str, dict], *, name: str):
    """Give each record its solution from the file, with its provenance (the file's name and
    line); refuse a solution whose id no record carries. The import runs each on the record's
    tests before storing it (``references.py``)."""
    by_id = {record["origin_id"]: record for _, record in records}
    for question_id, entry in solutions.items():
        record = by_id.get(question_id)
        if record is None:
            _fail(entry["line"], "question_id", f"{question_id!r} is not in the imported records")
        record["reference_solution"] = entry["solution"]
        record["reference_provenance"] = {
            "source": "solutions-file",
            "file": name,
            "line": entry["line"],
        }


def _fail(line: int, field: str, message: str):
    raise SeedImportError(f"solutions line {line}: {message}", field=f"{SOLUTIONS_FIELD}.{field}")
