"""Content hash and exports: reproducible, re-importable, carrying what each consumer needs."""

from __future__ import annotations

import base64
import io
import json
import pickle
import zipfile
import zlib

import pytest

from evolution.importers import import_seeds
from evolution.models import Problem, TestCase
from releases import content, exports, services
from releases.exports import rl
from releases.selectors import release_changelog
from tests.support.gate_rules import SELECTION_TIME_OK


def test_the_hash_is_reproducible_across_two_exports(frozen):
    _, release = frozen
    first = {fmt: exports.export_bytes(release, fmt) for fmt in exports.FORMATS}
    second = {fmt: exports.export_bytes(release, fmt) for fmt in exports.FORMATS}
    assert first == second
    lines = first["jsonl"].decode().splitlines()
    assert content.release_hash_from_lines(lines) == release.content_hash
    assert all(json.loads(line)["release_hash"] == release.content_hash for line in lines)
    assert len(release.content_hash) == 64


def item_hashes(release) -> list:
    return sorted(release.items.values_list("public_id", "content_hash"))


def test_same_content_gives_the_same_item_hashes_and_a_changed_test_a_new_one(frozen):
    """Items are compared by their own hashes (problem and tests); the release's hash also
    covers its version and everything else its card shows, so the next version's differs."""
    world, release = frozen
    same = services.release_next(release=release)
    services.gate_run_create(release=same)
    same = services.release_freeze(release=same)
    assert item_hashes(same) == item_hashes(release)
    assert same.content_hash != release.content_hash  # v1.0.1 is not v1.0.0
    assert release_changelog(release=same).unchanged == release.item_count

    problem = world.problem("E-OK")
    test = problem.tests.get(tier="large")
    test.output = "1\n"
    test.save()
    changed = services.release_next(release=same)
    services.gate_run_create(release=changed)
    changed = services.release_freeze(release=changed)
    assert changed.content_hash != release.content_hash
    assert item_hashes(changed) != item_hashes(same)
    log = release_changelog(release=changed)
    assert [i.public_id for i in log.changed] == [problem.public_id]
    assert log.added == [] and log.removed == []


def test_the_livecodebench_export_reimports_with_identical_tests(frozen):
    _, release = frozen
    text = exports.export_bytes(release, "lcb").decode()
    rows = [json.loads(line) for line in text.splitlines()]
    assert len(rows) == release.item_count  # every crafted item is stdin/stdout
    # LiveCodeBench's own packing: base64(zlib(pickle(json string))).
    unpacked = json.loads(
        pickle.loads(zlib.decompress(base64.b64decode(rows[0]["private_test_cases"])))
    )
    assert unpacked and unpacked[0]["testtype"] == "stdin"

    report = import_seeds(source="lcb", content=text, set_name="reimported")
    assert report.created == release.item_count
    for item in release.items.all():
        back = Problem.objects.get(origin_dataset="livecodebench", origin_id=item.public_id)
        assert back.statement == item.record["statement"]
        assert back.harness == "stdio"
        mine = sorted(item.tests.all(), key=lambda t: (t.tier != "public", t.tier, t.ordinal))
        theirs = sorted(back.tests.all(), key=lambda t: (t.tier != "public", t.ordinal))
        assert [(t.input, t.output, t.hidden) for t in mine] == [
            (t.input, t.output, t.hidden) for t in theirs
        ]


def test_the_livecodebench_export_carries_call_based_problems_and_skips_assert_ones(db):
    from tests.releases.builders import crafted_world

    world = crafted_world()
    fn = world.problem("E-OK")
    fn.harness, fn.entry_point = "function", "add"
    fn.save()
    TestCase.objects.filter(problem=fn).delete()
    TestCase.objects.create(
        problem=fn, tier="public", ordinal=0, hidden=False, input_text="1\n2", output_text="3"
    )
    TestCase.objects.create(
        problem=fn, tier="small", ordinal=0, hidden=True, input_text="5\n6", output_text="11"
    )
    asserted = world.problem("E-OVERRIDE")
    asserted.harness, asserted.entry_point = "assert", "add"
    asserted.save()
    bench = services.benchmark_create(default_rules=SELECTION_TIME_OK, name="Mixed")
    release = services.release_create(benchmark=bench, campaigns=[world.campaign])
    services.gate_run_create(release=release)
    release = services.release_freeze(release=release)
    text = exports.export_bytes(release, "lcb").decode()
    rows = {json.loads(line)["question_id"]: json.loads(line) for line in text.splitlines()}
    assert asserted.public_id not in rows
    assert exports.export_manifest(release)["lcb_skipped_assert_items"] == [asserted.public_id]
    row = rows[fn.public_id]
    assert json.loads(row["metadata"]) == {"func_name": "add"}
    assert json.loads(row["public_test_cases"])[0]["testtype"] == "functional"
    import_seeds(source="lcb", content=text, set_name="mixed-back")
    back = Problem.objects.get(origin_dataset="livecodebench", origin_id=fn.public_id)
    assert back.harness == "function" and back.entry_point == "add"
    assert sorted((t.input, t.output) for t in back.tests.all()) == [("1\n2", "3"), ("5\n6", "11")]


def test_the_project_jsonl_carries_full_provenance_and_importable_problems(frozen):
    world, release = frozen
    lines = exports.export_bytes(release, "jsonl").decode().splitlines()
    rows = {json.loads(line)["problem"]["public_id"]: json.loads(line) for line in lines}
    ok = rows[world.problem("E-OK").public_id]
    assert ok["format"] == "benchforge-release/1" and ok["version"] == "1.0.0"
    prov = ok["provenance"]
    assert prov["lineage"]["chain"] == [world.problem("S1").public_id, ok["problem"]["public_id"]]
    assert prov["validation_ledger"] and prov["panel_results"]["solver-a"]["passes"] == 3
    assert prov["review"]["n_reviews"] == 2 and prov["review"]["final"]["quality"] == 3.5
    assert prov["gate"]["passed"] is True
    assert ok["problem"]["format"] == "benchforge-problem/1"
    assert any(t["hidden"] for t in ok["problem"]["tests"])
    # The inner record is a valid benchforge-problem/1 line.
    problem_lines = "\n".join(json.dumps(r["problem"]) for r in rows.values())
    report = import_seeds(source="jsonl", content=problem_lines)
    assert report.unchanged == release.item_count


def test_the_hugging_face_layout_has_data_and_a_card_with_yaml_metadata(frozen):
    _, release = frozen
    archive = zipfile.ZipFile(io.BytesIO(exports.export_bytes(release, "hf")))
    assert sorted(archive.namelist()) == [
        "README.md",
        "data/test.jsonl",
        "data/test.parquet",
        "release.json",
    ]
    card = archive.read("README.md").decode()
    header = card.split("---")[1]
    assert "license: cc-by-4.0" in header
    assert "path: data/test.parquet" in header and "n<1K" in header
    assert f"Problems: {release.item_count} (2 evolved, 1 original)" in card
    assert release.content_hash in card
    rows = archive.read("data/test.jsonl").decode().splitlines()
    assert len(rows) == release.item_count
    assert json.loads(archive.read("release.json"))["content_hash"] == release.content_hash


def test_the_rl_export_carries_prompt_tests_and_the_appendix_d3_reward(frozen):
    _, release = frozen
    rows = [json.loads(x) for x in exports.export_bytes(release, "rl").decode().splitlines()]
    assert len(rows) == release.item_count
    row = rows[0]
    assert row["prompt"][-1]["role"] == "user" and row["tests"]
    assert row["reward"]["lambda"] == 0.1
    assert row["reward"]["formula"] == "r = c + lambda * (f - 1)"
    assert rl.rl_reward(has_code_block=True, all_tests_pass=True) == 1.0
    assert rl.rl_reward(has_code_block=True, all_tests_pass=False) == 0.0
    assert rl.rl_reward(has_code_block=False, all_tests_pass=False) == pytest.approx(-0.1)
    assert rl.rl_has_code_block("```python\nprint(1)\n```") is True
    assert rl.rl_has_code_block("I think the answer is 3.") is False


def test_the_livecodebench_export_leaves_out_what_its_grader_would_misgrade(personas):
    from tests.releases.builders import crafted_world

    world = crafted_world()
    tolerant = world.problem("E-OK")
    tolerant.comparison = {"mode": "float", "rel_tol": 1e-6, "abs_tol": 1e-6}
    tolerant.save()
    not_json = world.problem("E-OVERRIDE")
    not_json.harness, not_json.entry_point = "function", "add"
    not_json.save()
    TestCase.objects.filter(problem=not_json).delete()
    TestCase.objects.create(
        problem=not_json, tier="public", ordinal=0, hidden=False, input_text="1 2", output_text="3"
    )
    bench = services.benchmark_create(default_rules=SELECTION_TIME_OK, name="Misgraded")
    release = services.release_create(benchmark=bench, campaigns=[world.campaign])
    services.gate_run_create(release=release)
    release = services.release_freeze(release=release)
    rows = [json.loads(x) for x in exports.export_bytes(release, "lcb").decode().splitlines()]
    ids = {r["question_id"] for r in rows}
    assert tolerant.public_id not in ids and not_json.public_id not in ids
    skipped = exports.export_manifest(release)["lcb_skipped"]
    assert skipped[tolerant.public_id] == "comparison 'float'"
    assert skipped[not_json.public_id] == "test public/0 is not one JSON value per line"
    solutions = json.loads(exports.export_bytes(release, "lcb_solutions"))
    assert [s["question_id"] for s in solutions] == [r["question_id"] for r in rows]
    # The curator's release page says what was left out and why.
    from django.urls import reverse

    page = personas.curator.client.get(reverse("releases:curate_detail", args=[release.pk]))
    assert page.status_code == 200
    text = page.content.decode()
    assert f"<code>{tolerant.public_id}</code>: comparison &#x27;float&#x27;" in text
    assert "lcb_solutions" in text and "rl_parquet" in text
