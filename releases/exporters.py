"""Exports of a frozen release. All of them carry hidden tests: serving them is for curators.

- ``lcb``: LiveCodeBench ``CodeGenerationProblem`` JSONL. Private tests are packed as
  LiveCodeBench publishes them, base64(zlib(pickle(json string))), so its own runner (and
  this project's ``lcb`` importer) reads them back. LiveCodeBench knows stdin and functional
  tests only: items with the assertion-program harness are left out and listed in the
  manifest (``export_manifest``).
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

Every export is deterministic: the same release gives byte-identical files (fixed key order,
fixed pickle protocol and zlib level, fixed zip timestamps).
"""

from __future__ import annotations

import base64
import io
import json
import pickle
import zipfile
import zlib
from collections.abc import Iterator

from evolution.exporters.jsonl import FORMAT as PROBLEM_FORMAT
from evolution.exporters.jsonl import sort_tests
from evolution.llm.parsing import ParseError, extract_code
from evolution.pipeline.difficulty import solver_messages
from evolution.sandbox import scoring

from .content import canonical_json
from .models import Release, ReleaseItem, ReleaseQuestion
from .selectors import release_changelog, release_counts, release_errata

FORMATS = {
    "lcb": ("application/x-ndjson", "lcb.jsonl"),
    "jsonl": ("application/x-ndjson", "benchforge.jsonl"),
    "hf": ("application/zip", "hf-dataset.zip"),
    "rl": ("application/x-ndjson", "rl.jsonl"),
}
RELEASE_FORMAT = "benchforge-release/1"
RL_LAMBDA = 0.1
# The grader's per-test wall-clock limit in Appendix D.3.
RL_TEST_TIME_LIMIT_S = 6.0
LCB_PICKLE_PROTOCOL = 4
_LCB_DIFFICULTIES = ("easy", "medium", "hard")
_LCB_PLATFORMS = ("leetcode", "codeforces", "atcoder")
_ZIP_TIME = (2020, 1, 1, 0, 0, 0)


def _dump(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n"


def _items(release: Release):
    return release.items.order_by("position").prefetch_related("tests")


def _tests(item: ReleaseItem) -> list[dict]:
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


def _split(item: ReleaseItem) -> tuple[list[dict], list[dict]]:
    """(public examples, hidden tests) in their canonical order."""
    tests = _tests(item)
    public = sorted((t for t in tests if t["tier"] == "public"), key=lambda t: t["ordinal"])
    return public, [t for t in tests if t["tier"] != "public"]


# --- LiveCodeBench ----------------------------------------------------------------------------


def lcb_pack_private(tests: list[dict]) -> str:
    """LiveCodeBench's packed form of private tests."""
    text = json.dumps(tests)
    return base64.b64encode(
        zlib.compress(pickle.dumps(text, protocol=LCB_PICKLE_PROTOCOL), 9)
    ).decode("ascii")


def lcb_record(item: ReleaseItem, release: Release) -> dict | None:
    """The item as a ``CodeGenerationProblem`` row, or None for an assertion-program item."""
    record = item.record
    harness = record["harness"]
    if harness not in ("stdio", "function"):
        return None
    if scoring.is_scored(record.get("comparison")):
        return None  # LiveCodeBench has no scored problems: a pass/fail row would mislead
    testtype = "stdin" if harness == "stdio" else "functional"
    public, hidden = _split(item)
    meta = record.get("metadata") or {}
    platform = meta.get("platform") if meta.get("platform") in _LCB_PLATFORMS else None
    # LiveCodeBench builds a LeetCode-style prompt for call-based problems.
    platform = platform or ("leetcode" if harness == "function" else "atcoder")
    difficulty = (item.difficulty or "").lower()
    when = item.created_on or release.frozen_at
    lcb_meta = {"func_name": record["entry_point"]} if harness == "function" else {}
    return {
        "question_title": record["title"],
        "question_content": record["statement"],
        "platform": platform,
        "question_id": item.public_id,
        "contest_id": f"{release.benchmark.slug}-v{release.version}",
        "contest_date": when.isoformat() if when else None,
        "starter_code": record.get("starter_code", ""),
        "difficulty": difficulty if difficulty in _LCB_DIFFICULTIES else "hard",
        "public_test_cases": json.dumps(
            [{"input": t["input"], "output": t["output"], "testtype": testtype} for t in public]
        ),
        "private_test_cases": lcb_pack_private(
            [{"input": t["input"], "output": t["output"], "testtype": testtype} for t in hidden]
        ),
        "metadata": json.dumps(lcb_meta),
    }


def export_lcb(release: Release) -> Iterator[str]:
    for item in _items(release):
        row = lcb_record(item, release)
        if row is not None:
            yield _dump(row)


def lcb_skipped(release: Release) -> list[str]:
    return [
        i.public_id
        for i in _items(release)
        if i.record["harness"] not in ("stdio", "function")
        or scoring.is_scored(i.record.get("comparison"))
    ]


# --- the project's JSONL with provenance --------------------------------------------------------


def release_line(item: ReleaseItem, release: Release) -> dict:
    problem = {
        "format": PROBLEM_FORMAT,
        **item.record,
        "problem_set": f"{release.benchmark.slug}-v{release.version}",
        "member": True,
        "tests": _tests(item),
    }
    return {
        "format": RELEASE_FORMAT,
        "benchmark": release.benchmark.name,
        "version": release.version,
        "release_hash": release.content_hash,
        "item_hash": item.content_hash,
        "position": item.position,
        "origin": item.origin,
        "difficulty": item.difficulty,
        "tags": item.tags,
        "created_on": item.created_on.isoformat() if item.created_on else None,
        "gate_passed": item.gate_passed,
        "curator_note": item.curator_note,
        "problem": problem,
        "provenance": item.provenance,
    }


def question_line(question: ReleaseQuestion, release: Release) -> dict:
    return {
        "format": RELEASE_FORMAT,
        "benchmark": release.benchmark.name,
        "version": release.version,
        "release_hash": release.content_hash,
        "item_hash": question.content_hash,
        "position": question.position,
        "kind": "reasoning",
        "curator_note": question.curator_note,
        "question": question.record,
        "provenance": question.provenance,
    }


def export_jsonl(release: Release) -> Iterator[str]:
    for item in _items(release):
        yield _dump(release_line(item, release))
    for question in release.questions.order_by("position"):
        yield _dump(question_line(question, release))


# --- Hugging Face ------------------------------------------------------------------------------


def hf_row(item: ReleaseItem) -> dict:
    record = item.record
    public, hidden = _split(item)
    return {
        "question_id": item.public_id,
        "title": record["title"],
        "statement": record["statement"],
        "harness": record["harness"],
        "entry_point": record["entry_point"],
        "starter_code": record.get("starter_code", ""),
        "time_limit_s": record["time_limit_s"],
        "memory_mb": record["memory_mb"],
        "origin": item.origin,
        "difficulty": item.difficulty,
        "tags": item.tags,
        "public_tests": json.dumps([{"input": t["input"], "output": t["output"]} for t in public]),
        "private_tests": json.dumps([{"input": t["input"], "output": t["output"]} for t in hidden]),
        "item_hash": item.content_hash,
        # Open-ended items carry their verifier and direction here ({"mode": "score", ...});
        # their tests' outputs are the baseline solution's, not expected answers.
        "comparison": json.dumps(record.get("comparison") or {}),
    }


def _size_category(n: int) -> str:
    return "n<1K" if n < 1000 else "1K<n<10K" if n < 10000 else "10K<n<100K"


def card_markdown(release: Release, *, yaml_header: bool = True) -> str:
    """The dataset card: YAML metadata for the Hugging Face hub, then a readable summary."""
    bench = release.benchmark
    counts = release_counts(release=release)
    log = release_changelog(release=release)
    errata = list(release_errata(release=release))
    rules = release.gate_rules or {}
    lines = []
    if yaml_header:
        lines += [
            "---",
            f"license: {bench.license}",
            f"pretty_name: {json.dumps(f'{bench.name} v{release.version}')}",
            "task_categories:",
            "- text-generation",
            "tags:",
            "- code",
            "- benchmark",
            "size_categories:",
            f"- {_size_category(counts['items'])}",
            "configs:",
            "- config_name: default",
            "  data_files:",
            "  - split: test",
            "    path: data/test.jsonl",
            "---",
            "",
        ]
    lines += [
        f"# {bench.name} v{release.version}",
        "",
        bench.description or "",
        "",
        release.notes or "",
        "",
        f"- Problems: {counts['problems']} ({counts['evolved']} evolved, "
        f"{counts['original']} original)",
        f"- Tests: {counts['tests']}",
        *(
            [f"- Reasoning questions: {counts['questions']} (reference answers not published)"]
            if counts["questions"]
            else []
        ),
        f"- Content hash (sha256): `{release.content_hash}`",
        f"- License: {bench.license}",
        "",
        "## Selection",
        "",
        f"Evolved problems: mean review quality >= {rules.get('min_quality')}, at least "
        f"{rules.get('min_reviews')} review(s), not judged invalid, panel pass@1 within "
        f"[{rules.get('min_pass_at_1')}, {rules.get('max_pass_at_1')}], no near-duplicate "
        f"(similarity < {rules.get('duplicate_threshold')}). Original problems supplement "
        f"the set when their pass@1 is at most {rules.get('original_max_pass_at_1')}.",
        "",
        "## Changes",
        "",
    ]
    if log.previous is None:
        lines.append("First release.")
    else:
        lines.append(
            f"Against v{log.previous.version}: {len(log.added)} added, {len(log.removed)} "
            f"removed, {len(log.changed)} changed, {log.unchanged} unchanged."
        )
    for e in log.fixed_errata:
        lines.append(f"- Fixes erratum on `{e.item_public_id}` ({e.kind}): {e.resolution}.")
    if errata:
        lines += ["", "## Errata", ""]
        for e in errata:
            fixed = f" Fixed in v{e.fixed_in.version}." if e.fixed_in_id else " Open."
            lines.append(f"- `{e.item_public_id}` ({e.kind}): {e.description}{fixed}")
    return "\n".join(lines).rstrip() + "\n"


def export_hf(release: Release) -> bytes:
    data = "".join(_dump(hf_row(item)) for item in _items(release))
    manifest = {
        "benchmark": release.benchmark.name,
        "version": release.version,
        "content_hash": release.content_hash,
        "items": release.item_count,
        "tests": release.test_count,
    }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, text in (
            ("README.md", card_markdown(release)),
            ("data/test.jsonl", data),
            ("release.json", canonical_json(manifest) + "\n"),
        ):
            info = zipfile.ZipInfo(name, date_time=_ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, text.encode("utf-8"))
    return buffer.getvalue()


# --- RL training --------------------------------------------------------------------------------

REWARD_SPEC = {
    "formula": "r = c + lambda * (f - 1)",
    "lambda": RL_LAMBDA,
    "c": "1 if the last fenced code block of the final answer passes every test, else 0",
    "f": "1 if the answer contains at least one fenced code block, else 0",
    "per_test_time_limit_s": RL_TEST_TIME_LIMIT_S,
    "range": [-RL_LAMBDA, 1.0],
}
SCORED_REWARD_SPEC = {
    "formula": "r = mean over tests of max(0, sigma (O(s) - O(b)) / max(O(s), O(b)))",
    "O": "the objective the comparison's verifier prints for an output (feasible outputs only)",
    "b": "the baseline solution, whose output is each test's stored output",
    "sigma": "+1 when comparison.direction is max, -1 when min",
    "zero": "crash, timeout, unparsable or infeasible output",
    "range": [0.0, 1.0],
}


def rl_reward(*, has_code_block: bool, all_tests_pass: bool) -> float:
    """BenchEvolver Appendix D.3: 1 for a correct program, 0 for a wrong but well-formatted
    one, -0.1 for an answer with no code block."""
    c = 1.0 if (all_tests_pass and has_code_block) else 0.0
    f = 1.0 if has_code_block else 0.0
    return c + RL_LAMBDA * (f - 1.0)


def rl_has_code_block(text: str) -> bool:
    try:
        return bool(extract_code(text, language="python"))
    except ParseError:
        return False


def rl_record(item: ReleaseItem) -> dict:
    record = item.record
    messages, template = solver_messages(
        statement=record["statement"], harness=record["harness"], entry_point=record["entry_point"]
    )
    public, hidden = _split(item)
    return {
        "id": item.public_id,
        "prompt": messages,
        "prompt_template": f"{template.name}@{template.version}",
        "harness": record["harness"],
        "entry_point": record["entry_point"],
        "time_limit_s": record["time_limit_s"],
        "memory_mb": record["memory_mb"],
        "comparison": record.get("comparison") or {},
        "tests": [{"input": t["input"], "output": t["output"]} for t in public + hidden],
        # An open-ended item's reward is its verifier's score (evolution.sandbox.scoring).
        "reward": SCORED_REWARD_SPEC
        if scoring.is_scored(record.get("comparison"))
        else REWARD_SPEC,
        "origin": item.origin,
        "item_hash": item.content_hash,
    }


def export_rl(release: Release) -> Iterator[str]:
    for item in _items(release):
        yield _dump(rl_record(item))


def export_bytes(release: Release, fmt: str) -> bytes:
    """The whole export in ``fmt`` (one of FORMATS) as bytes."""
    if fmt == "hf":
        return export_hf(release)
    writers = {"lcb": export_lcb, "jsonl": export_jsonl, "rl": export_rl}
    if fmt not in writers:
        raise ValueError(f"unknown export format {fmt!r}; choose one of {', '.join(FORMATS)}")
    return "".join(writers[fmt](release)).encode("utf-8")


def export_manifest(release: Release) -> dict:
    return {
        "benchmark": release.benchmark.name,
        "version": release.version,
        "content_hash": release.content_hash,
        "formats": sorted(FORMATS),
        "lcb_skipped_assert_items": lcb_skipped(release),
        # Reasoning questions are in the jsonl export only.
        "questions_only_in_jsonl": release.questions.count(),
    }
