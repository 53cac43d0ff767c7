"""Output comparison.

The default mode reproduces LiveCodeBench's ``grade_stdio`` (lcb_runner/evaluation/
testing_util.py) exactly:

1. both outputs are ``strip()``-ed, split on ``"\\n"`` and every line ``strip()``-ed (so
   trailing spaces, ``\\r`` and trailing blank lines never matter, inner blank lines do);
2. the line counts must be equal;
3. each pair of lines is equal as strings, or else both lines split on whitespace parse
   completely as ``decimal.Decimal`` and the two lists are equal (``"1.0" == "1"``,
   ``"1e2" == "100"``, but ``"0.30000000000000004" != "0.3"``: no tolerance).

The call-based (function) harness compares the JSON-decoded return value with the JSON-decoded
expected value by ``==`` (tuples were turned into lists before encoding, as LiveCodeBench does).

Per-problem options (``comparison`` dict): ``mode`` ``"float"`` (tokens that parse as numbers
match within ``rel_tol``/``abs_tol``, default 1e-6 each), ``"unordered"`` (the multiset of
whitespace tokens must match, numbers compared as Decimals), and ``checker`` (a program that
decides; run sandboxed by the service, see ``service.py``).
"""

from __future__ import annotations

import json
import math
from collections import Counter

MODES = ("exact", "float", "unordered")
DIFF_LIMIT = 1200


def _clip(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + f"...[{len(text) - limit} more chars]"


def get_stripped_lines(value: str) -> list[str]:
    return [line.strip() for line in value.strip().split("\n")]


def _decimals(line: str) -> list | None:
    # decimal is imported on first use: only lines that differ as text get here, and the
    # judge's command line starts faster without it.
    from decimal import Decimal, InvalidOperation

    try:
        return [Decimal(token) for token in line.split()]
    except (InvalidOperation, ValueError):
        return None


def _float_token_equal(a: str, b: str, rel_tol: float, abs_tol: float) -> bool:
    if a == b:
        return True
    try:
        x, y = float(a), float(b)
    except ValueError:
        return False
    if math.isnan(x) or math.isnan(y):
        return False
    return math.isclose(x, y, rel_tol=rel_tol, abs_tol=abs_tol)


def _canonical_token(token: str) -> str:
    from decimal import Decimal, InvalidOperation

    try:
        number = Decimal(token)
    except (InvalidOperation, ValueError):
        return token
    if not number.is_finite():
        return token
    return str(number.normalize()) if number != 0 else "0"


def compare_stdio(
    actual: str, expected: str, *, mode: str = "exact", rel_tol: float = 1e-6, abs_tol: float = 1e-6
) -> tuple[bool, str]:
    """Return (equal, explanation of the first difference or "")."""
    if actual == expected:
        return True, ""  # equal under every mode; the common case, decided without parsing
    if mode == "unordered":
        got, want = (
            Counter(map(_canonical_token, actual.split())),
            Counter(map(_canonical_token, expected.split())),
        )
        if got == want:
            return True, ""
        missing = list((want - got).elements())[:5]
        extra = list((got - want).elements())[:5]
        return False, _clip(f"token multisets differ: missing {missing}, unexpected {extra}", 600)
    got_lines, want_lines = get_stripped_lines(actual), get_stripped_lines(expected)
    if len(got_lines) != len(want_lines):
        return False, (
            f"Wrong answer: mismatched output length: expected {len(want_lines)} line(s), "
            f"got {len(got_lines)}"
        )
    for index, (got, want) in enumerate(zip(got_lines, want_lines, strict=True)):
        if got == want:
            continue
        if mode == "float":
            got_tokens, want_tokens = got.split(), want.split()
            if len(got_tokens) == len(want_tokens) and all(
                _float_token_equal(a, b, rel_tol, abs_tol)
                for a, b in zip(got_tokens, want_tokens, strict=True)
            ):
                continue
        else:
            got_dec, want_dec = _decimals(got), _decimals(want)
            if got_dec is not None and want_dec is not None and got_dec == want_dec:
                continue
        return False, f"Wrong answer at line {index + 1}: {_clip(got)!r} != {_clip(want)!r}"
    return True, ""


def _values_close(a, b, rel_tol: float, abs_tol: float) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(a, b, rel_tol=rel_tol, abs_tol=abs_tol)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(
            _values_close(x, y, rel_tol, abs_tol) for x, y in zip(a, b, strict=True)
        )
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_values_close(a[k], b[k], rel_tol, abs_tol) for k in a)
    return a == b


def compare_function(
    actual_json: str,
    expected_json: str,
    *,
    mode: str = "exact",
    rel_tol: float = 1e-6,
    abs_tol: float = 1e-6,
) -> tuple[bool, str]:
    """Compare a JSON-encoded return value with the JSON-encoded expected value."""
    try:
        expected = json.loads(expected_json)
    except ValueError as exc:
        raise ValueError(f"expected output is not JSON: {exc}") from exc
    try:
        actual = json.loads(actual_json) if actual_json.strip() else None
    except ValueError:
        return False, f"return value is not JSON: {_clip(actual_json)!r}"
    if mode == "float":
        equal = _values_close(actual, expected, rel_tol, abs_tol)
    elif mode == "unordered" and isinstance(actual, list) and isinstance(expected, list):
        canon = lambda xs: Counter(json.dumps(x, sort_keys=True) for x in xs)  # noqa: E731
        equal = canon(actual) == canon(expected)
    else:
        equal = actual == expected
    if equal:
        return True, ""
    return False, (
        f"Wrong answer: returned {_clip(json.dumps(actual))} expected {_clip(json.dumps(expected))}"
    )


def validate_comparison(comparison: dict | None) -> dict:
    """Normalise a per-problem comparison dict; raise ValueError naming the bad field."""
    comparison = dict(comparison or {})
    unknown = set(comparison) - {"mode", "rel_tol", "abs_tol", "checker"}
    if unknown:
        raise ValueError(f"unknown comparison option(s): {', '.join(sorted(unknown))}")
    mode = comparison.get("mode") or "exact"
    if mode not in MODES:
        raise ValueError(f"comparison mode must be one of {', '.join(MODES)}, got {mode!r}")
    result = {"mode": mode}
    for key in ("rel_tol", "abs_tol"):
        value = comparison.get(key, 1e-6)
        if not isinstance(value, int | float) or value < 0:
            raise ValueError(f"comparison {key} must be a non-negative number")
        result[key] = float(value)
    checker = comparison.get("checker") or ""
    if checker and not isinstance(checker, str):
        raise ValueError("comparison checker must be Python source code")
    result["checker"] = checker
    return result


def truncate(text: str, limit: int = DIFF_LIMIT) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n...[truncated {len(text) - limit} chars]"
