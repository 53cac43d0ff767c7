"""Canonical content of a release and its hash.

An item's canonical form is ``{"record": <problem columns>, "tests": [<tests>]}`` where the
record is the ``benchforge-problem/1`` line of the problem without its set-related keys and
tests, and each test is ``{tier, ordinal, hidden, input, output}`` sorted by (tier, ordinal).
Canonical JSON: sorted keys, no whitespace, UTF-8 as is. An item's hash is the sha256 of
that text; the release's hash is the sha256 of the canonical JSON of
``{"format": "benchforge-release/1", "items": [[public_id, item hash], ...]}`` sorted by
public id. The version, notes and dates are NOT hashed: the same content always gives the
same hash, whatever it is called.

A reasoning question's canonical form is ``{"record": <question record>, "tests": []}``, its
record being ``question_content_record`` (format ``benchforge-question/1``: public id, type,
difficulty, question and the reference answer, which plays the hidden test). Its (public id,
hash) pair joins the coding items' pairs in the release hash.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable

from evolution.exporters.jsonl import problem_record, sort_tests

FORMAT = "benchforge-release/1"
QUESTION_FORMAT = "benchforge-question/1"
QUESTION_CONTENT_FIELDS = (
    "format",
    "public_id",
    "reasoning_type",
    "difficulty",
    "question",
    "reference_answer",
)
_NOT_CONTENT = ("format", "problem_set", "member", "tests")
TEST_CONTENT_FIELDS = ("tier", "ordinal", "hidden", "input", "output")


def canonical_json(value) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def problem_content_record(problem) -> dict:
    """The problem's columns as exported, without tests or set membership."""
    record = problem_record(problem, tests=[])
    for key in _NOT_CONTENT:
        record.pop(key, None)
    return record


def canonical_tests(tests: Iterable[dict]) -> list[dict]:
    return sort_tests({k: t[k] for k in TEST_CONTENT_FIELDS} for t in tests)


def item_hash(record: dict, tests: Iterable[dict]) -> str:
    return sha256(canonical_json({"record": record, "tests": canonical_tests(tests)}))


def question_public_id(reasoning_item_id: int) -> str:
    """A reasoning item's id in every release that holds it (stable across versions, so
    changelogs and errata can follow it)."""
    return f"RQ{reasoning_item_id:06d}"


def question_content_record(
    *, public_id: str, reasoning_type: str, difficulty: int, question: str, reference_answer: str
) -> dict:
    return {
        "format": QUESTION_FORMAT,
        "public_id": public_id,
        "reasoning_type": reasoning_type,
        "difficulty": int(difficulty),
        "question": question,
        "reference_answer": reference_answer,
    }


def question_hash(record: dict) -> str:
    return item_hash({k: record[k] for k in QUESTION_CONTENT_FIELDS}, [])


def release_hash(item_hashes: Iterable[tuple[str, str]]) -> str:
    """``item_hashes``: (public_id, item hash) pairs in any order."""
    return sha256(canonical_json({"format": FORMAT, "items": sorted(map(list, item_hashes))}))


def release_hash_from_lines(lines: Iterable[str]) -> str:
    """Recompute a release's hash from its project JSONL export (``benchforge-release/1``
    lines, each carrying a ``benchforge-problem/1`` record under "problem", or a
    ``benchforge-question/1`` record under "question"): anyone holding
    the export can check it against the published hash."""
    pairs = []
    for line in lines:
        if not line.strip():
            continue
        row = json.loads(line)
        if "question" in row:
            record = row["question"]
            pairs.append((record["public_id"], question_hash(record)))
            continue
        problem = row["problem"]
        record = {k: v for k, v in problem.items() if k not in _NOT_CONTENT}
        pairs.append((record["public_id"], item_hash(record, problem.get("tests", []))))
    return release_hash(pairs)
