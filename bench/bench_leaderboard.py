"""The public leaderboard's date window: the cost of recomputing every score when a visitor
moves the slider.

With no date chosen a row is the run's stored summary; with one, ``releases.leaderboard.board`` recomputes
pass@1, pass@k, the after-release score and the difficulty and origin breakdowns (each a mean
with a 2000-resample bootstrap interval) from the run's per-problem results, and caches the
result per (run, problems in view). This times that recomputation for LiveCodeBench-Plus's
size (91 problems; 64 evolved, 27 original; three difficulties) and 10 models, cold (cache
cleared) and warm, and the window over all problems against half of them; the baseline, in
the same run, draws the bootstrap indices again for every estimate instead of reusing the
draws kept per (seed, number of problems). No database: the runs are in-memory stand-ins
carrying the summary ``leaderboard.run_summary`` stores.
"""

from __future__ import annotations

import random
import statistics
import time
from datetime import UTC, datetime
from types import SimpleNamespace

NAME = "Leaderboard date window (bench_leaderboard)"
PROBLEMS = 91
MODELS = 10
REPEATS = 3


def _summary(rng: random.Random) -> dict:
    per_item = []
    for i in range(PROBLEMS):
        n = 4
        c = rng.randint(0, n)
        per_item.append(
            {
                "public_id": f"p{i:03d}",
                "origin": "evolved" if i < 64 else "original",
                "difficulty": ("easy", "medium", "hard")[i % 3],
                "n": n,
                "c": c,
                "pass": {"1": c / n, "2": min(1.0, c / 2), "4": 1.0 if c else 0.0},
                "contaminated": i % 4 == 0,
            }
        )
    return {"k": [1, 2, 4], "per_item": per_item}


def _time(fn, *, cold: bool) -> float:
    from django.core.cache import cache

    samples = []
    for _ in range(REPEATS):
        if cold:
            cache.clear()
        started = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def run(args) -> list[dict]:
    from django.core.cache import cache

    from releases.leaderboard import board, stats

    rng = random.Random(7)
    runs = [
        SimpleNamespace(
            pk=10_000 + m, finished_at=datetime(2026, 1, 1, tzinfo=UTC), bootstrap_seed=0
        )
        for m in range(MODELS)
    ]
    summaries = [_summary(rng) for _ in runs]
    every = {f"p{i:03d}" for i in range(PROBLEMS)}
    half = {f"p{i:03d}" for i in range(0, PROBLEMS, 2)}
    rows = []
    for label, keep in (("all 91 problems in view", every), ("46 problems in view", half)):

        def board_for(keep=keep):
            return [
                board._windowed(r, s, keep, "4", set())
                for r, s in zip(runs, summaries, strict=True)
            ]

        # Baseline in the same run: the same computation drawing the bootstrap indices
        # again for every estimate (as before the draws were kept per (seed, n)).
        stats._kept_draws.cache_clear()
        kept = stats._draws
        stats._draws = stats._draw_rows
        try:
            baseline = _time(board_for, cold=True)
        finally:
            stats._draws = kept
        cold = _time(board_for, cold=True)
        board_for()
        warm = _time(board_for, cold=False)
        rows.append(
            {
                "window": label,
                "models": MODELS,
                "cold (s)": cold,
                "baseline cold (s)": baseline,
                "ratio": cold / baseline,
                "warm (ms)": warm * 1000,
            }
        )
    cache.clear()
    return rows
