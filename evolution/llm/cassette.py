"""Cassettes: recorded model exchanges replayed for offline demos and tests.

A cassette is a JSONL file, one exchange per line::

    {"role": "solver", "key": "<replay_key or ''>", "fingerprint": "<sha256>",
     "response": {"content": "...", "tokens_in": 12, "tokens_out": 34}}

``fingerprint`` is the sha256 of the canonical JSON of ``{"model", "messages"}``. Lookup
(``Cassette.find``): an exchange matching the fingerprint and the key, else the first one
matching the fingerprint, else the first one matching role and key. The first rule keeps
repeated identical prompts (K solver attempts) apart by their keys. Keys written in an older
format are read in the current one (``key_upgrade``).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from evolution.policy import secrets

from .errors import LLMError


def canonical_json(value) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def fingerprint(*, model: str, messages: list[dict]) -> str:
    """sha256 of the canonical JSON of ``{"model": model, "messages": messages}``."""
    return hashlib.sha256(
        canonical_json({"model": model, "messages": messages}).encode("utf-8")
    ).hexdigest()


def resolve_path(cassette: str) -> Path:
    """An endpoint's cassette path; relative paths resolve against settings.LLM_CASSETTE_DIR.

    LLMError when the path leads outside the cassette roots (``evolution.policy.secrets``)."""
    path = secrets.cassette_resolve(cassette)
    if path is None:
        raise LLMError(f"cassette {cassette!r} refused: {secrets.cassette_problem(cassette)}")
    return path


# Replay-key formats older than the one format (``<scope>;<key>;role=<role>``,
# ``evolution.streams.context.replay_key``), by the scope that wrote them: X-Coder's calls were
# keyed ``xcoder;<key>`` without the role until the step contexts shared one ``chat``.
LEGACY_SCOPES_WITHOUT_ROLE = ("xcoder;",)


def key_upgrade(role: str, key: str) -> str:
    """``key`` as the one replay-key format has it: a cassette recorded under an older format
    replays unchanged (each line names its role, which the older key left out)."""
    if key.startswith(LEGACY_SCOPES_WITHOUT_ROLE) and ";role=" not in key:
        return f"{key};role={role}"
    return key


@dataclass(frozen=True)
class Recorded:
    content: str
    tokens_in: int
    tokens_out: int


class Cassette:
    """The parsed, indexed content of one cassette file."""

    def __init__(self, path: Path, lines: list[str]):
        self.path = path
        self._by_fp_key: dict[tuple[str, str], Recorded] = {}
        self._by_fp: dict[str, Recorded] = {}
        self._by_role_key: dict[tuple[str, str], Recorded] = {}
        self.size = 0
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                response = row["response"]
                recorded = Recorded(
                    content=str(response["content"]),
                    tokens_in=int(response.get("tokens_in", 0)),
                    tokens_out=int(response.get("tokens_out", 0)),
                )
                role, fp = str(row["role"]), str(row["fingerprint"])
                key = key_upgrade(role, str(row.get("key", "")))
            except (ValueError, KeyError, TypeError) as exc:
                raise LLMError(f"cassette {path} line {number} is malformed: {exc}") from exc
            # First recording wins: replay returns what the original run saw first.
            self._by_fp_key.setdefault((fp, key), recorded)
            self._by_fp.setdefault(fp, recorded)
            self._by_role_key.setdefault((role, key), recorded)
            self.size += 1

    def find(self, *, role: str, key: str, fp: str) -> Recorded | None:
        return (
            self._by_fp_key.get((fp, key))
            or self._by_fp.get(fp)
            or self._by_role_key.get((role, key))
        )


_cache: dict[str, tuple[tuple[int, int], Cassette]] = {}
_cache_lock = threading.Lock()


def load(path: Path) -> Cassette:
    """The parsed cassette at ``path``, cached per process and re-read when the file changes."""
    try:
        stat = path.stat()
    except FileNotFoundError:
        raise LLMError(f"cassette {path} does not exist")
    stamp = (stat.st_mtime_ns, stat.st_size)
    cached = _cache.get(str(path))
    if cached is not None and cached[0] == stamp:
        return cached[1]
    with _cache_lock:
        cached = _cache.get(str(path))
        if cached is not None and cached[0] == stamp:
            return cached[1]
        with open(path, encoding="utf-8") as handle:
            # A shared lock waits out a recording worker's half-written line.
            fcntl.flock(handle.fileno(), fcntl.LOCK_SH)
            try:
                lines = handle.readlines()
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
        cassette = Cassette(path, lines)
        _cache[str(path)] = (stamp, cassette)
        return cassette


def append(
    path: Path, *, role: str, key: str, fp: str, content: str, tokens_in: int, tokens_out: int
) -> None:
    """Append one exchange; an exclusive fcntl lock keeps concurrent workers' lines whole."""
    path.parent.mkdir(parents=True, exist_ok=True)
    line = canonical_json(
        {
            "role": role,
            "key": key,
            "fingerprint": fp,
            "response": {"content": content, "tokens_in": tokens_in, "tokens_out": tokens_out},
        }
    )
    with open(path, "a", encoding="utf-8") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            handle.write(line + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
