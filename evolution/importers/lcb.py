"""LiveCodeBench ``CodeGenerationProblem`` JSONL as seed records.

Accepted forms, each seen in published files:
- ``public_test_cases``: a JSON string or an already-parsed list of tests;
- ``private_test_cases``: a JSON string, a list, or base64(zlib(pickle(json string)))
  decoded with ``safe_pickle`` (a pickle that references any global is refused);
- ``metadata``: a JSON string or an object.
A test is ``{"input", "output", "testtype": "stdin"|"functional"}``; ``metadata.func_name``
or any functional test makes the problem call-based (harness "function").
An optional ``reference_solution`` string is the seed's reference, provenance
``{"source": "record", "dataset": "livecodebench"}`` (LiveCodeBench ships none;
``import_seeds(solutions_path=...)`` attaches them from a solutions file). Either is run on the
record's tests before it is stored (``references.py``).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterator

from .errors import SeedImportError
from .reading import Fields, iter_jsonl
from .safe_pickle import UnsafePickleError, bounded_zlib_decompress, safe_pickle_loads

DATASET = "livecodebench"
TESTTYPES = ("stdin", "functional")


def read_lcb(*, path: str | None = None, content: str | None = None) -> Iterator[tuple[int, dict]]:
    for line, obj in iter_jsonl(path=path, content=content):
        yield line, lcb_record(obj, line=line)


def lcb_record(obj: dict, *, line: int | None) -> dict:
    fields = Fields(obj, line=line)
    question_id = fields.required_text("question_id")
    title = fields.required_text("question_title")
    statement = fields.required_text("question_content")
    lcb_metadata = fields.mapping("metadata")
    public = _tests(_public_list(fields), field="public_test_cases", line=line)
    private = _tests(_private_list(fields), field="private_test_cases", line=line)

    func_name = lcb_metadata.get("func_name")
    if func_name is not None and (not isinstance(func_name, str) or not func_name.strip()):
        fields.fail("metadata.func_name", f"must be a non-empty string, got {func_name!r}")
    testtypes = {t["testtype"] for t in public + private}
    if func_name or "functional" in testtypes:
        if not func_name:
            fields.fail("metadata.func_name", "functional tests need the function's name")
        if "stdin" in testtypes:
            fields.fail("public_test_cases", "mixes stdin tests into a call-based problem")
        harness = "function"
    else:
        harness = "stdio"

    tests = [
        {
            "tier": "public",
            "ordinal": index,
            "hidden": False,
            "input": test["input"],
            "output": test["output"],
            "provenance": {"source": "lcb-public"},
        }
        for index, test in enumerate(public)
    ] + [
        {
            "tier": "medium",
            "ordinal": index,
            "hidden": True,
            "input": test["input"],
            "output": test["output"],
            "provenance": {"source": "lcb-private"},
        }
        for index, test in enumerate(private)
    ]
    # LiveCodeBench publishes no solutions: a line may carry one (``reference_solution``),
    # a solutions file may give it (importers/solutions.py), else calibration may find one.
    reference = fields.text("reference_solution")
    metadata = {
        "platform": fields.text("platform"),
        "contest_id": fields.text("contest_id"),
        "lcb_metadata": lcb_metadata,
    }
    return {
        "title": title,
        "statement": statement,
        "reference_solution": reference,
        "reference_provenance": {"source": "record", "dataset": DATASET}
        if reference.strip()
        else {},
        "harness": harness,
        "entry_point": func_name or "",
        "starter_code": fields.text("starter_code"),
        "time_limit_s": 6.0,
        "memory_mb": 512,
        "comparison": {},
        "kind": "seed",
        "method": "imported",
        "origin_dataset": DATASET,
        "origin_id": question_id,
        "origin_difficulty": fields.text("difficulty"),
        "contest_date": fields.timestamp("contest_date"),
        "metadata": metadata,
        "lineage_depth": 0,
        "parent": None,
        "lineage_root": None,
        "tests": tests,
    }


def _public_list(fields: Fields):
    value = fields.obj.get("public_test_cases")
    if value is None:
        fields.fail("public_test_cases", "is missing")
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else []
        except json.JSONDecodeError as exc:
            fields.fail("public_test_cases", f"is a string but not JSON ({exc.msg})")
    return value


def _private_list(fields: Fields):
    """A list, a JSON string, or base64(zlib(pickle(JSON string or list)))."""
    key = "private_test_cases"
    value = fields.obj.get(key)
    if value is None or value == "":
        return []
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        pass  # not plain JSON: LiveCodeBench's packed form
    try:
        packed = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        fields.fail(key, "is neither JSON nor base64")
    try:
        pickled = bounded_zlib_decompress(packed)
    except ValueError as exc:
        fields.fail(key, f"is base64 but not valid zlib data: {exc}")
    try:
        value = safe_pickle_loads(pickled)
    except UnsafePickleError as exc:
        fields.fail(key, str(exc))
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            fields.fail(key, f"unpickled to a string that is not JSON ({exc.msg})")
    return value


def _tests(value, *, field: str, line: int | None) -> list[dict]:
    if not isinstance(value, list):
        raise SeedImportError(
            f"must be a list of tests, got {type(value).__name__}", line=line, field=field
        )
    tests = []
    for index, item in enumerate(value):
        if not isinstance(item, dict):
            raise SeedImportError(
                f"must be an object, got {type(item).__name__}",
                line=line,
                field=f"{field}[{index}]",
            )
        test = Fields(item, line=line, prefix=f"{field}[{index}].")
        for key in ("input", "output"):
            if not isinstance(item.get(key), str):
                test.fail(key, "is missing" if key not in item else "must be a string")
        tests.append(
            {
                "input": item["input"],
                "output": item["output"],
                "testtype": test.choice("testtype", TESTTYPES, default="stdin"),
            }
        )
    return tests
