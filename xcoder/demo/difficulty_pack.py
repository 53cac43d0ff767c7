"""Authored judge answers for the difficulty estimate over the demo (appendix B.3 done
differently, ``xcoder/stages/difficulty.py``), written as a replay cassette of their own.

The demo campaign runs with ``difficulty_estimate`` off, so its cassette (``pack.py``) holds no
judge answer and ``make demo`` makes no judge call. ``python manage.py xcoder_difficulty
--demo`` rates the demo's two accepted tasks afterwards; these are the judge's answers, written
by hand for BenchForge in the way reasoning models answer (a think block, some prose, then the
JSON object the prompt asks for). None comes from a model, so the campaign page labels the
ratings replayed. The rating parser and the calibration against the panel's pass@1 run live.

Regenerate after editing: ``python -m xcoder.demo.difficulty_pack``.
"""

from __future__ import annotations

from pathlib import Path

from evolution.demo.authored import write_authored_cassette

CASSETTE = Path(__file__).resolve().parent / "difficulty_cassette.jsonl"
ROLE = "xcoder_difficulty"
JUDGE = "demo-xcoder-judge (replayed, difficulty)"
JUDGE_MODEL = "xcoder-judge"

# Task 0, "Lantern Festival Budget" (Codeforces style): sort, take the k largest.
LANTERN = """<think>
Okay so n up to 2e5, pick exactly k offers, maximise the sum. Values are non-negative so
there's no trick with negatives... sort descending and take the first k. Sum can reach
2e5 * 1e9 = 2e14, so 64-bit, but in Python that's free anyway. Equal offers count
separately, that's just a multiset. Honestly this is a div2 A. Maybe 800, 900 if I'm being
generous because of the overflow thing.
</think>

This is a straightforward greedy: since every offer is non-negative, the best k offers are
simply the k largest ones, found by sorting (or nth_element) in O(n log n). The only pitfall
is that the total can exceed 32-bit range (up to about 2*10^14).

```json
{"rating": 800, "rationale": "Sort and take the k largest values; the only care needed is a 64-bit sum. A typical Div. 2 A."}
```"""

# Task 1, "Reservoir Gauge Readings" (LeetCode style): a fixed-size sliding window sum.
GAUGES = """<think>
Count windows of length exactly k whose sum is >= 0. Fixed window size, so a sliding sum
or prefix sums: O(n). n is 1e5, so O(n*k) would be 1e10 in the worst case and TLE, that's
the only thing separating it from the trivial version. Off-by-one on the number of windows
(n - k + 1). Rating... easier than anything with a real observation. 1000? 1100? The
"zero or more" condition is fine. I'll say 1000-1100, lean 1100 because of the window logic.
</think>

The intended solution keeps the running sum of the last k changes (or uses prefix sums) and
counts the windows whose total is non-negative: O(n) time, O(1) extra space. Nothing beyond
a standard sliding window is needed, though the naive O(n*k) recomputation is too slow for
n = 10^5, and the window count n - k + 1 invites an off-by-one.

Final answer:
{"rating": 1100, "rationale": "A standard fixed-size sliding window (or prefix sums) with one comparison per window; the naive O(nk) times out."}"""


def answers() -> dict[tuple[str, str], str]:
    """{(role, replay key): content} of the judge calls the command makes on the demo: one per
    accepted task (task 2 is rejected by the hint-leakage gate and is not rated)."""
    return {
        (ROLE, f"xcoder;task=0;difficulty;role={ROLE}"): LANTERN,
        (ROLE, f"xcoder;task=1;difficulty;role={ROLE}"): GAUGES,
    }


def judge_endpoint():
    """The replay endpoint answering the demo's judge calls from this cassette."""
    from evolution.demo.kind_setup import replay_endpoint

    return replay_endpoint(JUDGE, JUDGE_MODEL, cassette=CASSETTE)


def write_cassette(path: Path = CASSETTE) -> int:
    """The cassette in the demo pack's format (one JSON object a line, keyed, no fingerprint)."""
    return write_authored_cassette(path, answers())


if __name__ == "__main__":
    print(f"{write_cassette()} answers written to {CASSETTE}")
