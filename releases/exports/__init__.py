"""Exports of a frozen release. All of them carry hidden tests: serving them is for curators.

One module per format (``lcb``, ``jsonl``, ``hf``, ``rl`` and ``rl_parquet``, ``sft``) on what
they share (``rows``); this package dispatches by format name.

- ``lcb``: LiveCodeBench ``CodeGenerationProblem`` JSONL. Private tests are packed as
  LiveCodeBench publishes them, base64(zlib(pickle(json string))), so its own runner (and
  this project's ``lcb`` importer) reads them back. Call-based inputs are one JSON value per
  argument, newline-joined, no trailing newline, outputs one JSON value, and the row's
  ``starter_code`` is ``class Solution`` with the method ``metadata.func_name``: what its
  grader (``lcb_runner/evaluation/testing_util.py``) parses. Items it cannot grade faithfully
  (assertion-program harness, scored problems, tolerant or checker comparisons) are left out
  and listed with the reason in the manifest (``export_manifest``).
- ``lcb_solutions``: the reference solutions as LiveCodeBench's custom-evaluator file, a JSON
  list of ``{"question_id", "code_list"}``; call-based references gain a ``class Solution``.
- ``jsonl``: ``benchforge-release/1`` lines, one per item: the ``benchforge-problem/1``
  record under "problem" (importable as is) plus full provenance (lineage, validation
  ledger, panel results, review aggregate, gate outcome); then one line per reasoning
  question: the ``benchforge-question/1`` record (with the reference answer) under
  "question" plus its provenance. The other formats are for coding problems only: the
  manifest counts the questions they leave out.
- ``hf``: a Hugging Face datasets layout as a zip: ``data/test.jsonl`` and a ``README.md``
  dataset card with YAML metadata (license, counts, configs).
- ``rl``: prompts, tests and the reward spec of BenchEvolver Appendix D.3,
  r = c + lambda (f - 1) with lambda = 0.1.
- ``rl_parquet``: the same as Parquet rows in the shape RL trainers read (``rl_parquet``).

Every export is deterministic: the same release gives byte-identical files (fixed key order,
fixed pickle protocol and zlib level, fixed zip timestamps).
"""

from __future__ import annotations

from evolution.sandbox import scoring

from .. import content
from ..models import Release
from .hf import card_markdown, export_hf
from .jsonl import export_jsonl
from .lcb import export_lcb, export_lcb_solutions, lcb_skipped_reasons
from .rl import export_rl
from .rl_parquet import export_rl_parquet
from .rows import release_items
from .sft import export_sft

__all__ = ["FORMATS", "card_markdown", "export_bytes", "export_jsonl", "export_manifest"]

FORMATS = {
    "lcb": ("application/x-ndjson", "lcb.jsonl"),
    "lcb_solutions": ("application/json", "lcb-solutions.json"),
    "jsonl": ("application/x-ndjson", "benchforge.jsonl"),
    "hf": ("application/zip", "hf-dataset.zip"),
    "rl": ("application/x-ndjson", "rl.jsonl"),
    "rl_parquet": ("application/vnd.apache.parquet", "rl.parquet"),
    "sft": ("application/x-ndjson", "sft.jsonl"),
}


def export_bytes(release: Release, fmt: str) -> bytes:
    """The whole export in ``fmt`` (one of FORMATS) as bytes."""
    if fmt == "hf":
        return export_hf(release)
    if fmt == "lcb_solutions":
        return export_lcb_solutions(release)
    if fmt == "rl_parquet":
        return export_rl_parquet(release)
    writers = {"lcb": export_lcb, "jsonl": export_jsonl, "rl": export_rl, "sft": export_sft}
    if fmt not in writers:
        raise ValueError(f"unknown export format {fmt!r}; choose one of {', '.join(FORMATS)}")
    return "".join(writers[fmt](release)).encode("utf-8")


def export_manifest(release: Release) -> dict:
    return {
        "benchmark": release.benchmark.name,
        "version": release.version,
        "content_hash": release.content_hash,
        "hash_format": content.release_hash_format(release),
        "formats": sorted(FORMATS),
        "lcb_skipped_assert_items": [
            i.public_id
            for i in release_items(release)
            if i.record["harness"] not in ("stdio", "function")
            or scoring.is_scored(i.record.get("comparison"))
        ],
        # Everything the lcb export leaves out, with the reason.
        "lcb_skipped": lcb_skipped_reasons(release),
        # Reasoning questions are in the jsonl export only.
        "questions_only_in_jsonl": release.questions.count(),
    }
