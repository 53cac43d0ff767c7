"""Exports of a frozen release. All of them carry hidden tests: serving them is for curators.

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
- ``rl_parquet``: the same as Parquet rows in the shape RL trainers read (``rl_export``).

Every export is deterministic: the same release gives byte-identical files (fixed key order,
fixed pickle protocol and zlib level, fixed zip timestamps).
"""

from __future__ import annotations

import ast
import base64
import copy
import io
import json
import pickle
import zipfile
import zlib
from collections.abc import Iterator

from evolution.exporters.jsonl import FORMAT as PROBLEM_FORMAT
from evolution.exporters.jsonl import sort_tests
from evolution.judging.difficulty import solver_messages
from evolution.llm.parsing import ParseError, extract_code
from evolution.sandbox import scoring

from . import blinding, content
from .content import canonical_json
from .models import Release, ReleaseItem, ReleaseQuestion
from .selectors import release_changelog, release_counts, release_errata

FORMATS = {
    "lcb": ("application/x-ndjson", "lcb.jsonl"),
    "lcb_solutions": ("application/json", "lcb-solutions.json"),
    "jsonl": ("application/x-ndjson", "benchforge.jsonl"),
    "hf": ("application/zip", "hf-dataset.zip"),
    "rl": ("application/x-ndjson", "rl.jsonl"),
    "rl_parquet": ("application/vnd.apache.parquet", "rl.parquet"),
    "sft": ("application/x-ndjson", "sft.jsonl"),
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


def lcb_function_input(text: str) -> str:
    """A call-based test input as LiveCodeBench stores it: one JSON value per argument,
    newline-joined, no trailing newline. Its grader splits on every newline and parses each
    piece, so a trailing newline or a blank line would be a runtime error on every test."""
    return "\n".join(json.dumps(json.loads(line)) for line in text.split("\n") if line.strip())


def lcb_function_output(text: str) -> str:
    """The expected return value as one JSON document (compared with ``==`` after parsing)."""
    return json.dumps(json.loads(text))


def _lcb_exclusion(record: dict, item: ReleaseItem | None = None) -> str | None:
    """Why LiveCodeBench cannot grade this item faithfully, or None."""
    if record["harness"] not in ("stdio", "function"):
        return "assertion-program harness: LiveCodeBench knows stdin and functional tests only"
    comparison = record.get("comparison") or {}
    if scoring.is_scored(comparison):
        return "scored (open-ended) problem: LiveCodeBench grades pass/fail only"
    mode = comparison.get("mode") or "exact"
    if mode != "exact" or comparison.get("checker"):
        # Its stdin grader compares tokens as exact Decimals and its call-based grader with
        # ``==``: a tolerance, an order-free comparison or a checker would misgrade.
        return f"comparison {mode!r}{' with a checker' if comparison.get('checker') else ''}"
    if item is not None and record["harness"] == "function":
        for test in _tests(item):
            try:
                lcb_function_input(test["input"])
                lcb_function_output(test["output"])
            except ValueError:
                return f"test {test['tier']}/{test['ordinal']} is not one JSON value per line"
    return None


def _signature(code: str, name: str) -> str | None:
    """The parameter list (annotations kept) of function ``name`` defined in ``code``."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
            args = node.args
            if args.args and args.args[0].arg == "self":
                args = copy.copy(args)
                args.args = args.args[1:]
            returns = f" -> {ast.unparse(node.returns)}" if node.returns else ""
            return f"({ast.unparse(args)}){returns}"
    return None


def lcb_starter_code(record: dict) -> str:
    """LeetCode-style starter code: ``class Solution`` with the method ``func_name``.

    LiveCodeBench's call-based grader instantiates ``Solution`` when the program defines it,
    and its prompts ask for the starter code completed, so a call-based row must carry one."""
    starter = record.get("starter_code") or ""
    if "class Solution" in starter:
        return starter
    name = record["entry_point"]
    signature = (
        _signature(starter, name)
        or _signature(record.get("reference_solution") or "", name)
        or "(*args)"
    )
    params = "(self" + (signature[1:] if signature.startswith("()") else ", " + signature[1:])
    return f"class Solution:\n    def {name}{params}:\n        "


def lcb_solution_code(record: dict) -> str:
    """The reference solution in the form LiveCodeBench grades.

    A stdin program is kept as is. A call-based module keeps its functions and gains a
    ``class Solution`` whose method delegates to the module's function of the same name:
    the grader runs the whole program, then calls ``Solution().<func_name>(*args)``."""
    code = record.get("reference_solution") or ""
    if record["harness"] != "function" or "class Solution" in code:
        return code
    name = record["entry_point"]
    return (
        code.rstrip("\n")
        + "\n\n\nclass Solution:\n"
        + f"    def {name}(self, *args, **kwargs):\n"
        + f"        return {name}(*args, **kwargs)\n"
    )


def lcb_record(item: ReleaseItem, release: Release) -> dict | None:
    """The item as a ``CodeGenerationProblem`` row, or None when LiveCodeBench cannot grade
    it (``lcb_skipped`` says why)."""
    record = item.record
    if _lcb_exclusion(record, item) is not None:
        return None
    harness = record["harness"]
    testtype = "stdin" if harness == "stdio" else "functional"
    public, hidden = _split(item)
    meta = record.get("metadata") or {}
    platform = meta.get("platform") if meta.get("platform") in _LCB_PLATFORMS else None
    # LiveCodeBench builds a LeetCode-style prompt for call-based problems.
    platform = platform or ("leetcode" if harness == "function" else "atcoder")
    difficulty = (item.difficulty or "").lower()
    when = item.created_on or release.frozen_at
    if harness == "function":
        lcb_meta = {"func_name": record["entry_point"]}
        starter = lcb_starter_code(record)

        def encode(t):
            return {
                "input": lcb_function_input(t["input"]),
                "output": lcb_function_output(t["output"]),
                "testtype": testtype,
            }
    else:
        lcb_meta, starter = {}, record.get("starter_code", "")

        def encode(t):
            return {"input": t["input"], "output": t["output"], "testtype": testtype}

    return {
        "question_title": record["title"],
        "question_content": record["statement"],
        "platform": platform,
        "question_id": item.public_id,
        "contest_id": f"{release.benchmark.slug}-v{release.version}",
        "contest_date": when.isoformat() if when else None,
        "starter_code": starter,
        "difficulty": difficulty if difficulty in _LCB_DIFFICULTIES else "hard",
        "public_test_cases": json.dumps([encode(t) for t in public]),
        "private_test_cases": lcb_pack_private([encode(t) for t in hidden]),
        "metadata": json.dumps(lcb_meta),
    }


def export_lcb(release: Release) -> Iterator[str]:
    for item in _items(release):
        row = lcb_record(item, release)
        if row is not None:
            yield _dump(row)


def export_lcb_solutions(release: Release) -> bytes:
    """The reference solutions as LiveCodeBench's custom-evaluator output file
    (``--custom_output_file``): a JSON list of ``{"question_id", "code_list"}``, one entry per
    row of the ``lcb`` export (items without a reference have an empty ``code_list``)."""
    rows = [
        {"question_id": item.public_id, "code_list": [lcb_solution_code(item.record)]}
        if item.record.get("reference_solution")
        else {"question_id": item.public_id, "code_list": []}
        for item in _items(release)
        if _lcb_exclusion(item.record, item) is None
    ]
    return (json.dumps(rows, ensure_ascii=False, indent=1) + "\n").encode("utf-8")


def lcb_skipped(release: Release) -> list[str]:
    """Public ids of the items left out of the ``lcb`` export."""
    return [i.public_id for i in _items(release) if _lcb_exclusion(i.record, i) is not None]


def lcb_skipped_reasons(release: Release) -> dict[str, str]:
    return {
        i.public_id: reason
        for i in _items(release)
        if (reason := _lcb_exclusion(i.record, i)) is not None
    }


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
        **_hash_fields(release),
        "item_hash": item.content_hash,
        **content.item_listing(item),
        "problem": problem,
    }


def _hash_fields(release: Release) -> dict:
    """What a line needs to recompute the release's hash (content.release_hash_from_lines):
    nothing more for a format-1 release; the format and the release's identity for format 2."""
    hash_format = content.release_hash_format(release)
    if hash_format == content.FORMAT_V1:
        return {}
    cached = getattr(release, "_identity_for_export", None)
    if cached is None:
        cached = content.release_identity(release)
        release._identity_for_export = cached
    return {"hash_format": hash_format, "release_identity": cached}


def question_line(question: ReleaseQuestion, release: Release) -> dict:
    return {
        "format": RELEASE_FORMAT,
        "benchmark": release.benchmark.name,
        "version": release.version,
        "release_hash": release.content_hash,
        **_hash_fields(release),
        "item_hash": question.content_hash,
        **content.question_listing(question),
        "question": question.record,
    }


def export_jsonl(release: Release) -> Iterator[str]:
    for item in _items(release):
        yield _dump(release_line(item, release))
    for question in release.questions.order_by("position"):
        yield _dump(question_line(question, release))


# --- Hugging Face ------------------------------------------------------------------------------


# The Hugging Face features of a row, in column order: (name, Hub type). The card's
# ``dataset_info`` and the Parquet schema are both built from this list.
HF_FEATURES = (
    ("question_id", "string"),
    ("title", "string"),
    ("statement", "string"),
    ("harness", "string"),
    ("entry_point", "string"),
    ("starter_code", "string"),
    ("time_limit_s", "float64"),
    ("memory_mb", "int64"),
    ("origin", "string"),
    ("difficulty", "string"),
    ("tags", "list:string"),
    ("public_tests", "string"),
    ("private_tests", "string"),
    ("item_hash", "string"),
    ("comparison", "string"),
)
HF_SPLIT = "test"


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
        "time_limit_s": float(record["time_limit_s"]),
        "memory_mb": int(record["memory_mb"]),
        "origin": item.origin,
        "difficulty": item.difficulty or "",
        "tags": [str(t) for t in item.tags or []],
        "public_tests": json.dumps([{"input": t["input"], "output": t["output"]} for t in public]),
        "private_tests": json.dumps([{"input": t["input"], "output": t["output"]} for t in hidden]),
        "item_hash": item.content_hash,
        # Open-ended items carry their verifier and direction here ({"mode": "score", ...});
        # their tests' outputs are the baseline solution's, not expected answers.
        "comparison": json.dumps(record.get("comparison") or {}),
    }


def _yaml_features(features) -> list[str]:
    lines = []
    for name, kind in features:
        lines.append(f"  - name: {name}")
        if kind.startswith("list:"):
            lines.append(f"    list: {kind.split(':', 1)[1]}")
        else:
            lines.append(f"    dtype: {kind}")
    return lines


def _size_category(n: int) -> str:
    return "n<1K" if n < 1000 else "1K<n<10K" if n < 10000 else "10K<n<100K"


def card_markdown(
    release: Release, *, yaml_header: bool = True, withhold_origin: bool = False
) -> str:
    """The dataset card: YAML metadata for the Hugging Face hub, then a readable summary.
    ``withhold_origin``: the public card while a problem of the release is under blind review
    (``releases.blinding``) says so instead of counting evolved and original problems."""
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
            "dataset_info:",
            "  features:",
            *_yaml_features(HF_FEATURES),
            "  splits:",
            f"  - name: {HF_SPLIT}",
            f"    num_examples: {release.items.count()}",
            "configs:",
            "- config_name: default",
            "  data_files:",
            f"  - split: {HF_SPLIT}",
            f"    path: data/{HF_SPLIT}.parquet",
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
        f"- Problems: {counts['problems']} ({blinding.COUNTS_WITHHELD})"
        if withhold_origin
        else f"- Problems: {counts['problems']} ({counts['evolved']} evolved, "
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
        "## Contamination screen",
        "",
        _screen_statement(release, rules, withhold_origin=withhold_origin),
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


def _screen_statement(release: Release, rules: dict, *, withhold_origin: bool) -> str:
    """How the release's problems were screened against the public corpora: the corpora and
    their sizes, the method, the thresholds, the day (evolution.screening, docs/screening.md),
    from the screens its items froze with."""
    # The provenances alone (a model instance with only them would load each item's release
    # id again, one query per item).
    provenances = [
        provenance
        for provenance in release.items.order_by("position").values_list("provenance", flat=True)
        if (provenance or {}).get("screen")
    ]
    screens = [p["screen"] for p in provenances]
    # Items a curator included although a screen rule failed (the gate's verdict is frozen).
    over = sum(
        any(
            r["rule"] in ("public_similarity", "public_similarity_before") and not r["passed"]
            for r in (p.get("gate") or {}).get("rules") or []
        )
        for p in provenances
    )
    if not screens:
        return "No evolved or synthesized problem in this release was screened."
    index = max((s.get("index") or {} for s in screens), key=lambda i: i.get("problems") or 0)
    if not index.get("problems"):
        return (
            "Not screened: no public corpus was indexed when the gate ran, so nothing says "
            "whether a problem recalls a public one."
        )
    run = release.gate_runs.order_by("-created_at", "-id").first()
    day = (run.created_at if run else release.frozen_at or release.created_at).date()
    corpora = ", ".join(
        f"{name} {c['problems']}"
        + (f" (dated {c['first']} to {c['last']})" if c.get("first") else "")
        # Sorted here: a JSON column (PostgreSQL's jsonb) keeps its own key order.
        for name, c in sorted((index.get("corpora") or {}).items())
    )
    held = []
    if rules.get("max_public_similarity") is not None:
        held.append(
            f"at similarity {rules['max_public_similarity']} or above to any public problem"
        )
    if rules.get("max_similarity_before") is not None:
        held.append(
            f"at {rules['max_similarity_before']} or above to a public problem dated before "
            f"{rules['similarity_before_date']} (undated ones counted as older)"
        )
    if held:
        rule = "Evolved and synthesized problems were held back " + "; and ".join(held) + "."
        if over:
            rule += (
                " Some problems above it were included by a curator's decision, with the "
                "reason on the item."
                if withhold_origin
                else f" {over} problem{'s' if over != 1 else ''} above it "
                f"{'were' if over != 1 else 'was'} included by a curator's decision, with "
                "the reason on the item."
            )
    else:
        rule = (
            "No maximum similarity was set: the gate recorded each problem's nearest public "
            "problem without holding any back."
        )
    highest = max(s.get("max_similarity") or 0.0 for s in screens)
    count = "" if withhold_origin else f" over its {len(screens)} screened problems"
    return (
        f"Screened on {day.isoformat()} against {index['problems']} public problems ({corpora}): "
        f"{index.get('method', 'MinHash similarity')}. {rule} Highest similarity to a public "
        f"problem{count}: {highest:.2f}. Not caught: a problem recalled from a corpus that was "
        "not indexed, or re-themed with other wording and a differently written program."
    )


def _parquet(rows: list[dict], schema) -> bytes:
    """Rows as one Parquet file; deterministic for a given pyarrow version (no timestamps,
    one row group, fixed compression)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pylist(rows, schema=schema)
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd", row_group_size=max(1, len(rows)))
    return sink.getvalue()


def _arrow_type(kind: str):
    import pyarrow as pa

    if kind.startswith("list:"):
        return pa.list_(_arrow_type(kind.split(":", 1)[1]))
    return {"string": pa.string(), "float64": pa.float64(), "int64": pa.int64()}[kind]


def hf_schema():
    import pyarrow as pa

    features = {}
    for name, kind in HF_FEATURES:
        features[name] = (
            {"feature": {"dtype": kind.split(":", 1)[1], "_type": "Value"}, "_type": "List"}
            if kind.startswith("list:")
            else {"dtype": kind, "_type": "Value"}
        )
    # ``datasets`` reads its features from this key when it opens the file on its own.
    meta = {b"huggingface": json.dumps({"info": {"features": features}}).encode()}
    return pa.schema([(name, _arrow_type(kind)) for name, kind in HF_FEATURES], metadata=meta)


def _zip(files: list[tuple[str, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in files:
            info = zipfile.ZipInfo(name, date_time=_ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, data)
    return buffer.getvalue()


def export_hf(release: Release) -> bytes:
    rows = [hf_row(item) for item in _items(release)]
    data = "".join(_dump(row) for row in rows)
    manifest = {
        "benchmark": release.benchmark.name,
        "version": release.version,
        "content_hash": release.content_hash,
        "hash_format": content.release_hash_format(release),
        "items": release.item_count,
        "tests": release.test_count,
    }
    return _zip(
        [
            ("README.md", card_markdown(release).encode("utf-8")),
            (f"data/{HF_SPLIT}.jsonl", data.encode("utf-8")),
            (f"data/{HF_SPLIT}.parquet", _parquet(rows, hf_schema())),
            ("release.json", (canonical_json(manifest) + "\n").encode("utf-8")),
        ]
    )


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

# X-Coder / SynthSmith appendix A.2, eq. (6): a continuous pass-fraction reward, no format term.
PASS_FRACTION_REWARD_SPEC = {
    "name": "pass_fraction",
    "source": "X-Coder / SynthSmith appendix A.2, eq. (6)",
    "formula": "R = -2 if no code is extracted or it fails to compile; 0 if it compiles but "
    "passes no test; 5.0 * passed / total otherwise",
    "no_code": -2.0,
    "scale": 5.0,
    "per_test_time_limit_s": RL_TEST_TIME_LIMIT_S,
    "range": [-2.0, 5.0],
}
# The reward of an item made by a method whose document defines its own (the record's
# ``method``); every other item keeps REWARD_SPEC (BenchEvolver D.3).
RL_REWARD_BY_METHOD = {"xcoder": PASS_FRACTION_REWARD_SPEC}


def rl_pass_fraction_reward(*, has_code: bool, compiles: bool, passed: int, total: int) -> float:
    """A.2 eq. (6): -2 without code or when it does not compile, else 5.0 * passed / total."""
    if not has_code or not compiles:
        return PASS_FRACTION_REWARD_SPEC["no_code"]
    if passed <= 0 or total <= 0:
        return 0.0
    return PASS_FRACTION_REWARD_SPEC["scale"] * passed / total


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
        else RL_REWARD_BY_METHOD.get(record.get("method") or "", REWARD_SPEC),
        "origin": item.origin,
        "item_hash": item.content_hash,
    }


def export_rl(release: Release) -> Iterator[str]:
    for item in _items(release):
        yield _dump(rl_record(item))


# --- SFT pairs ------------------------------------------------------------------------------------

SFT_FORMAT = "benchforge-sft/1"


def sft_response(reasoning: str, code: str) -> str:
    """The assistant turn of an SFT pair [q, A_golden]: the reasoning in a think block, then
    the final code in one fenced block (X-Coder's C.1 format, the one its solvers answer in);
    the code alone when no reasoning was kept."""
    fenced = "```python\n" + code.rstrip("\n") + "\n```"
    if not reasoning:
        return fenced
    return f"<think>\n{reasoning.strip()}\n</think>\n\n{fenced}"


def sft_record(item: ReleaseItem) -> dict | None:
    """One SFT pair: the solver prompt and the reference solution as the answer, with the
    golden candidate's chain of thought for items whose method kept it (X-Coder:
    ``metadata.golden_reasoning``, the think block of the golden candidate's real answer).
    None for an item without a reference solution."""
    record = item.record
    code = record.get("reference_solution") or ""
    if not code.strip():
        return None
    messages, template = solver_messages(
        statement=record["statement"], harness=record["harness"], entry_point=record["entry_point"]
    )
    reasoning = (record.get("metadata") or {}).get("golden_reasoning") or ""
    return {
        "format": SFT_FORMAT,
        "id": item.public_id,
        "messages": [*messages, {"role": "assistant", "content": sft_response(reasoning, code)}],
        "prompt_template": f"{template.name}@{template.version}",
        "reasoning": reasoning or None,
        "reasoning_source": "golden candidate's <think> block" if reasoning else None,
        "origin": item.origin,
        "item_hash": item.content_hash,
    }


def export_sft(release: Release) -> Iterator[str]:
    for item in _items(release):
        line = sft_record(item)
        if line is not None:
            yield _dump(line)


def export_bytes(release: Release, fmt: str) -> bytes:
    """The whole export in ``fmt`` (one of FORMATS) as bytes."""
    if fmt == "hf":
        return export_hf(release)
    if fmt == "lcb_solutions":
        return export_lcb_solutions(release)
    if fmt == "rl_parquet":
        from .rl_export import export_rl_parquet  # it builds on this module's rows

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
            for i in _items(release)
            if i.record["harness"] not in ("stdio", "function")
            or scoring.is_scored(i.record.get("comparison"))
        ],
        # Everything the lcb export leaves out, with the reason.
        "lcb_skipped": lcb_skipped_reasons(release),
        # Reasoning questions are in the jsonl export only.
        "questions_only_in_jsonl": release.questions.count(),
    }
