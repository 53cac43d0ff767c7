"""A series as the design document's files (section 9): ``manage.py reasoning_series`` imports a
state.json and a runs.jsonl the document's own program wrote, the next campaign continues them
(section 4.1's worked example: 0.8 imported, a run of 0.6 makes 0.74), and a series exports the
same shapes back."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from evolution.streams.runner import run_inline
from reasoning.models import ImportedExample, ReasoningCampaign, ReasoningSeries
from reasoning.services import item_override_score

from .helpers import World, make_campaign, one_type
from .test_series import generation_prompts

pytestmark = pytest.mark.django_db

STATE_FIELDS = {
    "ema",
    "run_count",
    "current_difficulty",
    "ema_by_reasoning_type",
    "ema_by_difficulty",
}
EXAMPLE_FIELDS = {"question", "tags", "answer", "score", "rationale", "created_at"}
# The state after the document's run 1 (score 0.8), as its state.json holds it.
STATE = {
    "ema": 0.8,
    "run_count": 1,
    "current_difficulty": 1,
    "ema_by_reasoning_type": {"logical_deduction": 0.8},
    "ema_by_difficulty": {"1": 1.0, "2": 0.6},
}
D1 = "If all wugs are daxes and no dax is a blicket, can a wug be a blicket?"
D2 = "Every florp is a zint. Some zints are quibs. Must some florp be a quib?"


def _example(question: str, difficulty: int, score: float) -> dict:
    return {
        "question": question,
        "tags": {
            "reasoning_type": "logical_deduction",
            "difficulty": difficulty,
            "question_index": 0,
        },
        "answer": "No.",
        "score": score,
        "rationale": "checked",
        "created_at": "2025-01-01T00:00:00",
    }


def _files(tmp_path):
    state = tmp_path / "state.json"
    state.write_text(json.dumps(STATE))
    runs = tmp_path / "runs.jsonl"
    runs.write_text(
        json.dumps({"run": 1, "results": [_example(D1, 1, 1.0), _example(D2, 2, 0.0)]}) + "\n"
    )
    return state, runs


def _import(name: str, state, runs) -> str:
    out = io.StringIO()
    call_command(
        "reasoning_series", "import", name, "--state", str(state), "--runs", str(runs), stdout=out
    )
    return out.getvalue()


def test_an_imported_benchmark_is_continued_as_the_documents_next_invocation(
    fake_server, tmp_path, personas
):
    state, runs = _files(tmp_path)
    said = _import("Imported benchmark", state, runs)
    assert "2 prior question(s) from 1 run(s)" in said and "next run is number 2" in said
    world = World()
    world.verdicts = [True, True, True, False, False]  # run score 0.6
    fake_server.responder = world
    campaign = make_campaign(
        fake_server, series="Imported benchmark", reasoning_types=one_type(), difficulty_end=5
    )
    assert run_inline(campaign_id=campaign.pk).state == "completed"
    rc = ReasoningCampaign.objects.get(pk=campaign.pk)
    assert rc.runs.get().number == 2
    assert rc.ema == pytest.approx(0.74)  # 0.3 x 0.6 + 0.7 x 0.8
    assert rc.ema_by_reasoning_type == {"logical_deduction": pytest.approx(0.74)}
    assert rc.ema_by_difficulty["2"] == pytest.approx(0.3 * 1.0 + 0.7 * 0.6)
    assert rc.ema_by_difficulty["5"] == pytest.approx(0.0)
    assert rc.series.run_count == 2
    # The imported questions are the prior questions of the generation prompt.
    prompts = dict(generation_prompts(fake_server))
    first = prompts["run=2;d=1;type=logical_deduction;q=0"]
    assert "MUST be ENTIRELY NOVEL" in first and D1 in first and D2 in first

    # An override recomputes the series from the imported state, not from nothing.
    right = rc.runs.get().items.get(difficulty=1)
    item_override_score(item_id=right.pk, score=0.0, reason="wrong", user=personas.curator.user)
    rc.refresh_from_db()
    assert rc.ema == pytest.approx(0.3 * 0.4 + 0.7 * 0.8)

    # Exported in the document's shapes...
    out = tmp_path / "out"
    call_command(
        "reasoning_series", "export", rc.series.slug, "--out", str(out), stdout=io.StringIO()
    )
    exported_state = json.loads((out / "state.json").read_text())
    assert set(exported_state) == STATE_FIELDS
    assert exported_state["run_count"] == 2 and exported_state["ema"] == pytest.approx(0.68)
    lines = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    assert [line["run"] for line in lines] == [1, 2]
    assert [len(line["results"]) for line in lines] == [2, 5]
    for line in lines:
        for example in line["results"]:
            assert set(example) >= EXAMPLE_FIELDS
            assert set(example["tags"]) == {"reasoning_type", "difficulty", "question_index"}
    assert lines[1]["ema"] == pytest.approx(0.68) and lines[1]["score"] == pytest.approx(0.4)
    # ...which import again into a new series as the same state and questions.
    _import("Copy", out / "state.json", out / "runs.jsonl")
    copy = ReasoningSeries.objects.get(name="Copy")
    assert copy.ema == pytest.approx(0.68) and copy.run_count == 2
    assert ImportedExample.objects.filter(series=copy).count() == 7
    # The same files download from the series page.
    client = personas.curator.client
    assert client.get(f"/reasoning/series/{rc.series.slug}/state.json").json() == exported_state
    downloaded = client.get(f"/reasoning/series/{rc.series.slug}/runs.jsonl").content.decode()
    assert [json.loads(line)["run"] for line in downloaded.splitlines()] == [1, 2]


def test_an_import_is_refused_with_the_reason(fake_server, tmp_path):
    state, runs = _files(tmp_path)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"run": 1, "results": []}) + "\nnot json\n")
    with pytest.raises(CommandError, match="runs.jsonl line 2: not JSON"):
        _import("Broken", state, bad)
    assert not ReasoningSeries.objects.filter(name="Broken").exists()  # nothing half-imported
    no_tags = tmp_path / "no_tags.jsonl"
    no_tags.write_text(json.dumps({"results": [{"question": "q?", "tags": {"difficulty": 3}}]}))
    with pytest.raises(CommandError, match="line 1, example 1: 'tags.reasoning_type'"):
        _import("Broken", state, no_tags)
    wrong_state = tmp_path / "wrong_state.json"
    wrong_state.write_text(json.dumps({**STATE, "current_difficulty": 11}))
    with pytest.raises(CommandError, match="current_difficulty must be 1-10"):
        _import("Broken", wrong_state, runs)
    # A series that already ran in BenchForge keeps its own history.
    world = World()
    fake_server.responder = world
    ran = make_campaign(
        fake_server, series="Ran here", reasoning_types=one_type(), difficulty_end=1
    )
    run_inline(campaign_id=ran.pk)
    with pytest.raises(CommandError, match="already has runs of its own"):
        _import("Ran here", state, runs)
