"""LiveCodeBench's output comparison rules, pinned (lcb_runner/evaluation/testing_util.py)."""

from __future__ import annotations

import pytest

from evolution.sandbox.compare import compare_function, compare_stdio, validate_comparison


@pytest.mark.parametrize(
    ("actual", "expected"),
    [
        ("3\n", "3"),  # trailing newline
        ("3   \n\n\n", "3"),  # trailing spaces and blank lines
        ("  3", "3"),  # leading spaces on a line
        ("1 2\r\n3 4\r\n", "1 2\n3 4"),  # CRLF: \r is whitespace stripped per line
        ("1 2   \n3 4", "1 2\n3 4   "),  # trailing whitespace on inner lines
        ("1.0", "1"),  # Decimal rule: numerically equal tokens
        ("1e2 0.50", "100 0.5"),
        ("-0", "0"),
        ("1  2", "1 2"),  # inner whitespace differs, tokens equal as Decimals
    ],
)
def test_it_accepts_what_livecodebench_accepts(actual, expected):
    assert compare_stdio(actual, expected) == (True, "")


@pytest.mark.parametrize(
    ("actual", "expected"),
    [
        ("0.30000000000000004", "0.3"),  # no tolerance by default
        ("YES", "yes"),  # case matters
        ("a  b", "a b"),  # non-numeric lines compare as whole strings
        ("1\n\n2", "1\n2"),  # an inner blank line is a line
        ("1 2", "1\n2"),  # line structure matters
        ("1 2 3", "1 2"),
        ("50000000000000000", "50000000000000001"),  # exact Decimal, unlike float isclose
        ("nan", "nan-ish"),
    ],
)
def test_it_rejects_what_livecodebench_rejects(actual, expected):
    ok, detail = compare_stdio(actual, expected)
    assert not ok
    assert detail.startswith("Wrong answer")


def test_it_reports_mismatched_line_counts_like_livecodebench():
    ok, detail = compare_stdio("1\n2\n3", "1\n2")
    assert not ok
    assert "mismatched output length" in detail


def test_empty_output_equals_whitespace_only_output():
    assert compare_stdio("", "\n  \n")[0]
    assert not compare_stdio("", "0")[0]


def test_float_mode_uses_relative_and_absolute_tolerance():
    assert compare_stdio("0.30000000000000004", "0.3", mode="float")[0]
    assert compare_stdio("1000000.5", "1000000.0", mode="float")[0]  # relative 1e-6
    assert compare_stdio("0.0000005", "0", mode="float")[0]  # absolute 1e-6
    assert not compare_stdio("1.01", "1.0", mode="float")[0]
    assert not compare_stdio("1.0 x", "1.0 y", mode="float")[0]
    assert compare_stdio("1.001", "1.0", mode="float", rel_tol=1e-2)[0]


def test_unordered_mode_compares_token_multisets():
    assert compare_stdio("3 1 2", "1\n2\n3", mode="unordered")[0]
    assert compare_stdio("1.0 2", "2 1", mode="unordered")[0]
    assert not compare_stdio("1 1 2", "1 2 2", mode="unordered")[0]


def test_function_results_compare_as_json_values():
    assert compare_function("[1, 2]", "[1,2]")[0]
    assert compare_function("true", "true")[0]
    assert not compare_function("[2, 1]", "[1, 2]")[0]
    assert not compare_function("0.30000000000000004", "0.3")[0]
    assert compare_function("0.30000000000000004", "0.3", mode="float")[0]
    assert compare_function("[[1, 2], [3]]", "[[3], [1, 2]]", mode="unordered")[0]
    assert not compare_function("", "1")[0]  # no return value recorded


def test_it_rejects_bad_comparison_options():
    with pytest.raises(ValueError, match="mode"):
        validate_comparison({"mode": "fuzzy"})
    with pytest.raises(ValueError, match="unknown"):
        validate_comparison({"tolerance": 1})
    with pytest.raises(ValueError, match="rel_tol"):
        validate_comparison({"rel_tol": -1})
    assert validate_comparison(None) == {
        "mode": "exact",
        "rel_tol": 1e-6,
        "abs_tol": 1e-6,
        "checker": "",
    }
