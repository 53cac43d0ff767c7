"""The RL Parquet export: read back with pyarrow, rewards computed with the project's judge."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from releases import exporters, rl_export
from tests.releases.builders import SUM_CODE, WRONG_CODE

COLUMNS = ["data_source", "prompt", "ability", "reward_model", "reward_spec", "extra_info", "split"]


@pytest.fixture
def rows(frozen):
    _, release = frozen
    data = exporters.export_bytes(release, "rl_parquet")
    assert data == exporters.export_bytes(release, "rl_parquet")  # deterministic
    return release, rl_export.read_rows(data), data


def test_the_rl_parquet_round_trips_prompt_tests_and_reward_spec(rows, tmp_path):
    release, back, data = rows
    path = tmp_path / "rl.parquet"
    path.write_bytes(data)
    assert pq.read_schema(path).names == COLUMNS
    items = list(release.items.order_by("position"))
    assert len(back) == len(items)
    for index, (row, item) in enumerate(zip(back, items, strict=True)):
        assert row["data_source"] == f"benchforge/{release.benchmark.slug}-v1.0.0"
        assert row["split"] == "test" and row["extra_info"]["split"] == "test"
        assert row["extra_info"]["index"] == index
        assert row["extra_info"]["question_id"] == item.public_id
        assert row["ability"] == "code"
        assert [m["role"] for m in row["prompt"]][-1] == "user"
        assert item.record["statement"] in row["prompt"][-1]["content"]
        truth = json.loads(row["reward_model"]["ground_truth"])
        assert row["reward_model"]["style"] == "rule"
        assert sorted((t["input"], t["output"]) for t in truth["tests"]) == sorted(
            (t.input, t.output) for t in item.tests.all()
        )
        assert json.loads(row["reward_spec"]) == exporters.REWARD_SPEC


def test_the_reward_of_a_sample_is_computed_with_the_judge(rows):
    _, back, _ = rows
    row = back[0]
    right = f"Sum them.\n\n```python\n{SUM_CODE}```\n"
    wrong = f"```python\n{WRONG_CODE}```"
    assert rl_export.reward(row, right) == 1.0
    assert rl_export.reward(row, wrong) == 0.0
    assert rl_export.reward(row, "The answer is the sum.") == pytest.approx(-0.1)
