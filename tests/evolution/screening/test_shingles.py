"""What the screen compares: renamed identifiers vanish, the algorithm's own names and the
statement's words stay, a judge's furniture and comments go."""

from __future__ import annotations

from evolution.screening import shingles
from tests.evolution.benchevolver import lcb_world


def test_a_program_with_renamed_variables_normalises_to_the_same_tokens():
    renamed = """
cases = int(input())
for _ in range(cases):
    row = input().strip()  # the three cards
    print("YES" if sum(p != q for p, q in zip(row, "abc")) in (0, 2) else "NO")
"""
    assert shingles.normalise_code(renamed) == shingles.normalise_code(lcb_world.SHORT_SORT_OK)
    assert shingles.code_shingles(renamed) == shingles.code_shingles(lcb_world.SHORT_SORT_OK)
    tokens = shingles.normalise_code(renamed)
    # Builtins and the program's literals carry the algorithm: kept.
    assert {"int", "input", "sum", "zip", '"abc"', '"YES"'} <= set(tokens)
    assert "cases" not in tokens and "row" not in tokens and "#" not in " ".join(tokens)


def test_attributes_imports_and_docstrings():
    code = '''
import collections
from typing import List


def dedupe(items: List[int]) -> List[int]:
    """Drop repeated items."""
    counts = collections.Counter(items)
    return [v for v in items if counts[v] <= 1 and str(v).startswith("1")]
'''
    tokens = shingles.normalise_code(code)
    assert "Drop" not in " ".join(tokens)  # the docstring is statement text, not code
    assert {"collections", "Counter", "List", "startswith", "str"} <= set(tokens)
    assert "dedupe" not in tokens and "counts" not in tokens and "items" not in tokens
    assert tokens.count("$") >= 8


def test_code_that_is_not_python_falls_back_to_a_generic_tokeniser():
    cpp = '#include <cstdio>\nint main(){long long a,b;scanf("%lld %lld",&a,&b); // sum\nprintf("%lld\\n",a+b);}\n'
    tokens = shingles.normalise_code(cpp)
    assert tokens[:3] == ["#", "include", "<"]
    assert "scanf" in tokens and "printf" in tokens and "a" not in tokens and "sum" not in tokens
    renamed = cpp.replace("a,b", "x,y").replace("&a,&b", "&x,&y").replace("a+b", "x+y")
    assert shingles.normalise_code(renamed) == tokens


def test_statement_words_without_latex_markdown_glue_or_a_judges_furniture():
    text = (
        "There are three cards with letters $\\texttt{a}$ and $\\texttt{b}$.\n\n"
        "Input\n\nThe first line contains a single integer $t$ ($1 \\leq t \\leq 6$) — the "
        "number of test cases.\n\n```python\n>>> f(1)\n```\nSample Input 1:\n6"
    )
    words = shingles.normalise_statement(text)
    # "a" is glue; "b", "t" and the numbers stay.
    assert words == ["three", "cards", "letters", "b", "t", "1", "t", "6", "f", "1", "1", "6"]
    assert shingles.statement_shingles("") == set()
    assert shingles.shingle_set(["one"], 2) == {"one"}


def test_jaccard():
    assert shingles.jaccard({"a", "b"}, {"b", "c"}) == 1 / 3
    assert shingles.jaccard(set(), {"a"}) == 0.0
