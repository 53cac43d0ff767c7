"""A completed run's stored summary, checked before a public page reads it.

The scoring service writes summaries (``leaderboard.run_summary``) and the database lets
nothing else write them (migration 0013); a row stored before those guards, or by the
database's owner with them switched off, may still be malformed. ``readable`` returns the
summary when every part the public leaderboard and its API read has the shape they expect,
and None otherwise: the board then shows that run's row as "result unavailable" instead of
failing the whole page with a 500. ``readable_question`` does the same for a question run's
summary (``question_leaderboard.question_run_summary``) on the question leaderboard.
"""

from __future__ import annotations

import math
from typing import Any


class _Malformed(ValueError):
    pass


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _check(ok: bool) -> None:
    if not ok:
        raise _Malformed


def _estimate(value: Any, *, optional: bool = True) -> None:
    """``{"value", "low", "high", "n"}`` (``stats.Estimate.to_dict``), or None if allowed."""
    if value is None and optional:
        return
    _check(isinstance(value, dict))
    _check(all(_number(value.get(key)) for key in ("value", "low", "high")))
    _check(_count(value.get("n")))


def _estimates(value: Any) -> None:
    """A mapping of names (k, group members) to estimates."""
    _check(isinstance(value, dict))
    for key, estimate in value.items():
        _check(isinstance(key, str))
        _estimate(estimate)


def _optional_dict(summary: dict, key: str) -> dict:
    value = summary.get(key)
    if value is None:
        return {}
    _check(isinstance(value, dict))
    return value


def _per_item(rows: Any) -> None:
    _check(isinstance(rows, list))
    for row in rows:
        _check(isinstance(row, dict) and isinstance(row.get("public_id"), str))
        passes = row.get("pass")
        _check(isinstance(passes, dict))
        _check(all(v is None or _number(v) for v in passes.values()))
        _check(row.get("contaminated") in (None, True, False))
        # An open-ended (scored) item's row: its mean verifier score, no pass.
        _check(row.get("scored") in (None, True, False))
        _check(row.get("score") is None or _number(row["score"]))
        for group in ("origin", "difficulty"):
            _check(row.get(group) is None or isinstance(row.get(group), str))


def _open_scores(score: dict) -> None:
    for key in ("avg", "best"):
        if score.get(key) is not None:
            _estimates(score[key])
    rows = score.get("per_item")
    if rows is None:
        return
    _check(isinstance(rows, list))
    for row in rows:
        _check(isinstance(row, dict) and isinstance(row.get("public_id"), str))
        for key in ("avg", "best"):
            values = row.get(key)
            _check(isinstance(values, dict) and all(_number(v) for v in values.values()))


def _validate(summary: Any) -> None:
    _check(isinstance(summary, dict))
    passes = summary.get("pass")
    _check(isinstance(passes, dict))
    _estimates(passes)
    # pass@1 is over the pass/fail problems: none when every problem is open-ended (scored).
    _check(summary.get("pass_fail_problems") is None or _count(summary["pass_fail_problems"]))
    _estimate(passes.get("1"), optional=summary.get("pass_fail_problems") == 0)
    ks = summary.get("k", [1])
    _check(isinstance(ks, list) and ks and all(_count(k) and k >= 1 for k in ks))
    _check(_count(summary.get("infra_errors", 0)))
    contamination = _optional_dict(summary, "contamination")
    _estimate(contamination.get("clean_pass1"))
    _check(_count(contamination.get("flagged", 0)))
    for group in _optional_dict(summary, "breakdown").values():
        _estimates(group)
    if summary.get("per_item") is not None:
        _per_item(summary["per_item"])
    _open_scores(_optional_dict(summary, "score"))


def _validate_question(summary: Any) -> None:
    _check(isinstance(summary, dict))
    _estimate(summary.get("score"), optional=False)
    breakdown = _optional_dict(summary, "breakdown")
    for group in breakdown.values():
        _estimates(group)
    _check(all(key.isdigit() for key in breakdown.get("level", {})))
    _check(_count(summary.get("infra_errors", 0)) and _count(summary.get("questions", 0)))
    judges = summary.get("judges", [])
    _check(isinstance(judges, list) and all(isinstance(j, str) for j in judges))
    modes = _optional_dict(summary, "modes")
    _check(all(_count(v) for v in modes.values()))


def _readable(validate, summary: Any) -> dict | None:
    try:
        validate(summary)
    except _Malformed:
        return None
    return summary


def readable(summary: Any) -> dict | None:
    """The leaderboard run's summary when the public leaderboard can read it whole, else
    None."""
    return _readable(_validate, summary)


def readable_question(summary: Any) -> dict | None:
    """The question run's summary when the question leaderboard can read it whole, else
    None."""
    return _readable(_validate_question, summary)
