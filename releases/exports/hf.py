"""The Hugging Face datasets layout (JSONL and Parquet under ``data/``) and its dataset card,
which is also the public release page's text."""

from __future__ import annotations

import json

from .. import blinding, content
from ..content import canonical_json
from ..models import Release, ReleaseItem
from ..selectors import release_changelog, release_counts, release_errata
from .rows import dump_line, parquet_bytes, release_items, split_tests, zip_files

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
    public, hidden = split_tests(item)
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


def export_hf(release: Release) -> bytes:
    rows = [hf_row(item) for item in release_items(release)]
    data = "".join(dump_line(row) for row in rows)
    manifest = {
        "benchmark": release.benchmark.name,
        "version": release.version,
        "content_hash": release.content_hash,
        "hash_format": content.release_hash_format(release),
        "items": release.item_count,
        "tests": release.test_count,
    }
    return zip_files(
        [
            ("README.md", card_markdown(release).encode("utf-8")),
            (f"data/{HF_SPLIT}.jsonl", data.encode("utf-8")),
            (f"data/{HF_SPLIT}.parquet", parquet_bytes(rows, hf_schema())),
            ("release.json", (canonical_json(manifest) + "\n").encode("utf-8")),
        ]
    )
