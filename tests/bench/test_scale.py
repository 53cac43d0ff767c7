"""``bench_scale`` runs end to end at a tiny size: its simulated LiveCodeBench JSONL imports, the
gate, freeze, scoring, pages and review round are all measured, and the table says for each
target whether it is met, from the measures themselves."""

from __future__ import annotations

import random

import pytest

from bench import bench_scale
from evolution.importers.lcb import read_lcb

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_simulated_jsonl_reads_as_livecodebench_with_its_packed_private_tests():
    content, test_bytes = bench_scale.lcb_jsonl(5)
    records = [record for _, record in read_lcb(content=content)]
    assert len(records) == 5
    hidden = [t for r in records for t in r["tests"] if t["hidden"]]
    assert len(hidden) >= 5 * 10
    assert sum(len(t["input"]) for t in hidden) == test_bytes
    assert {r["origin_difficulty"] for r in records} == {"easy", "medium", "hard"}


def test_private_test_sizes_follow_the_documented_distribution():
    rng = random.Random(1)
    problems = [bench_scale.private_test_sizes(rng) for _ in range(2000)]
    assert all(10 <= len(p) <= 31 for p in problems)
    large = sum(1 for p in problems if max(p) >= bench_scale._LARGE_RANGE[0])
    assert 0.07 < large / len(problems) < 0.13
    small = sorted(s for p in problems for s in p if s <= bench_scale._TEST_CAP)
    assert 1_000 < small[len(small) // 2] < 2_200


def test_a_tiny_size_is_measured_through_every_row():
    result = bench_scale.measure(12, 3, samples=2, throwaway=False)
    for key, *_ in bench_scale.ROWS:
        assert result.measures[key].seconds > 0, key
    assert result.facts["gate"] == "12 of 12 candidates passed"
    assert result.measures["leaderboard warm"].queries < result.measures["leaderboard cold"].queries
    rows = bench_scale.table([result])
    assert [r["measure (SIMULATED data)"] for r in rows[: len(bench_scale.ROWS)]] == [
        label for _, label, *_ in bench_scale.ROWS
    ]
    gate = rows[[key for key, *_ in bench_scale.ROWS].index("gate")]
    assert gate["met"] == "yes" and gate["12 x 3 x 2"].endswith("queries")


def test_a_query_target_compares_the_sizes_and_a_time_target_reads_the_largest():
    def size(problems, seconds, queries):
        result = bench_scale.SizeResult(problems=problems, models=2)
        result.measures = {
            "review round": bench_scale.Measure(seconds, queries),
            "gate": bench_scale.Measure(seconds, queries),
        }
        return result

    grows = bench_scale.table([size(100, 0.1, 40), size(1000, 9.0, 400)])
    flat = bench_scale.table([size(100, 4.0, 40), size(1000, 4.9, 40)])
    keys = [key for key, *_ in bench_scale.ROWS]
    for rows, met in ((grows, "NO"), (flat, "yes")):
        assert rows[keys.index("review round")]["met"] == met
        assert rows[keys.index("gate")]["met"] == met
    assert grows[keys.index("summary")]["met"] == ""


def test_the_judge_and_heatmap_rows_come_from_real_judging_and_real_requests():
    result = bench_scale.measure(6, 2, samples=1, throwaway=False, judged=4, heatmap_seeds=30)
    throughput = result.measures["judge throughput"].seconds
    assert throughput > 0 and result.measures["judge overhead"].seconds > 0
    hours = bench_scale.FULL_RUN_SAMPLES / throughput / 3600
    assert result.measures["judge full run"].seconds == hours
    assert result.facts["judge sample"].startswith("4 simulated submissions judged in ")
    assert "extrapolated linearly" in result.facts["judge sample"]
    # Both runs went through the scoring path: every sample has a verdict from the sandbox.
    from releases.models import LeaderboardRun

    judged = LeaderboardRun.objects.filter(label__startswith="judge ")
    assert judged.count() == 2
    for run in judged:
        assert run.state == "completed"
        verdicts = list(run.samples.values_list("verdict", flat=True))
        assert len(verdicts) == 4 and "" not in verdicts
    idle = judged.get(label__startswith="judge overhead")
    assert set(idle.samples.values_list("verdict", flat=True)) == {"WA"}

    assert result.facts["heatmap campaign"].startswith("30 seeds x 10 rounds (300 candidates")
    first, every = (
        result.measures["heatmap first page bytes"],
        result.measures["heatmap all rows bytes"],
    )
    # 30 seeds: the first page holds every row (the two answers differ in their "limit" only)
    assert first.seconds > 0 and first.seconds == pytest.approx(every.seconds, rel=0.01)
    for key in ("heatmap first page", "heatmap all rows"):
        assert result.measures[f"{key} warm"].queries < result.measures[f"{key} cold"].queries
    rows = {r["measure (SIMULATED data)"]: r for r in bench_scale.table([result])}
    assert rows["heatmap JSON, first page (200 seeds), cold"]["met"] in ("yes", "NO")
    assert rows["judge throughput, submissions really judged through run_execute"][
        "6 x 2 x 1"
    ].endswith("samples/s")
