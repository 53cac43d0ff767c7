"""Large test inputs and voted outputs live in files, not in the task row.

A stress test at the document's sizes (hundreds of thousands of numbers, several MB) would make
``SynthTask.tests`` and ``SynthTask.verification`` rows of many MB that every page and API read
loads whole. A text up to ``INLINE_CHARS`` stays inline (``"input"`` / the label); a larger one
is written as soon as it arrives to ``$BENCHFORGE_DATA_DIR/xcoder/c<campaign>/t<task index>/``
and the row keeps ``{"file", "bytes", "sha256", "preview"}`` (path relative to the data
directory). Readers take texts through ``input_of`` / ``text_of`` one at a time.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from django.conf import settings

INLINE_CHARS = 64 * 1024
PREVIEW_CHARS = 200


def task_dir(campaign_id: int, task_index: int) -> Path:
    return Path(settings.DATA_DIR) / "xcoder" / f"c{campaign_id}" / f"t{task_index}"


def keep(campaign_id: int, task_index: int, name: str, text: str) -> dict:
    """``{"input": text}`` for a small text; else the text written to the task's directory as
    ``name`` and ``{"file", "bytes", "sha256", "preview"}``."""
    if len(text) <= INLINE_CHARS:
        return {"input": text}
    data = text.encode("utf-8")
    directory = task_dir(campaign_id, task_index)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    partial = path.with_name(path.name + ".part")
    partial.write_bytes(data)
    os.replace(partial, path)
    return {
        "file": str(path.relative_to(settings.DATA_DIR)),
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "preview": text[:PREVIEW_CHARS],
    }


def _read(entry: dict) -> str:
    return (Path(settings.DATA_DIR) / entry["file"]).read_text(encoding="utf-8")


def input_of(test: dict) -> str:
    """A stored test's input text (inline or from its file)."""
    return test["input"] if "input" in test else _read(test)


def size_of(test: dict) -> int:
    """A stored test's input size in bytes, without reading a file."""
    return test["bytes"] if "file" in test else len(test["input"].encode("utf-8"))


def digest_of(test: dict) -> str:
    """A stored test's input identity (sha256), without reading a file."""
    if "file" in test:
        return test["sha256"]
    return hashlib.sha256(test["input"].encode("utf-8")).hexdigest()


def text_of(value) -> str | None:
    """A voted label as stored in the verification record: a string, None, or a file entry."""
    if value is None or isinstance(value, str):
        return value
    return _read(value)


def shown(value) -> str | None:
    """What a page shows of an inline text or a file entry."""
    if value is None or isinstance(value, str):
        return value
    return f"{value['preview']}… ({value['bytes']:,} bytes in {value['file']})"
