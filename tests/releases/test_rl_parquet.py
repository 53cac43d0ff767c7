"""The RL Parquet export: read back with pyarrow, rewards computed with the project's judge."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from releases import exports
from releases.exports import rl, rl_parquet
from tests.releases.builders import SUM_CODE, WRONG_CODE

COLUMNS = ["data_source", "prompt", "ability", "reward_model", "reward_spec", "extra_info", "split"]


@pytest.fixture
def rows(frozen):
    _, release = frozen
    data = exports.export_bytes(release, "rl_parquet")
    assert data == exports.export_bytes(release, "rl_parquet")  # deterministic
    return release, rl_parquet.read_rows(data), data


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
        assert json.loads(row["reward_spec"]) == rl.REWARD_SPEC


def test_the_reward_of_a_sample_is_computed_with_the_judge(rows):
    _, back, _ = rows
    row = back[0]
    right = f"Sum them.\n\n```python\n{SUM_CODE}```\n"
    wrong = f"```python\n{WRONG_CODE}```"
    assert rl_parquet.reward(row, right) == 1.0
    assert rl_parquet.reward(row, wrong) == 0.0
    assert rl_parquet.reward(row, "The answer is the sum.") == pytest.approx(-0.1)


def test_an_xcoder_item_gets_the_pass_fraction_reward_of_its_document(rows):
    """X-Coder's A.2 eq. (6) for items its method made: -2 without code or when it does not
    compile, 0 when it passes no test, 5.0 * passed / total otherwise; a BenchEvolver item of
    the same release keeps D.3's reward."""
    release, back, _ = rows
    items = list(release.items.order_by("position"))
    item = items[0]
    assert item.record.get("method") != "xcoder"
    # The same frozen item as an X-Coder problem's record would carry it (not saved).
    item.record = {**item.record, "method": "xcoder"}
    row = rl_parquet.rl_row(item, release, 0)
    assert json.loads(row["reward_spec"]) == rl.PASS_FRACTION_REWARD_SPEC
    assert json.loads(rows[1][0]["reward_spec"]) == rl.REWARD_SPEC
    # Round trip through Parquet, as a trainer reads it.
    import io

    import pyarrow as pa

    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pylist([row], schema=rl_parquet.rl_schema()), sink)
    row = rl_parquet.read_rows(sink.getvalue())[0]
    tests = json.loads(row["reward_model"]["ground_truth"])["tests"]
    assert len(tests) == 4 and ("1 2\n", "3\n") in {(t["input"], t["output"]) for t in tests}
    right = f"```python\n{SUM_CODE}```"
    # Prints 3 whatever the input: right on the public example only, 1 test of 4.
    one_of_four = "```python\nprint(3)\n```"
    assert rl_parquet.reward(row, right) == 5.0
    assert rl_parquet.reward(row, one_of_four) == pytest.approx(5.0 * 1 / 4)
    assert rl_parquet.reward(row, f"```python\n{WRONG_CODE}```") == 0.0
    assert rl_parquet.reward(row, "```python\ndef broken(:\n    pass\n```") == -2.0
    assert rl_parquet.reward(row, "The answer is the sum.") == -2.0
