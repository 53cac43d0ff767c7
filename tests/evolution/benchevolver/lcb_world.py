"""LiveCodeBench records in the exact published format, their solutions and a loopback panel.

``SHORT_SORT`` is the real record of ``/work/shared/data/lcb_sample.jsonl`` (Codeforces 1873A,
stdin/stdout, packed private tests). ``ACRONYM`` is a call-based LeetCode record written in the
same shape LiveCodeBench ships (LeetCode 2828 "Check if a String Is an Acronym of Words":
``public_test_cases`` a JSON string of ``functional`` tests, ``private_test_cases`` as
base64(zlib(pickle(JSON string))), ``metadata`` a JSON string naming ``func_name``, and the
``starter_code`` LeetCode gives).
"""

from __future__ import annotations

import base64
import json
import pickle
import zlib
from pathlib import Path

from evolution.models import ModelEndpoint, Panel, PanelMember

SAMPLE = Path(__file__).resolve().parents[1] / "importers" / "data" / "lcb_sample.jsonl"
SHORT_SORT_ID = "1873_A"
ACRONYM_ID = "2828"

SHORT_SORT_OK = """
t = int(input())
for _ in range(t):
    s = input().strip()
    print("YES" if sum(a != b for a, b in zip(s, "abc")) in (0, 2) else "NO")
"""
SHORT_SORT_WRONG = """
t = int(input())
for _ in range(t):
    input()
    print("YES")
"""

ACRONYM_STARTER = (
    "class Solution:\n    def isAcronym(self, words: List[str], s: str) -> bool:\n        "
)
ACRONYM_OK = """
class Solution:
    def isAcronym(self, words: List[str], s: str) -> bool:
        return "".join(w[0] for w in words) == s
"""
# Right only when the lengths differ: fails the private test where they match but letters don't.
ACRONYM_WRONG = """
class Solution:
    def isAcronym(self, words: List[str], s: str) -> bool:
        return len(words) == len(s)
"""


def _pack(value) -> str:
    return base64.b64encode(zlib.compress(pickle.dumps(json.dumps(value)))).decode()


def short_sort_line() -> str:
    return SAMPLE.read_text(encoding="utf-8").strip()


def acronym_line() -> str:
    public = [
        {"input": '["alice", "bob", "charlie"]\n"abc"', "output": "true", "testtype": "functional"},
        {"input": '["an", "apple"]\n"a"', "output": "false", "testtype": "functional"},
    ]
    private = [
        {
            "input": '["never", "gonna", "give", "up", "on", "you"]\n"ngguoy"',
            "output": "true",
            "testtype": "functional",
        },
        {"input": '["ab", "cd"]\n"ac"', "output": "true", "testtype": "functional"},
        {"input": '["ab", "cd"]\n"ad"', "output": "false", "testtype": "functional"},
    ]
    record = {
        "question_title": "check-if-a-string-is-an-acronym-of-words",
        "question_content": (
            "Given an array of strings words and a string s, determine if s is an acronym of "
            "words.\nThe string s is considered an acronym of words if it can be formed by "
            "concatenating the first character of each string in words in order.\nReturn true "
            "if s is an acronym of words, and false otherwise.\n\nConstraints:\n\n1 <= "
            "words.length <= 100\n1 <= words[i].length <= 10\n1 <= s.length <= 100"
        ),
        "platform": "leetcode",
        "question_id": ACRONYM_ID,
        "contest_id": "weekly-contest-360",
        "contest_date": "2023-08-20T00:00:00",
        "starter_code": ACRONYM_STARTER,
        "difficulty": "easy",
        "public_test_cases": json.dumps(public),
        "private_test_cases": _pack(private),
        "metadata": json.dumps({"func_name": "isAcronym"}),
    }
    return json.dumps(record)


def records_text() -> str:
    return short_sort_line() + "\n" + acronym_line() + "\n"


def solutions_text() -> str:
    return (
        json.dumps({"question_id": SHORT_SORT_ID, "solution": SHORT_SORT_OK})
        + "\n"
        + json.dumps({"question_id": ACRONYM_ID, "solution": ACRONYM_OK})
        + "\n"
    )


def endpoint(server, name: str, **fields) -> ModelEndpoint:
    values = dict(
        name=name,
        provider="openai",
        base_url=server.base_url,
        model=name,
        concurrency_limit=4,
        timeout_s=10,
        max_retries=1,
    )
    values.update(fields)
    return ModelEndpoint.objects.create(**values)


def panel_of(name: str, endpoints: list[ModelEndpoint]) -> Panel:
    panel = Panel.objects.create(name=name)
    for ep in endpoints:
        PanelMember.objects.create(panel=panel, endpoint=ep)
    return panel
