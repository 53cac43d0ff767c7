"""Canonical content of a release and its hash.

An item's canonical form is ``{"record": <problem columns>, "tests": [<tests>]}`` where the
record is the ``benchforge-problem/1`` line of the problem without its set-related keys and
tests, and each test is ``{tier, ordinal, hidden, input, output}`` sorted by (tier, ordinal).
Canonical JSON: sorted keys, no whitespace, UTF-8 as is. An item's hash is the sha256 of
that text; the release's hash is the sha256 of the canonical JSON of
``{"format": "benchforge-release/1", "items": [[public_id, item hash], ...]}`` sorted by
public id. That is hash format 1 (``benchforge-release/1``), kept for releases frozen before
format 2: their stored hashes stay verifiable (``Release.hash_format`` is empty for them).

Hash format 2 (``benchforge-release/2``, every release frozen since) covers everything an
export or the card shows, not only the items' problems and tests:

- the release's identity (``release_identity``): the benchmark's slug, name, licence and
  description, the version, the release notes, the gate rules, the previous version, and the
  source lists (campaigns and problem sets, by id and name);
- each item's listing (``item_listing`` / ``question_listing``): position, title, origin,
  difficulty, tags, date, whether it passed the gate, the curator's note and its provenance.

The release's hash is then the sha256 of the canonical JSON of ``{"format":
"benchforge-release/2", "identity": <identity>, "items": [[public_id, item hash, listing
hash], ...]}`` sorted by public id. The item hashes themselves are unchanged (an item's
problem and tests), so changelogs and errata compare items across formats. Errata are not
hashed: they are added after publication by design.

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

FORMAT_V1 = "benchforge-release/1"
FORMAT_V2 = "benchforge-release/2"
FORMAT = FORMAT_V2  # what a release frozen now is hashed with
HASH_FORMATS = (FORMAT_V1, FORMAT_V2)
QUESTION_FORMAT = "benchforge-question/1"
QUESTION_CONTENT_FIELDS = (
    "format",
    "public_id",
    "reasoning_type",
    "difficulty",
    "question",
    "reference_answer",
)
# A reference's provenance (where it came from: a solutions file, a calibration attempt, …)
# is the database's bookkeeping, not the release's content: the release carries its own.
_NOT_CONTENT = ("format", "problem_set", "member", "tests", "reference_provenance")
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
    """Hash format 1. ``item_hashes``: (public_id, item hash) pairs in any order."""
    return sha256(canonical_json({"format": FORMAT_V1, "items": sorted(map(list, item_hashes))}))


def release_identity(release, *, previous_version: str | None = None) -> dict:
    """What the card and the exports show of the release as a whole (hash format 2)."""
    bench = release.benchmark
    if previous_version is None and release.previous_id:
        previous_version = release.previous.version
    return {
        "benchmark": {
            "slug": bench.slug,
            "name": bench.name,
            "license": bench.license,
            "description": bench.description,
        },
        "version": release.version,
        "notes": release.notes,
        "gate_rules": release.gate_rules or {},
        "previous": previous_version,
        "sources": {
            "campaigns": sorted([c.pk, c.name] for c in release.campaigns.all()),
            "problem_sets": sorted([p.pk, p.name] for p in release.problem_sets.all()),
        },
    }


def item_listing(item) -> dict:
    """What an export line and the release pages show of a coding item besides its problem
    and tests (hash format 2)."""
    return {
        "position": item.position,
        "title": item.title,
        "origin": item.origin,
        "difficulty": item.difficulty,
        "tags": list(item.tags or []),
        "created_on": item.created_on.isoformat() if item.created_on else None,
        "gate_passed": item.gate_passed,
        "curator_note": item.curator_note,
        "provenance": item.provenance or {},
    }


def question_listing(question) -> dict:
    """The same for a question (its record is hashed as the item itself); its kind is the one
    of the problem source its item comes from."""
    from evolution.sources import source_for_model

    kind = source_for_model(type(question)._meta.get_field("reasoning_item").related_model).kind
    return {
        "position": question.position,
        "kind": kind,
        "curator_note": question.curator_note,
        "provenance": question.provenance or {},
    }


def listing_hash(listing: dict) -> str:
    return sha256(canonical_json(listing))


def release_hash_v2(identity: dict, entries: Iterable[tuple[str, str, str]]) -> str:
    """Hash format 2. ``entries``: (public_id, item hash, listing hash) in any order."""
    return sha256(
        canonical_json(
            {"format": FORMAT_V2, "identity": identity, "items": sorted(map(list, entries))}
        )
    )


def compute_release_hash(release, *, items=None, questions=None, hash_format=None) -> str:
    """The hash of ``release`` as stored now (``items`` / ``questions``: the rows to hash,
    default the release's own), in ``hash_format`` (default: the release's own format)."""
    hash_format = hash_format or release_hash_format(release)
    items = list(release.items.all()) if items is None else list(items)
    questions = list(release.questions.all()) if questions is None else list(questions)
    if hash_format == FORMAT_V1:
        pairs = [(i.public_id, i.content_hash) for i in items]
        pairs += [(q.public_id, q.content_hash) for q in questions]
        return release_hash(pairs)
    entries = [(i.public_id, i.content_hash, listing_hash(item_listing(i))) for i in items]
    entries += [(q.public_id, q.content_hash, listing_hash(question_listing(q))) for q in questions]
    return release_hash_v2(release_identity(release), entries)


def release_hash_format(release) -> str:
    """The stored format; a draft will be hashed in the current one; a release frozen before
    hash format 2 has no stored format: it is format 1."""
    stored = getattr(release, "hash_format", None)
    if stored:
        return stored
    return FORMAT if getattr(release, "state", None) == "draft" else FORMAT_V1


def verify(release) -> bool:
    """True when the release's stored hash is what its stored rows hash to, in its format."""
    return bool(release.content_hash) and compute_release_hash(release) == release.content_hash


def release_hash_from_lines(lines: Iterable[str]) -> str:
    """Recompute a release's hash from its project JSONL export (lines carrying a
    ``benchforge-problem/1`` record under "problem", or a ``benchforge-question/1`` record
    under "question"): anyone holding the export can check it against the published hash.
    Lines of a format-2 release carry ``hash_format`` and the ``release_identity``; lines
    without them are format 1."""
    pairs, entries = [], []
    identity, hash_format = None, FORMAT_V1
    for line in lines:
        if not line.strip():
            continue
        row = json.loads(line)
        hash_format = row.get("hash_format", FORMAT_V1)
        identity = row.get("release_identity", identity)
        if "question" in row:
            record = row["question"]
            digest = question_hash(record)
            listing = {k: row.get(k) for k in ("position", "kind", "curator_note", "provenance")}
        else:
            problem = row["problem"]
            record = {k: v for k, v in problem.items() if k not in _NOT_CONTENT}
            digest = item_hash(record, problem.get("tests", []))
            listing = {k: row.get(k) for k in ITEM_LISTING_FIELDS}
        pairs.append((record["public_id"], digest))
        entries.append((record["public_id"], digest, listing_hash(listing)))
    if hash_format == FORMAT_V1:
        return release_hash(pairs)
    return release_hash_v2(identity, entries)


ITEM_LISTING_FIELDS = (
    "position",
    "title",
    "origin",
    "difficulty",
    "tags",
    "created_on",
    "gate_passed",
    "curator_note",
    "provenance",
)
