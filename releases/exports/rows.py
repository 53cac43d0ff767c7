"""What every export format shares: the items of a release in order, their tests in the canonical
order, one JSON line, and the deterministic Parquet and zip writers."""

from __future__ import annotations

import io
import json
import zipfile

from evolution.exporters.jsonl import sort_tests

from ..models import Release, ReleaseItem

_ZIP_TIME = (2020, 1, 1, 0, 0, 0)


def dump_line(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n"


def release_items(release: Release):
    return release.items.order_by("position").prefetch_related("tests")


def item_tests(item: ReleaseItem) -> list[dict]:
    return sort_tests(
        {
            "tier": t.tier,
            "ordinal": t.ordinal,
            "hidden": t.hidden,
            "input": t.input,
            "output": t.output,
            "provenance": t.provenance,
        }
        for t in item.tests.all()
    )


def split_tests(item: ReleaseItem) -> tuple[list[dict], list[dict]]:
    """(public examples, hidden tests) in their canonical order."""
    tests = item_tests(item)
    public = sorted((t for t in tests if t["tier"] == "public"), key=lambda t: t["ordinal"])
    return public, [t for t in tests if t["tier"] != "public"]


def parquet_bytes(rows: list[dict], schema) -> bytes:
    """Rows as one Parquet file; deterministic for a given pyarrow version (no timestamps,
    one row group, fixed compression)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pylist(rows, schema=schema)
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd", row_group_size=max(1, len(rows)))
    return sink.getvalue()


def zip_files(files: list[tuple[str, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in files:
            info = zipfile.ZipInfo(name, date_time=_ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, data)
    return buffer.getvalue()
