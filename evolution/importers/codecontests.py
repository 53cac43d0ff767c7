"""CodeContests (``deepmind/code_contests``) rows as stdin/stdout seed records.

The row format is the one the Hub serves (JSON lines or Parquet, from the dataset's
``contest_problem.proto``): ``name``, ``description``, ``public_tests`` / ``private_tests`` /
``generated_tests`` as ``{"input": [...], "output": [...]}``, ``solutions`` and
``incorrect_solutions`` as ``{"language": [...], "solution": [...]}`` (language 3 is
PYTHON3), ``source`` and ``difficulty`` as enum numbers, ``cf_*`` Codeforces facts,
``time_limit`` as ``{"seconds", "nanos"}`` and ``memory_limit_bytes``.
"""

from __future__ import annotations

from collections.abc import Iterator

from .reading import Fields
from .rows import iter_rows, seed_record, stdio_tests

DATASET = "codecontests"
PYTHON3 = 3
SOURCES = {
    0: "unknown",
    1: "codechef",
    2: "codeforces",
    3: "hackerearth",
    4: "codejam",
    6: "atcoder",
    7: "aizu",
}
DIFFICULTIES = {
    0: "UNKNOWN_DIFFICULTY",
    1: "EASY",
    2: "MEDIUM",
    3: "HARD",
    4: "HARDER",
    5: "HARDEST",
    6: "EXTERNAL",
    **{n: letter for n, letter in zip(range(7, 18), "ABCDEFGHIJK", strict=True)},
    **{n: letter for n, letter in zip(range(19, 30), "LMNOPQRSTUV", strict=True)},
}
_TIERS = (
    ("public_tests", "public", False, "codecontests-public"),
    ("private_tests", "medium", True, "codecontests-private"),
    ("generated_tests", "large", True, "codecontests-generated"),
)


def read_codecontests(
    *, path: str | None = None, content: str | None = None
) -> Iterator[tuple[int, dict]]:
    for line, row in iter_rows(path=path, content=content):
        yield line, codecontests_record(row, line=line)


def _pairs(fields: Fields, key: str) -> list[tuple[str, str]]:
    value = fields.obj.get(key)
    if value is None:
        return []
    if not isinstance(value, dict):
        fields.fail(
            key, f"must be an object with input and output lists, got {type(value).__name__}"
        )
    inputs, outputs = value.get("input") or [], value.get("output") or []
    if not isinstance(inputs, list) or not isinstance(outputs, list):
        fields.fail(key, "input and output must be lists")
    if len(inputs) != len(outputs):
        fields.fail(key, f"has {len(inputs)} inputs but {len(outputs)} outputs")
    for index, (stdin, stdout) in enumerate(zip(inputs, outputs, strict=True)):
        if not isinstance(stdin, str):
            fields.fail(f"{key}.input[{index}]", "must be a string")
        if not isinstance(stdout, str):
            fields.fail(f"{key}.output[{index}]", "must be a string")
    return list(zip(inputs, outputs, strict=True))


def _python3_solutions(fields: Fields) -> list[str]:
    value = fields.obj.get("solutions")
    if value is None:
        return []
    if not isinstance(value, dict):
        fields.fail(
            "solutions",
            f"must be an object with language and solution lists, got {type(value).__name__}",
        )
    languages, texts = value.get("language") or [], value.get("solution") or []
    if (
        not isinstance(languages, list)
        or not isinstance(texts, list)
        or len(languages) != len(texts)
    ):
        fields.fail("solutions", "language and solution must be lists of the same length")
    found = []
    for index, (language, text) in enumerate(zip(languages, texts, strict=True)):
        if not isinstance(text, str):
            fields.fail(f"solutions.solution[{index}]", "must be a string")
        if language == PYTHON3 and text.strip():
            found.append(text)
    return found


def _enum(fields: Fields, key: str, names: dict[int, str]) -> str:
    value = fields.obj.get(key)
    if value is None:
        return names[0]
    if isinstance(value, bool) or not isinstance(value, int) or value not in names:
        fields.fail(key, f"must be one of the dataset's enum numbers, got {value!r}")
    return names[value]


def _time_limit(fields: Fields) -> float:
    value = fields.obj.get("time_limit")
    if value is None:
        return 6.0
    if not isinstance(value, dict):
        fields.fail("time_limit", "must be an object with seconds and nanos")
    seconds, nanos = value.get("seconds") or 0, value.get("nanos") or 0
    if not all(isinstance(x, int) and not isinstance(x, bool) for x in (seconds, nanos)):
        fields.fail("time_limit", "seconds and nanos must be integers")
    total = seconds + nanos / 1e9
    if total < 0:
        fields.fail("time_limit", "must not be negative")
    return total or 6.0


def _memory_mb(fields: Fields) -> int:
    value = fields.obj.get("memory_limit_bytes")
    if value in (None, 0):
        return 512
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        fields.fail("memory_limit_bytes", f"must be a non-negative integer, got {value!r}")
    return max(16, value // (1 << 20))


def codecontests_record(row: dict, *, line: int | None) -> dict:
    fields = Fields(row, line=line)
    name = fields.required_text("name")
    statement = fields.required_text("description")
    tests = []
    for key, tier, hidden, source in _TIERS:
        tests += stdio_tests(_pairs(fields, key), tier=tier, hidden=hidden, source=source)
    solutions = _python3_solutions(fields)
    source = _enum(fields, "source", SOURCES)
    return seed_record(
        dataset=DATASET,
        origin_id=name,
        title=name,
        statement=statement,
        # The first Python 3 solution; the dataset's C++ and Java ones cannot run here.
        reference=solutions[0] if solutions else "",
        tests=tests,
        difficulty=_enum(fields, "difficulty", DIFFICULTIES),
        time_limit_s=_time_limit(fields),
        memory_mb=_memory_mb(fields),
        metadata={
            "platform": source,
            "python3_solutions": len(solutions),
            "cf_contest_id": row.get("cf_contest_id"),
            "cf_index": row.get("cf_index") or "",
            "cf_rating": row.get("cf_rating"),
            "cf_tags": list(row.get("cf_tags") or []),
            "input_file": row.get("input_file") or "",
            "output_file": row.get("output_file") or "",
        },
    )
