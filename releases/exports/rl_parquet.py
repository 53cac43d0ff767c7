"""The RL export as Parquet, in the row shape RL trainers read, and its reward computed with
this project's own judge.

A row (one per coding item, split ``test``):

- ``data_source``: ``benchforge/<benchmark slug>-v<version>``
- ``prompt``: the solver prompt as chat messages ``[{"role", "content"}]``
- ``ability``: ``"code"``
- ``reward_model``: ``{"style": "rule", "ground_truth": <JSON string>}``; the ground truth is
  ``{"harness", "entry_point", "time_limit_s", "memory_mb", "comparison", "tests": [{"input",
  "output"}]}`` with every test, hidden ones included
- ``reward_spec``: JSON string of the reward: BenchEvolver's r = c + 0.1 (f - 1)
  (``rl.REWARD_SPEC``), X-Coder's A.2 pass fraction for items its method made
  (``rl.PASS_FRACTION_REWARD_SPEC``: -2 / 0 / 5 passed / total) or, for a scored (open-ended) item, its verifier's score
  (``rl.SCORED_REWARD_SPEC``, with the verifier and direction under ``comparison``)
- ``extra_info``: ``{"split", "index", "question_id", "item_hash", "prompt_template"}``
- ``split``: ``"test"``

``reward(row, answer)`` computes a sample's reward from a row read back from the file, with
the judge the project validates problems with (``evolution.sandbox``).
"""

from __future__ import annotations

import io
import json

from evolution.llm.parsing import ParseError, extract_code
from evolution.sandbox import scoring

from ..models import Release
from .rl import rl_pass_fraction_reward, rl_record, rl_reward
from .rows import parquet_bytes, release_items

RL_SPLIT = "test"


def rl_row(item, release: Release, index: int) -> dict:
    base = rl_record(item)
    ground_truth = {
        "harness": base["harness"],
        "entry_point": base["entry_point"],
        "time_limit_s": float(base["time_limit_s"]),
        "memory_mb": int(base["memory_mb"]),
        "comparison": base["comparison"],
        "tests": base["tests"],
    }
    return {
        "data_source": f"benchforge/{release.benchmark.slug}-v{release.version}",
        "prompt": [{"role": m["role"], "content": m["content"]} for m in base["prompt"]],
        "ability": "code",
        "reward_model": {"style": "rule", "ground_truth": json.dumps(ground_truth)},
        "reward_spec": json.dumps(base["reward"]),
        "extra_info": {
            "split": RL_SPLIT,
            "index": index,
            "question_id": item.public_id,
            "item_hash": item.content_hash,
            "prompt_template": base["prompt_template"],
        },
        "split": RL_SPLIT,
    }


def rl_schema():
    import pyarrow as pa

    return pa.schema(
        [
            ("data_source", pa.string()),
            ("prompt", pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))),
            ("ability", pa.string()),
            ("reward_model", pa.struct([("style", pa.string()), ("ground_truth", pa.string())])),
            ("reward_spec", pa.string()),
            (
                "extra_info",
                pa.struct(
                    [
                        ("split", pa.string()),
                        ("index", pa.int64()),
                        ("question_id", pa.string()),
                        ("item_hash", pa.string()),
                        ("prompt_template", pa.string()),
                    ]
                ),
            ),
            ("split", pa.string()),
        ]
    )


def export_rl_parquet(release: Release) -> bytes:
    rows = [rl_row(item, release, index) for index, item in enumerate(release_items(release))]
    return parquet_bytes(rows, rl_schema())


def read_rows(data: bytes) -> list[dict]:
    """The rows of an RL Parquet file as plain dicts."""
    import pyarrow.parquet as pq

    return pq.read_table(io.BytesIO(data)).to_pylist()


def reward(row: dict, answer: str) -> float:
    """The reward of ``answer`` (a model's whole reply) for ``row``, as its ``reward_spec``
    defines it, judged in the sandbox on every ground-truth test."""
    from django.conf import settings

    from evolution import sandbox

    spec = json.loads(row["reward_spec"])
    truth = json.loads(row["reward_model"]["ground_truth"])
    tests = [sandbox.TestSpec(input=t["input"], output=t["output"]) for t in truth["tests"]]
    comparison = truth["comparison"] or {}
    try:
        code = extract_code(answer, language="python")
    except ParseError:
        code = ""
    if scoring.is_scored(comparison):
        if not code:
            return 0.0
        result = scoring.score(
            code,
            tests,
            verifier=comparison["verifier"],
            direction=comparison["direction"],
            harness=truth["harness"],
            entry_point=truth["entry_point"],
            limits=sandbox.Limits(
                time_s=truth["time_limit_s"],
                memory_mb=truth["memory_mb"],
                max_output_bytes=settings.SANDBOX_MAX_OUTPUT_BYTES,
            ),
        )
        if result.sandbox_failed:
            raise RuntimeError("the sandbox failed while scoring: no reward to give")
        return float(result.mean)
    if spec.get("name") == "pass_fraction":
        return _pass_fraction(code, tests, truth, spec, comparison)
    if not code:
        return rl_reward(has_code_block=False, all_tests_pass=False)
    result = _judged(code, tests, truth, spec, comparison, stop_on_first_failure=True)
    return rl_reward(has_code_block=True, all_tests_pass=result.verdict == "AC")


def _judged(code: str, tests, truth: dict, spec: dict, comparison: dict, *, stop_on_first_failure):
    """``code`` judged on the row's tests under its limits; a sandbox failure gives no reward."""
    from django.conf import settings

    from evolution import sandbox

    result = sandbox.judge(
        code,
        tests,
        harness=truth["harness"],
        limits=sandbox.Limits(
            time_s=float(spec["per_test_time_limit_s"]),
            memory_mb=truth["memory_mb"],
            max_output_bytes=settings.SANDBOX_MAX_OUTPUT_BYTES,
        ),
        entry_point=truth["entry_point"],
        comparison=comparison,
        stop_on_first_failure=stop_on_first_failure,
    )
    if result.verdict == "SE":
        raise RuntimeError("the sandbox failed while judging: no reward to give")
    return result


def _pass_fraction(code: str, tests, truth: dict, spec: dict, comparison: dict) -> float:
    """A.2 eq. (6): every test is run (no stop at the first failure); code that does not
    compile (a Python syntax error, or the judge's CE) gets the no-code reward."""
    if not code:
        return rl_pass_fraction_reward(has_code=False, compiles=False, passed=0, total=0)
    try:
        compile(code, "<answer>", "exec")
    except (SyntaxError, ValueError):
        return rl_pass_fraction_reward(has_code=True, compiles=False, passed=0, total=0)
    result = _judged(code, tests, truth, spec, comparison, stop_on_first_failure=False)
    return rl_pass_fraction_reward(
        has_code=True, compiles=result.verdict != "CE", passed=result.passed, total=result.total
    )
