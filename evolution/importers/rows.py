"""Shared reading for datasets published on the Hugging Face Hub: rows as JSON lines or
Parquet, JSON-string fields decoded as data only, and seed records built the same way.

A row's "line" is its 1-based line in a JSON lines file (blank lines counted) or its
1-based row number in a Parquet file, so every error still names where it is.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from .errors import SeedImportError
from .reading import Fields, iter_jsonl, refuse_nul

# Rows are turned into Python objects a few at a time: CodeContests rows can hold megabytes of
# generated tests each.
_PARQUET_BATCH = 32


def iter_rows(*, path: str | None = None, content: str | None = None) -> Iterator[tuple[int, dict]]:
    """(line or row number, row) from JSON lines (``.jsonl``, ``.jsonl.gz``, or ``content``)
    or a Parquet file (a path ending in ``.parquet``)."""
    if path is not None and path.endswith(".parquet"):
        yield from _parquet_rows(path)
        return
    yield from iter_jsonl(path=path, content=content)


def _parquet_rows(path: str) -> Iterator[tuple[int, dict]]:
    try:
        import pyarrow.parquet as pq
    except ImportError:  # pragma: no cover - pyarrow is a dependency
        raise SeedImportError("reading Parquet needs pyarrow")
    try:
        handle = pq.ParquetFile(path)
    except OSError as exc:
        raise SeedImportError(f"cannot read {path}: {exc}")
    except Exception as exc:  # pyarrow raises ArrowInvalid for a file that is not Parquet
        raise SeedImportError(f"{path} is not a Parquet file: {exc}")
    number = 0
    for batch in handle.iter_batches(batch_size=_PARQUET_BATCH):
        for row in batch.to_pylist():
            number += 1
            refuse_nul(row, line=number)
            yield number, row


def json_field(fields: Fields, key: str, *, default=None, required: bool = False):
    """A field the dataset packs as a JSON string (``json.loads`` only: data, never code).
    An already-decoded value (a list or an object) is taken as is; '' and null give
    ``default``."""
    value = fields.obj.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            fields.fail(key, "is missing")
        return default
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError as exc:
            fields.fail(key, f"is a string but not JSON ({exc.msg} at column {exc.colno})")
    return value


def text_lines(value, *, fields: Fields, key: str) -> str:
    """A test's input or output: a string, or a list of lines (some APPS and TACO rows)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(x, str) for x in value):
        return "\n".join(value) + ("\n" if value else "")
    fields.fail(key, f"must be a string or a list of strings, got {type(value).__name__}")
    return ""


def stdio_tests(pairs: list[tuple[str, str]], *, tier: str, hidden: bool, source: str):
    return [
        {
            "tier": tier,
            "ordinal": index,
            "hidden": hidden,
            "input": stdin,
            "output": stdout,
            "provenance": {"source": source},
        }
        for index, (stdin, stdout) in enumerate(pairs)
    ]


def seed_record(
    *,
    dataset: str,
    origin_id: str,
    title: str,
    statement: str,
    reference: str,
    tests: list[dict],
    difficulty: str = "",
    metadata: dict | None = None,
    time_limit_s: float = 6.0,
    memory_mb: int = 512,
    harness: str = "stdio",
    entry_point: str = "",
    starter_code: str = "",
    contest_date: str | None = None,
) -> dict:
    """A record for ``store.RecordWriter``: every column of a seed problem."""
    return {
        "title": title[:300],
        "statement": statement,
        "reference_solution": reference,
        "reference_provenance": {"source": "record", "dataset": dataset}
        if reference.strip()
        else {},
        "harness": harness,
        "entry_point": entry_point,
        "starter_code": starter_code,
        "time_limit_s": float(time_limit_s),
        "memory_mb": int(memory_mb),
        "comparison": {},
        "kind": "seed",
        "method": "imported",
        "origin_dataset": dataset,
        "origin_id": origin_id,
        "origin_difficulty": difficulty,
        "contest_date": contest_date,
        "metadata": metadata or {},
        "lineage_depth": 0,
        "parent": None,
        "lineage_root": None,
        "tests": tests,
    }
